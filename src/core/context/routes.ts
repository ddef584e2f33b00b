/**
 * API routes: HTTP endpoints, GraphQL fields and gRPC methods, each with its method, path,
 * handler, file, line and framework.
 *
 * Source files go through tree-sitter (`queries/routes/<language>.scm` finds the decorated
 * definitions, calls and annotations; the code here reads them): Python (FastAPI, Flask,
 * Strawberry, Ariadne), TypeScript and JavaScript (Express-style routers, NestJS, TypeGraphQL),
 * Go (Gin, Echo, Fiber, net/http) and Java (Spring). Kotlin (Spring), GraphQL schema files and
 * `.proto` services, which have no grammar here, are read with regular expressions, and so is a
 * source file whose grammar cannot be loaded. At most {@link MAX_ROUTES_PER_FILE} per file.
 */
import type { Node } from 'web-tree-sitter';
import type { CodeParser } from '../parse/parser';
import type { LanguageId } from '../types';
import type { Route } from './model';

export const MAX_ROUTES_PER_FILE = 100;

const HTTP_VERBS = new Set(['get', 'post', 'put', 'delete', 'patch', 'head', 'options', 'all']);
const GO_ROUTE_METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'Any', 'Get', 'Post', 'Put', 'Delete', 'Patch', 'Head', 'Options', 'All', 'HandleFunc', 'Handle']);
const NEST_VERBS = new Set(['Get', 'Post', 'Put', 'Delete', 'Patch', 'Head', 'Options', 'All']);
const GRAPHQL_OPS = new Set(['Query', 'Mutation', 'Subscription']);
const SPRING_MAPPINGS: Readonly<Record<string, string>> = { GetMapping: 'GET', PostMapping: 'POST', PutMapping: 'PUT', DeleteMapping: 'DELETE', PatchMapping: 'PATCH', RequestMapping: '*' };

/** Text a file must hold for routes to be looked for in it (checked on the index before parsing). */
export const ROUTE_HINTS: readonly string[] = [
  "('/",
  '("/',
  '(`/',
  'Mapping(',
  '.field(',
  'strawberry.',
  '@Query(',
  '@Mutation(',
  '@Subscription(',
  '@Controller(',
];

/** File names read with regular expressions although no language indexes them. */
export const SCHEMA_FILES = /\.(proto|graphql|gql|graphqls)$/i;

/** The routes of one file: through its grammar when there is one, else by regular expressions. */
export function extractRoutes(file: string, language: LanguageId | 'kotlin' | 'schema', text: string, parser: CodeParser | undefined): Route[] {
  let routes: Route[] | undefined;
  if (parser && (language === 'python' || language === 'typescript' || language === 'tsx' || language === 'javascript' || language === 'go' || language === 'java')) {
    try {
      routes = treeRoutes(file, language, text, parser);
    } catch {
      routes = undefined;
    }
  }
  routes ??= regexRoutes(file, language, text);
  return routes.slice(0, MAX_ROUTES_PER_FILE);
}

// ---------------------------------------------------------------------------------------------
// Through tree-sitter
// ---------------------------------------------------------------------------------------------

/** What a file says once, for all its matches: its framework imports and its router prefixes. */
interface FileFacts {
  text: string;
  prefixes: Map<string, string>;
  imports: (re: RegExp) => boolean;
}

function factsOf(text: string): FileFacts {
  const seen = new Map<string, boolean>();
  return {
    text,
    prefixes: prefixes(text),
    imports: (re) => {
      let v = seen.get(re.source);
      if (v === undefined) seen.set(re.source, (v = re.test(text)));
      return v;
    },
  };
}

function treeRoutes(file: string, language: LanguageId, text: string, parser: CodeParser): Route[] | undefined {
  const query = parser.extraQuery('routes', language);
  if (!query) return undefined;
  const out: Route[] = [];
  const add = (r: Omit<Route, 'file'>) => {
    if (out.length < MAX_ROUTES_PER_FILE) out.push({ ...r, file });
  };
  const facts = factsOf(text);
  parser.withTree(language, text, (root) => {
    for (const m of query.matches(root)) {
      if (out.length >= MAX_ROUTES_PER_FILE) break;
      const cap = (name: string) => m.captures.find((c) => c.name === name)?.node;
      if (language === 'python') {
        const d = cap('decorated');
        if (d) pythonRoutes(d, facts, add);
      } else if (language === 'go') {
        const call = cap('call');
        const method = cap('method');
        const p = cap('path');
        if (call && method && p) goRoute(call, method.text, unquote(p.text), facts, add);
      } else if (language === 'java') {
        const a = cap('annotation');
        const name = cap('name');
        if (a && name) springRoute(a, name.text, add);
      } else {
        const call = cap('call');
        const dec = cap('decorator');
        if (call) {
          const method = cap('method');
          const p = cap('path');
          if (method && p) expressRoute(call, method.text, unquote(p.text), facts, add);
        } else if (dec) decoratorRoute(dec, facts, add);
      }
    }
  });
  return out;
}

