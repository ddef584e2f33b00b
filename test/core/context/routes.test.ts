/**
 * Route extraction per framework: through tree-sitter for Python, TypeScript, Go and Java, by
 * regular expressions for Kotlin, GraphQL schemas and `.proto` files, and the fallback when no
 * parser is at hand. Also the annotations that attach code to components.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAnnotations, fileAnnotations } from '../../../src/core/context/annotations';
import { extractRoutes, MAX_ROUTES_PER_FILE } from '../../../src/core/context/routes';
import { createCodeParser, type CodeParser } from '../../../src/core/parse/parser';
import type { ChunkRow, SymbolRow } from '../../../src/core/store/store';

const show = (routes: ReturnType<typeof extractRoutes>) => routes.map((r) => `${r.method} ${r.path} ${r.handler} ${r.framework} :${r.line}`);

describe('route extraction', () => {
  let parser: CodeParser;
  beforeAll(async () => {
    parser = await createCodeParser();
  });
  afterAll(() => parser.dispose());

  it('reads Flask routes with their methods and a blueprint prefix', () => {
    const src = ['from flask import Blueprint', 'bp = Blueprint("users", __name__, url_prefix="/users")', '', '@bp.route("/<int:id>", methods=["GET", "DELETE"])', 'def user(id):', '    pass', '', '# @bp.route("/commented")', ''].join('\n');
    expect(show(extractRoutes('app.py', 'python', src, parser))).toEqual(['GET /users/<int:id> user flask :4', 'DELETE /users/<int:id> user flask :4']);
  });

  it('reads Strawberry and Ariadne GraphQL fields', () => {
    const straw = ['import strawberry', '', '@strawberry.type', 'class Query:', '    @strawberry.field', '    def user(self) -> str:', '        return "x"', '', '@strawberry.type', 'class Mutation:', '    @strawberry.mutation', '    def add_user(self) -> str:', '        return "x"', ''].join('\n');
    expect(show(extractRoutes('schema.py', 'python', straw, parser))).toEqual(['QUERY user user strawberry :5', 'MUTATION add_user add_user strawberry :11']);
    const ari = ['from ariadne import QueryType', 'query = QueryType()', '', '@query.field("hello")', 'def resolve_hello(*_):', '    return "hi"', ''].join('\n');
    expect(show(extractRoutes('resolvers.py', 'python', ari, parser))).toEqual(['QUERY hello resolve_hello ariadne :4']);
  });

  it('reads NestJS controllers and TypeGraphQL resolvers', () => {
    const nest = ["import { Controller, Get, Post } from '@nestjs/common';", '', "@Controller('users')", 'export class UsersController {', "  @Get(':id')", '  findOne() {}', '', '  @Post()', '  @HttpCode(201)', '  create() {}', '}', ''].join('\n');
    expect(show(extractRoutes('users.controller.ts', 'typescript', nest, parser))).toEqual(['GET /users/:id findOne nestjs :5', 'POST /users create nestjs :8']);
    const tg = ["import { Resolver, Query, Mutation } from 'type-graphql';", '', '@Resolver()', 'class RecipeResolver {', '  @Query(() => [Recipe])', '  recipes() {}', '  @Mutation(() => Recipe)', '  addRecipe() {}', '}', ''].join('\n');
    expect(show(extractRoutes('recipe.ts', 'typescript', tg, parser))).toEqual(['QUERY recipes recipes type-graphql :5', 'MUTATION addRecipe addRecipe type-graphql :7']);
  });

  it('leaves HTTP client calls and lookups alone: a route has a handler after its path', () => {
    const client = ["import axios from 'axios';", "axios.get('/api/users', { params: { a: 1 } });", "cache.get('/settings');", "app.get('/real', (req, res) => res.end());", ''].join('\n');
    expect(show(extractRoutes('client.ts', 'typescript', client, parser))).toEqual(['GET /real <inline> express :4']);
  });

  it('stays linear on adversarial files, and stops at the cap', () => {
    const py = ['from fastapi import APIRouter', `${'x'.repeat(20_000)} = 1`, 'router = APIRouter(prefix="/p")', ...Array.from({ length: 2000 }, (_, i) => `@router.get("/r${i}")\ndef h${i}(): pass`)].join('\n');
    expect(extractRoutes('big.py', 'python', py, parser)).toHaveLength(MAX_ROUTES_PER_FILE);
    expect(extractRoutes('big.py', 'python', py, undefined)).toHaveLength(MAX_ROUTES_PER_FILE);
    expect(extractRoutes('q.graphql', 'schema', 'type Query '.repeat(20_000), undefined)).toEqual([]);
    expect(extractRoutes('s.proto', 'schema', 'service X {\n  rpc A (B) returns (C);\n'.repeat(5_000), undefined)).toHaveLength(MAX_ROUTES_PER_FILE);
    expect(extractRoutes('long.js', 'javascript', `app.get('/x', ${'a'.repeat(50_000)}`, undefined)).toHaveLength(1);
  });

  it('reads Gin, Echo and Fiber routes, with group prefixes, and leaves other calls alone', () => {
    const gin = ['package main', '', 'import "github.com/gin-gonic/gin"', '', 'func main() {', '\tr := gin.Default()', '\tv1 := r.Group("/v1")', '\tv1.GET("/ping", ping)', '\tr.POST("/login", handlers.Login)', '\tq.Get("not/a/route")', '}', ''].join('\n');
    expect(show(extractRoutes('main.go', 'go', gin, parser))).toEqual(['GET /v1/ping ping gin :8', 'POST /login handlers.Login gin :9']);
    const fiber = ['package main', 'import "github.com/gofiber/fiber/v2"', 'func main() {', '\tapp := fiber.New()', '\tapp.Get("/", func(c *fiber.Ctx) error { return nil })', '}', ''].join('\n');
    expect(show(extractRoutes('f.go', 'go', fiber, parser))).toEqual(['GET / <inline> fiber :5']);
    const echo = ['package main', 'import "github.com/labstack/echo/v4"', 'func main() {', '\te := echo.New()', '\te.PUT("/users/:id", updateUser)', '}', ''].join('\n');
    expect(show(extractRoutes('e.go', 'go', echo, parser))).toEqual(['PUT /users/:id updateUser echo :5']);
    const plain = ['package x', 'import "net/http"', 'func f() { http.Get("/x"); http.HandleFunc("/hello", hello) }', ''].join('\n');
    expect(show(extractRoutes('x.go', 'go', plain, parser))).toEqual(['* /hello hello net/http :3']);
  });

  it('reads Spring mappings with the class prefix, in Java and (by expression) Kotlin', () => {
    const java = ['@RestController', '@RequestMapping("/api")', 'class UserController {', '  @GetMapping("/users/{id}")', '  public User get(@PathVariable long id) { return null; }', '  @RequestMapping(value = "/users", method = RequestMethod.POST)', '  public User create() { return null; }', '}', ''].join('\n');
    expect(show(extractRoutes('UserController.java', 'java', java, parser))).toEqual(['GET /api/users/{id} get spring :4', 'POST /api/users create spring :6']);
    const kt = ['@RestController', 'class C {', '  @PostMapping("/orders")', '  fun create(): Order = Order()', '}', ''].join('\n');
    expect(show(extractRoutes('C.kt', 'kotlin', kt, parser))).toEqual(['POST /orders create spring :3']);
  });

  it('reads GraphQL schema files and gRPC services', () => {
    const gql = ['type Query {', '  user(id: ID!): User', '  users: [User]', '}', '', 'extend type Mutation {', '  addUser(name: String): User', '}', ''].join('\n');
    expect(show(extractRoutes('schema.graphql', 'schema', gql, undefined))).toEqual(['QUERY user user graphql-schema :2', 'QUERY users users graphql-schema :3', 'MUTATION addUser addUser graphql-schema :7']);
    const proto = ['syntax = "proto3";', 'service Auth {', '  rpc Login (LoginRequest) returns (LoginReply);', '  rpc Logout (Empty) returns (Empty);', '}', ''].join('\n');
    expect(show(extractRoutes('auth.proto', 'schema', proto, undefined))).toEqual(['RPC Auth/Login Login grpc :3', 'RPC Auth/Logout Logout grpc :4']);
  });

  it('falls back to expressions without a parser, and caps a file at 100 routes', () => {
    const py = ['from fastapi import FastAPI', 'app = FastAPI()', '', '@app.get("/items/{id}")', 'async def read_item(id):', '    return id', ''].join('\n');
    expect(show(extractRoutes('main.py', 'python', py, undefined))).toEqual(['GET /items/{id} read_item fastapi :4']);
    const many = ["const app = require('express')();", ...Array.from({ length: 150 }, (_, i) => `app.get('/r${i}', h${i});`)].join('\n');
    expect(extractRoutes('big.js', 'javascript', many, parser)).toHaveLength(MAX_ROUTES_PER_FILE);
  });
});

describe('annotations', () => {
  it('reads vlt:key=value only in comments', () => {
    expect(parseAnnotations('// vlt:component=auth vlt:owner="team a"')).toEqual({ component: 'auth', owner: 'team a' });
    expect(parseAnnotations('# vlt:entity=User')).toEqual({ entity: 'User' });
    expect(parseAnnotations('const s = "vlt:component=auth";')).toEqual({});
  });

  it('applies one before the first definition to the file, and one just above a definition to it', () => {
    const text = ['# vlt:component=billing', 'import os', '', 'def pay():', '    pass', '', '# vlt:owner=payments', 'def charge():', '    pass', '', 'def refund():', '    """vlt:component=refunds"""', '    x = 1', '    y = 2', '    z = 3', '    # vlt:ignored=yes', '    pass', ''].join('\n');
    const chunks = [{ id: 1, fileId: 1, path: 'a.py', language: 'python', startLine: 1, endLine: 18, kind: 'block', text, hash: 'h' } as ChunkRow];
    const sym = (id: number, name: string, startLine: number, endLine: number) => ({ id, fileId: 1, path: 'a.py', name, qualifiedName: name, kind: 'function', signature: name, startLine, endLine }) as SymbolRow;
    const found = fileAnnotations(chunks, [sym(1, 'pay', 4, 5), sym(2, 'charge', 8, 9), sym(3, 'refund', 11, 17)]);
    expect(found.file).toEqual({ component: 'billing' });
    expect(found.symbols.has(1)).toBe(false);
    expect(found.symbols.get(2)).toEqual({ owner: 'payments' });
    expect(found.symbols.get(3)).toEqual({ component: 'refunds' });
    // A header right above the first definition is still the file's.
    const header = fileAnnotations([{ ...chunks[0]!, text: '// vlt:component=pay\nexport class Invoice {}\n' }], [sym(1, 'Invoice', 2, 2)]);
    expect(header.file).toEqual({ component: 'pay' });
    expect(header.symbols.size).toBe(0);
  });
});