type Add = (r: Omit<Route, 'file'>) => void;

function unquote(s: string): string {
  return s.replace(/^[rbuf]*(["'`]{1,3})([\s\S]*)\1$/i, '$2');
}

function line(n: Node): number {
  return n.startPosition.row + 1;
}

/** `prefix` + `path`, with one slash between. */
function joinRoute(prefix: string, p: string): string {
  if (!prefix) return p || '/';
  if (!p) return prefix;
  return `${prefix.replace(/\/+$/, '')}/${p.replace(/^\/+/, '')}`;
}

/** Router variables with a prefix: `router = APIRouter(prefix="/items")`, `bp = Blueprint(..., url_prefix="/x")`, `g := r.Group("/v1")`. */
function prefixes(text: string): Map<string, string> {
  const out = new Map<string, string>();
  // Bounded names and a cheap check first: a long identifier must not make these scans quadratic.
  if (text.includes('APIRouter(') || text.includes('Blueprint(')) {
    for (const m of text.matchAll(/\b(\w{1,100})[ \t]*=[ \t]*(?:\w{1,100}\.)?(?:APIRouter|Blueprint)\(([^)]{0,400})\)/g)) {
      const p = /(?:url_)?prefix\s*=\s*["']([^"']{0,400})["']/.exec(m[2]!);
      if (p) out.set(m[1]!, p[1]!);
    }
  }
  if (text.includes('.Group(')) {
    for (const m of text.matchAll(/\b(\w{1,100})[ \t]*:?=[ \t]*(\w{1,100})\.Group\([ \t]*"([^"\n]{0,400})"/g)) out.set(m[1]!, joinRoute(out.get(m[2]!) ?? '', m[3]!));
  }
  return out;
}

function pythonRoutes(decorated: Node, facts: FileFacts, add: Add): void {
  const def = decorated.childForFieldName('definition');
  const handler = def?.childForFieldName('name')?.text ?? '';
  if (!def || def.type !== 'function_definition') return;
  const framework = facts.imports(/^[ \t]*(from|import)[ \t]+fastapi\b/m) ? 'fastapi' : facts.imports(/^[ \t]*(from|import)[ \t]+flask\b/m) ? 'flask' : undefined;
  for (const d of decorated.namedChildren) {
    if (d?.type !== 'decorator') continue;
    const expr = d.namedChildren[0];
    if (!expr) continue;
    const fn = expr.type === 'call' ? expr.childForFieldName('function') : expr;
    if (fn?.type !== 'attribute') continue;
    const obj = fn.childForFieldName('object')?.text ?? '';
    const attr = fn.childForFieldName('attribute')?.text ?? '';
    const args = expr.type === 'call' ? expr.childForFieldName('arguments') : undefined;
    const first = args?.namedChildren.find((a) => a?.type === 'string');
    const argText = args?.text ?? '';
    if (obj === 'strawberry' || obj.endsWith('.strawberry')) {
      if (!['field', 'mutation', 'subscription'].includes(attr)) continue;
      const cls = enclosingClass(decorated);
      const op = attr === 'mutation' ? 'MUTATION' : attr === 'subscription' ? 'SUBSCRIPTION' : /mutation/i.test(cls) ? 'MUTATION' : /subscription/i.test(cls) ? 'SUBSCRIPTION' : 'QUERY';
      add({ method: op, path: handler, handler, line: line(decorated), framework: 'strawberry' });
      continue;
    }
    if (attr === 'field' && first) {
      const op = /mutation/i.test(obj) ? 'MUTATION' : /subscription/i.test(obj) ? 'SUBSCRIPTION' : /query/i.test(obj) ? 'QUERY' : 'FIELD';
      add({ method: op, path: unquote(first.text), handler, line: line(decorated), framework: 'ariadne' });
      continue;
    }
    if (!first) continue;
    const path = joinRoute(facts.prefixes.get(obj) ?? '', unquote(first.text));
    if (!path.startsWith('/')) continue;
    if (HTTP_VERBS.has(attr)) add({ method: attr === 'all' ? '*' : attr.toUpperCase(), path, handler, line: line(decorated), framework: framework ?? 'fastapi' });
    else if (attr === 'websocket') add({ method: 'WS', path, handler, line: line(decorated), framework: 'fastapi' });
    else if (attr === 'route' || attr === 'api_route') {
      const methods = /methods\s*=\s*[[(]([^\])]*)[\])]/.exec(argText)?.[1];
      const list = methods ? [...methods.matchAll(/["'](\w+)["']/g)].map((x) => x[1]!.toUpperCase()) : [attr === 'route' ? 'GET' : '*'];
      for (const m of list) add({ method: m, path, handler, line: line(decorated), framework: framework ?? (attr === 'route' ? 'flask' : 'fastapi') });
    }
  }
}

function enclosingClass(n: Node): string {
  for (let p = n.parent; p; p = p.parent) if (p.type === 'class_definition' || p.type === 'class_declaration') return p.childForFieldName('name')?.text ?? '';
  return '';
}

/** What may handle a route: a named function, a method, an inline function, or a middleware call. */
const HANDLER_TYPES = new Set(['identifier', 'member_expression', 'arrow_function', 'function_expression', 'function', 'call_expression']);

function expressRoute(call: Node, method: string, path: string, facts: FileFacts, add: Add): void {
  if (!HTTP_VERBS.has(method) || !(path.startsWith('/') || path === '*')) return;
  const args = call.childForFieldName('arguments')?.namedChildren ?? [];
  const last = args[args.length - 1];
  // A route has a handler after its path; `axios.get('/api', config)` and `cache.get('/key')` do not.
  if (!last || args.length < 2 || !HANDLER_TYPES.has(last.type)) return;
  const handler = last.type === 'identifier' || last.type === 'member_expression' ? last.text : '<inline>';
  const framework = facts.imports(/['"]fastify['"]/) ? 'fastify' : facts.imports(/['"]hono['"]/) ? 'hono' : facts.imports(/['"](@koa\/router|koa-router)['"]/) ? 'koa' : 'express';
  add({ method: method === 'all' ? '*' : method.toUpperCase(), path, handler, line: line(call), framework });
}

/** NestJS route decorators (`@Get(':id')` under `@Controller('users')`) and GraphQL resolvers (`@Query(() => User)`). */
function decoratorRoute(dec: Node, facts: FileFacts, add: Add): void {
  const call = dec.namedChildren[0];
  if (call?.type !== 'call_expression') return;
  const name = call.childForFieldName('function')?.text ?? '';
  const isVerb = NEST_VERBS.has(name);
  if (!isVerb && !GRAPHQL_OPS.has(name)) return;
  // The method it decorates: the next method definition among the decorator's siblings.
  let method: Node | null = dec.nextNamedSibling;
  while (method && method.type === 'decorator') method = method.nextNamedSibling;
  if (method?.type !== 'method_definition') return;
  const handler = method.childForFieldName('name')?.text ?? '';
  const arg = call.childForFieldName('arguments')?.namedChildren.find((a) => a?.type === 'string');
  if (isVerb) {
    const prefix = controllerPrefix(dec);
    if (prefix === undefined) return;
    add({ method: name === 'All' ? '*' : name.toUpperCase(), path: joinRoute(`/${prefix.replace(/^\/+/, '')}`, arg ? unquote(arg.text) : ''), handler, line: line(dec), framework: 'nestjs' });
  } else {
    const framework = facts.imports(/['"]type-graphql['"]/) ? 'type-graphql' : facts.imports(/['"]@nestjs\/graphql['"]/) ? 'nestjs-graphql' : undefined;
    if (!framework) return;
    add({ method: name.toUpperCase(), path: arg ? unquote(arg.text) : handler, handler, line: line(dec), framework });
  }
}

/** The `@Controller('prefix')` of the class a decorator's method is in; undefined when the class is no controller. */
function controllerPrefix(dec: Node): string | undefined {
  for (let p = dec.parent; p; p = p.parent) {
    if (p.type !== 'class_declaration' && p.type !== 'class') continue;
    const holders = [p, p.parent?.type === 'export_statement' ? p.parent : null];
    for (const h of holders) {
      for (const d of h?.namedChildren ?? []) {
        if (d?.type !== 'decorator') continue;
        const c = d.namedChildren[0];
        const fn = c?.type === 'call_expression' ? c.childForFieldName('function')?.text : c?.text;
        if (fn !== 'Controller') continue;
        const arg = c?.type === 'call_expression' ? c.childForFieldName('arguments')?.namedChildren.find((a) => a?.type === 'string') : undefined;
        return arg ? unquote(arg.text) : '';
      }
    }
    return undefined;
  }
  return undefined;
}

function goRoute(call: Node, method: string, path: string, facts: FileFacts, add: Add): void {
  if (!GO_ROUTE_METHODS.has(method) || !path.startsWith('/')) return;
  const framework = facts.imports(/"github\.com\/gin-gonic\/gin"/) ? 'gin' : facts.imports(/"github\.com\/labstack\/echo/) ? 'echo' : facts.imports(/"github\.com\/gofiber\/fiber/) ? 'fiber' : facts.imports(/"net\/http"/) ? 'net/http' : undefined;
  if (!framework) return;
  if (framework === 'net/http' && method !== 'HandleFunc' && method !== 'Handle') return;
  const fn = call.childForFieldName('function');
  const obj = fn?.childForFieldName('operand')?.text ?? '';
  const args = call.childForFieldName('arguments')?.namedChildren ?? [];
  const last = args[args.length - 1];
  const handler = last && args.length > 1 && (last.type === 'identifier' || last.type === 'selector_expression') ? last.text : '<inline>';
  const verb = method === 'HandleFunc' || method === 'Handle' || method === 'Any' || method === 'All' ? '*' : method.toUpperCase();
  add({ method: verb, path: joinRoute(facts.prefixes.get(obj) ?? '', path), handler, line: line(call), framework });
}

function springRoute(annotation: Node, name: string, add: Add): void {
  const verb = SPRING_MAPPINGS[name];
  if (!verb) return;
  const owner = annotation.parent?.type === 'modifiers' ? annotation.parent.parent : null;
  if (owner?.type !== 'method_declaration') return;
  const path = annotationPath(annotation);
  const cls = owner.parent?.parent;
  let prefix = '';
  for (const m of cls?.type === 'class_declaration' ? (cls.namedChildren.find((c) => c?.type === 'modifiers')?.namedChildren ?? []) : []) {
    if (m?.type === 'annotation' && m.childForFieldName('name')?.text === 'RequestMapping') prefix = annotationPath(m);
  }
  const method = verb === '*' ? (/RequestMethod\.(\w+)/.exec(annotation.text)?.[1] ?? '*') : verb;
  add({ method, path: joinRoute(prefix, path) || '/', handler: owner.childForFieldName('name')?.text ?? '', line: line(annotation), framework: 'spring' });
}

function annotationPath(a: Node): string {
  const args = a.childForFieldName('arguments');
  const s = /"([^"]*)"/.exec(args?.text ?? '');
  return s ? s[1]! : '';
}

// ---------------------------------------------------------------------------------------------
// By regular expressions
// ---------------------------------------------------------------------------------------------

/** The 1-based line of an offset, by binary search over the text's line starts (computed once per text). */
function lineFinder(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

function regexRoutes(file: string, language: LanguageId | 'kotlin' | 'schema', text: string): Route[] {
  const out: Route[] = [];
  const push = (r: Omit<Route, 'file'>) => {
    if (out.length < MAX_ROUTES_PER_FILE) out.push({ ...r, file });
  };
  const lower = file.toLowerCase();
  const lineAt = lineFinder(text);
  if (lower.endsWith('.proto')) {
    // Each service's body runs to the next line that closes a block; the scan moves on from there.
    const re = /\bservice[ \t]+(\w{1,200})[ \t]*\{/g;
    for (let m = re.exec(text); m && out.length < MAX_ROUTES_PER_FILE; m = re.exec(text)) {
      const start = m.index + m[0].length;
      const close = text.indexOf('\n}', start);
      const end = close < 0 ? text.length : close;
      for (const rpc of text.slice(start, end).matchAll(/\brpc[ \t]+(\w{1,200})[ \t]*\(/g)) {
        push({ method: 'RPC', path: `${m[1]}/${rpc[1]}`, handler: rpc[1]!, line: lineAt(start + rpc.index), framework: 'grpc' });
      }
      re.lastIndex = end;
    }
    return out;
  }
  if (SCHEMA_FILES.test(lower)) {
    const re = /\b(?:extend[ \t]+)?type[ \t]+(Query|Mutation|Subscription)\b[^{}\n]{0,200}\{/g;
    for (let t = re.exec(text); t && out.length < MAX_ROUTES_PER_FILE; t = re.exec(text)) {
      const start = t.index + t[0].length;
      const close = text.indexOf('}', start);
      const end = close < 0 ? text.length : close;
      for (const f of text.slice(start, end).matchAll(/^[ \t]*(\w{1,200})[ \t]*[(:]/gm)) {
        push({ method: t[1]!.toUpperCase(), path: f[1]!, handler: f[1]!, line: lineAt(start + f.index + f[0].indexOf(f[1]!)), framework: 'graphql-schema' });
      }
      re.lastIndex = end;
    }
    return out;
  }
  if (language === 'kotlin' || language === 'java') {
    const re = /@(Get|Post|Put|Delete|Patch|Request)Mapping[ \t]*(?:\(([^)]{0,400})\))?[\s\S]{0,300}?\bfun[ \t]+(\w{1,200})|@(Get|Post|Put|Delete|Patch|Request)Mapping[ \t]*(?:\(([^)]{0,400})\))?[\s\S]{0,300}?\b(\w{1,200})[ \t]*\(/g;
    for (const m of text.matchAll(re)) {
      if (out.length >= MAX_ROUTES_PER_FILE) break;
      const kind = m[1] ?? m[4]!;
      const args = m[2] ?? m[5] ?? '';
      const method = kind === 'Request' ? (/RequestMethod\.(\w+)/.exec(args)?.[1] ?? '*') : kind.toUpperCase();
      push({ method, path: /"([^"]*)"/.exec(args)?.[1] ?? '/', handler: m[3] ?? m[6]!, line: lineAt(m.index), framework: 'spring' });
    }
    return out;
  }
  if (language === 'python') {
    for (const m of text.matchAll(/^[ \t]*@(\w{1,200})\.(get|post|put|delete|patch|route|api_route)\([ \t]*["']([^"'\n]{0,400})["'][^\n]{0,400}\n(?:[ \t]*@[^\n]{0,400}\n){0,10}[ \t]*(?:async[ \t]+)?def[ \t]+(\w{1,200})/gm)) {
      if (out.length >= MAX_ROUTES_PER_FILE) break;
      push({ method: m[2] === 'route' ? 'GET' : m[2] === 'api_route' ? '*' : m[2]!.toUpperCase(), path: m[3]!, handler: m[4]!, line: lineAt(m.index + m[0].indexOf('@')), framework: m[2] === 'route' ? 'flask' : 'fastapi' });
    }
  } else if (language === 'go') {
    for (const m of text.matchAll(/\b\w{1,200}\.(GET|POST|PUT|DELETE|PATCH|Get|Post|Put|Delete|Patch)\([ \t]*"(\/[^"\n]{0,400})"[ \t]*,[ \t]*([\w.]{1,200})?/g)) {
      if (out.length >= MAX_ROUTES_PER_FILE) break;
      push({ method: m[1]!.toUpperCase(), path: m[2]!, handler: m[3] ?? '<inline>', line: lineAt(m.index), framework: 'go' });
    }
  } else {
    for (const m of text.matchAll(/\b\w{1,200}\.(get|post|put|delete|patch|all)\([ \t]*['"`](\/[^'"`\n]{0,400})['"`][ \t]*,([^\n]{0,300})/g)) {
      if (out.length >= MAX_ROUTES_PER_FILE) break;
      const h = /([\w.]{1,200})[ \t]*\)[ \t]*;?[ \t]*$/.exec(m[3]!)?.[1];
      push({ method: m[1] === 'all' ? '*' : m[1]!.toUpperCase(), path: m[2]!, handler: h ?? '<inline>', line: lineAt(m.index), framework: 'express' });
    }
  }
  return out;
}
