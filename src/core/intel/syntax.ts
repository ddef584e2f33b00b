/**
 * What the identifier at a position is, read from one file's syntax tree: a declaration, a
 * use bound by a local scope or an import, a member access (`obj.name`, `self.name`), or a
 * free name. Everything here is syntactic and per file; `navigate.ts` follows imports and
 * member lookups across files.
 *
 * Scopes and bindings come from the language's locals query (`queries/locals/*.scm`), with
 * the resolution rule of nvim-treesitter's locals: the innermost enclosing scope that binds
 * the name wins; within it, the last binding before the use, else the first one (hoisting).
 * Python's rule that functions do not see their class body's names is applied here.
 */
import type { Node, Query } from 'web-tree-sitter';
import type { LanguageId } from '../types';
import { isTsFamily } from '../parse/languages';

/** Node types that are identifiers a user can ask about. */
const IDENTIFIER_TYPES = new Set([
  'identifier',
  'type_identifier',
  'property_identifier',
  'private_property_identifier',
  'shorthand_property_identifier',
  'shorthand_property_identifier_pattern',
  'field_identifier',
  'package_identifier',
  'constant',
  'simple_identifier',
  'name',
]);

export interface Binding {
  name: string;
  line: number;
  col: number;
  kind: 'definition' | 'import' | 'global';
}

export interface ClassInfo {
  name: string;
  /** 1-based line of the class's name. */
  line: number;
  /** Superclass names as written in the class header (the last segment of dotted names). */
  bases: Array<{ name: string; line: number; col: number }>;
}

export type Target =
  | { kind: 'declaration'; name: string; line: number; col: number }
  | { kind: 'local'; name: string; binding: Binding }
  | {
      kind: 'import';
      name: string;
      binding: Binding;
      /** The position is the module's exported name (`a` in `import { a as b }`), not the local one. */
      imported?: boolean;
    }
  | { kind: 'free'; name: string }
  | {
      kind: 'member';
      name: string;
      /** How the receiver was identified. */
      receiver:
        | { kind: 'self'; cls: ClassInfo }
        | { kind: 'super'; cls: ClassInfo }
        | { kind: 'name'; name: string; target: Exclude<Target, { kind: 'member' }> }
        | { kind: 'typed'; typeName: string }
        | { kind: 'unknown'; text: string };
    };

/** The call an identifier is the callee of: its argument count and which arguments are function literals. */
export interface CallShape {
  args: number;
  /** Per argument: a function (a literal, or a name declared with a function type). */
  fnArgs: boolean[];
  /** Per argument: a function known to return a type predicate (`x is T`), known not to, or unknown. */
  predArgs: Array<boolean | undefined>;
  /** Per argument: the literal `undefined` or `null`. */
  undefArgs: boolean[];
}

/** What overload choice needs of a declaration's parameters. */
export interface Arity {
  min: number;
  max: number;
  /** Per parameter: typed as a function. */
  fnParams: boolean[];
  /** Per parameter: typed as a function returning a type predicate (`(v) => v is S`). */
  predParams: boolean[];
  /** Per parameter: typed exactly `undefined`, `null` or `void`. */
  undefParams: boolean[];
}

export interface PositionInfo {
  /** The identifier's text, or undefined when the position holds none. */
  target: Target | undefined;
  /** Set when the identifier is called here (`f(a, b)`, `obj.f(a)`), for choosing among overloads. */
  call?: CallShape;
  /** 1-based line and column of the identifier's start. */
  line: number;
  col: number;
}

function pos(n: Node): { line: number; col: number } {
  return { line: n.startPosition.row + 1, col: n.startPosition.column + 1 };
}

/** The smallest identifier node covering a 0-based row/column, also one column to the left. */
export function identifierAt(root: Node, row: number, column: number): Node | undefined {
  for (const c of [column, column - 1]) {
    if (c < 0) continue;
    const n = root.descendantForPosition({ row, column: c });
    if (n && IDENTIFIER_TYPES.has(n.type)) return n;
    // `this`/`super`/`self` keywords are not identifiers to navigate from.
  }
  return undefined;
}

interface ScopeData {
  defs: Map<string, Array<{ node: Node; kind: Binding['kind'] }>>;
}

function nodeKey(n: Node): string {
  return `${n.startIndex}:${n.endIndex}:${n.type}`;
}

const FUNCTION_SCOPES = new Set(['function_definition', 'lambda', 'function_declaration', 'method_definition', 'arrow_function', 'function_expression', 'method_declaration', 'func_literal']);
const CLASS_NODES = new Set(['class_definition', 'class_declaration', 'abstract_class_declaration', 'class', 'interface_declaration']);

/** Scope analysis of one tree with the locals query, done once per tree and reused. */
export class LocalScopes {
  private readonly scopes = new Map<string, ScopeData>();
  private readonly defNodes = new Set<string>();

  constructor(
    root: Node,
    query: Query,
    private readonly language: LanguageId,
  ) {
    const scopeKeys = new Set<string>();
    const defs: Array<{ node: Node; kind: Binding['kind'] }> = [];
    for (const c of query.captures(root)) {
      if (c.name === 'local.scope') scopeKeys.add(nodeKey(c.node));
      else if (c.name === 'local.definition') defs.push({ node: c.node, kind: 'definition' });
      else if (c.name === 'local.import') defs.push({ node: c.node, kind: 'import' });
      else if (c.name === 'local.global') defs.push({ node: c.node, kind: 'global' });
    }
    for (const d of defs) {
      const scope = this.scopeOfDefinition(d.node, scopeKeys);
      if (!scope) continue;
      const key = nodeKey(scope);
      let data = this.scopes.get(key);
      if (!data) this.scopes.set(key, (data = { defs: new Map() }));
      const name = d.node.text;
      let list = data.defs.get(name);
      if (!list) data.defs.set(name, (list = []));
      if (!list.some((x) => x.node.startIndex === d.node.startIndex)) list.push(d);
      if (d.kind !== 'global') this.defNodes.add(nodeKey(d.node));
      if (d.kind === 'import') this.importNodes.add(nodeKey(d.node));
    }
    this.scopeKeys = scopeKeys;
  }

  private readonly scopeKeys: Set<string>;

  /** The scope a binding belongs to: a declaration's own name binds outside the declaration. */
  private scopeOfDefinition(def: Node, scopeKeys: ReadonlySet<string>): Node | undefined {
    let cur = def.parent;
    while (cur) {
      if (scopeKeys.has(nodeKey(cur))) {
        const named = cur.childForFieldName('name');
        if (named && named.startIndex === def.startIndex && named.endIndex === def.endIndex) {
          cur = cur.parent;
          continue;
        }
        return cur;
      }
      cur = cur.parent;
    }
    return undefined;
  }

  isDefinition(n: Node): boolean {
    return this.defNodes.has(nodeKey(n));
  }

  /** Whether `n` is the local name an import binds (`import { x }`, `from a import x`). */
  isImportBinding(n: Node): boolean {
    return this.importNodes.has(nodeKey(n));
  }

  private readonly importNodes = new Set<string>();

  /** The binding a use of `name` at node `n` refers to, if any scope binds it. */
  lookup(n: Node, name: string): Binding | undefined {
    let passedFunction = false;
    let cur: Node | null = n.parent;
    let root: Node | undefined;
    while (cur) {
      const key = nodeKey(cur);
      if (this.scopeKeys.has(key)) {
        root = cur;
        const skipClass = this.language === 'python' && CLASS_NODES.has(cur.type) && passedFunction;
        const list = skipClass ? undefined : this.scopes.get(key)?.defs.get(name);
        if (list && list.length > 0) {
          const global = list.find((d) => d.kind === 'global');
          if (global) return this.lookupModule(name);
          // The last binding before the use; else the first (hoisting, later assignment).
          let best = list[0]!;
          for (const d of list) if (d.node.startIndex <= n.startIndex) best = d;
          return { name, ...pos(best.node), kind: best.kind };
        }
        if (FUNCTION_SCOPES.has(cur.type)) passedFunction = true;
      }
      cur = cur.parent;
    }
    void root;
    return undefined;
  }

  private lookupModule(name: string): Binding | undefined {
    for (const [key, data] of this.scopes) {
      if (!key.startsWith('0:')) continue;
      const list = data.defs.get(name)?.filter((d) => d.kind !== 'global');
      const first = list?.[0];
      if (first) return { name, ...pos(first.node), kind: first.kind };
    }
    return undefined;
  }
}

/** The receiver and property of a member access whose property is `n`, if it is one. */
function memberAccess(n: Node, language: LanguageId): { object: Node } | undefined {
  const p = n.parent;
  if (!p) return undefined;
  switch (language) {
    case 'typescript':
    case 'tsx':
    case 'javascript':
      if (p.type === 'member_expression' && p.childForFieldName('property')?.startIndex === n.startIndex) {
        const object = p.childForFieldName('object');
        return object ? { object } : undefined;
      }
      if (p.type === 'nested_type_identifier' && p.childForFieldName('name')?.startIndex === n.startIndex) {
        const object = p.childForFieldName('module');
        return object ? { object } : undefined;
      }
      return undefined;
    case 'python':
      if (p.type === 'attribute' && p.childForFieldName('attribute')?.startIndex === n.startIndex) {
        const object = p.childForFieldName('object');
        return object ? { object } : undefined;
      }
      return undefined;
    case 'go':
      if (p.type === 'selector_expression' && p.childForFieldName('field')?.startIndex === n.startIndex) {
        const object = p.childForFieldName('operand');
        return object ? { object } : undefined;
      }
      if (p.type === 'qualified_type' && p.childForFieldName('name')?.startIndex === n.startIndex) {
        const object = p.childForFieldName('package');
        return object ? { object } : undefined;
      }
      return undefined;
    default:
      return undefined;
  }
}

/** The class (or interface) enclosing a node, with its base names. */
export function enclosingClass(n: Node): ClassInfo | undefined {
  let cur: Node | null = n.parent;
  while (cur) {
    if (CLASS_NODES.has(cur.type)) return classInfo(cur);
    cur = cur.parent;
  }
  return undefined;
}

export function classInfo(cls: Node): ClassInfo | undefined {
  const nameNode = cls.childForFieldName('name');
  if (!nameNode) return undefined;
  const bases: ClassInfo['bases'] = [];
  const push = (id: Node) => bases.push({ name: id.text, ...pos(id) });
  if (cls.type === 'class_definition') {
    const sup = cls.childForFieldName('superclasses');
    for (const a of sup?.namedChildren ?? []) {
      if (!a) continue;
      if (a.type === 'identifier') push(a);
      else if (a.type === 'attribute') {
        const attr = a.childForFieldName('attribute');
        if (attr) push(attr);
      }
    }
  } else {
    // TS/JS: class_heritage → extends_clause (value) and implements_clause; interfaces: extends_type_clause.
    for (const h of cls.namedChildren) {
      if (!h) continue;
      const clauses = h.type === 'class_heritage' ? h.namedChildren : [h];
      for (const c of clauses) {
        if (!c) continue;
        if (c.type === 'extends_clause') {
          const v = c.childForFieldName('value');
          if (v?.type === 'identifier') push(v);
          else if (v?.type === 'member_expression') {
            const prop = v.childForFieldName('property');
            if (prop) push(prop);
          }
        } else if (c.type === 'identifier' && h.type === 'class_heritage') push(c);
        else if (c.type === 'extends_type_clause' || c.type === 'implements_clause') {
          for (const t of c.namedChildren) {
            if (!t) continue;
            if (t.type === 'type_identifier') push(t);
            else if (t.type === 'generic_type') {
              const nm = t.childForFieldName('name');
              if (nm) push(nm);
            }
          }
        }
      }
    }
  }
  return { name: nameNode.text, ...pos(nameNode), bases };
}

/** Whether `n` is the first parameter of a method (Python `self`/`cls` by position). */
function isSelfParameter(n: Node, scopes: LocalScopes | undefined): boolean {
  if (n.type !== 'identifier' || (n.text !== 'self' && n.text !== 'cls')) return false;
  const b = scopes?.lookup(n, n.text);
  // Bound by a parameter list (or not bound at all, in a snippet): treat as the instance.
  return b === undefined || b.kind === 'definition';
}

/**
 * The one named type a type node stands for: `X`, `X<T>`, `(X)`, and `X | null | undefined`
 * (a union of one type with nothing). With `element`, the element type of `X[]`,
 * `Array<X>` and `ReadonlyArray<X>` instead.
 */
function typeNameOf(t: Node | null | undefined, element = false): string | undefined {
  if (!t) return undefined;
  if (t.type === 'type_annotation' || t.type === 'parenthesized_type') return typeNameOf(t.namedChildren[0], element);
  if (t.type === 'union_type') {
    const parts: Node[] = [];
    const flatten = (u: Node): void => {
      for (const c of u.namedChildren) {
        if (c?.type === 'union_type') flatten(c);
        else if (c) parts.push(c);
      }
    };
    flatten(t);
    const kept = parts.filter((c) => !/^(null|undefined|void)$/.test(c.text));
    return kept.length === 1 ? typeNameOf(kept[0], element) : undefined;
  }
  if (element) {
    if (t.type === 'array_type') return typeNameOf(t.namedChildren[0]);
    if (t.type === 'generic_type' && /^(ReadonlyArray|Array)$/.test(t.childForFieldName('name')?.text ?? '')) return typeNameOf(t.childForFieldName('type_arguments')?.namedChildren[0]);
    return undefined;
  }
  if (t.type === 'type_identifier') return t.text;
  if (t.type === 'generic_type') return t.childForFieldName('name')?.text;
  return undefined;
}

/**
 * A TS/JS local's type name, as written or as plainly implied: its annotation, `new X()`,
 * `v as X`, the left side of `a || b` / `a ?? b`, or the type of the local it is copied from
 * (`const p = provider`, up to three copies). With `element`, the element type of an array.
 */
function declaredType(root: Node, binding: Binding, scopes: LocalScopes | undefined, element = false, depth = 0): string | undefined {
  const decl = root.descendantForPosition({ row: binding.line - 1, column: binding.col - 1 })?.parent;
  if (!decl) return undefined;
  const annotation = decl.childForFieldName('type');
  if (annotation) return typeNameOf(annotation, element);
  let value = decl.childForFieldName('value');
  while (value?.type === 'binary_expression' && /^(\|\||\?\?)$/.test(value.childForFieldName('operator')?.text ?? '')) value = value.childForFieldName('left');
  if (value?.type === 'as_expression') return typeNameOf(value.namedChildren[1], element);
  if (!element && value?.type === 'new_expression') {
    const ctor = value.childForFieldName('constructor');
    if (ctor?.type === 'identifier') return ctor.text;
  }
  if (value?.type === 'identifier' && scopes && depth < 3) {
    const b = scopes.lookup(value, value.text);
    if (b && b.kind === 'definition' && !(b.line === binding.line && b.col === binding.col)) return declaredType(root, b, scopes, element, depth + 1);
  }
  return undefined;
}

/**
 * The type a declaration at a position gives its name, when it is written there: TS/JS
 * `const x: T = …` or `x = new T(…)`, Python `x = T(…)` or `x = mod.T(…)` with `T`
 * capitalised (a class, by convention). For receivers declared in another file or at a
 * module's top level.
 */
export function assignedType(root: Node, line: number, col: number, language: LanguageId): string | undefined {
  const n = root.descendantForPosition({ row: line - 1, column: col - 1 });
  const decl = n?.parent;
  if (!n || !decl) return undefined;
  if (language === 'go') return goDeclaredType(n, decl);
  if (language === 'python') {
    if (decl.type !== 'assignment' || decl.childForFieldName('left')?.startIndex !== n.startIndex) return undefined;
    const right = decl.childForFieldName('right');
    const fn = right?.type === 'call' ? right.childForFieldName('function') : undefined;
    const cls = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.type === 'identifier' ? fn.text : undefined;
    return cls && /^[A-Z]/.test(cls) ? cls : undefined;
  }
  if (decl.type !== 'variable_declarator' && decl.type !== 'public_field_definition') return undefined;
  const annotated = typeNameOf(decl.childForFieldName('type'));
  if (annotated) return annotated;
  const value = decl.childForFieldName('value');
  const ctor = value?.type === 'new_expression' ? value.childForFieldName('constructor') : undefined;
  return ctor?.type === 'identifier' ? ctor.text : undefined;
}

/**
 * A Go name's type as its declaration states it: a parameter or receiver (`t *testing.T`,
 * `(srv *Server)`), `var x T`, or a composite literal (`x := &T{…}`, `var x = pkg.T{…}`). The
 * name as written, qualified when it is (`testing.T`); pointers are looked through.
 */
function goDeclaredType(n: Node, decl: Node): string | undefined {
  if (decl.type === 'parameter_declaration' || decl.type === 'variadic_parameter_declaration' || decl.type === 'var_spec') {
    const written = goTypeName(decl.childForFieldName('type'));
    if (written || decl.type !== 'var_spec') return written;
    const names = decl.namedChildren.filter((c) => c?.type === 'identifier');
    return goLiteralType(decl.childForFieldName('value')?.namedChildren[names.findIndex((c) => c?.startIndex === n.startIndex)]);
  }
  const stmt = decl.parent;
  if (decl.type === 'expression_list' && stmt?.type === 'short_var_declaration' && stmt.childForFieldName('left')?.startIndex === decl.startIndex) {
    const i = decl.namedChildren.findIndex((c) => c?.startIndex === n.startIndex);
    return goLiteralType(stmt.childForFieldName('right')?.namedChildren[i]);
  }
  return undefined;
}

function goTypeName(t: Node | null | undefined): string | undefined {
  if (!t) return undefined;
  if (t.type === 'pointer_type' || t.type === 'parenthesized_type') return goTypeName(t.namedChildren[0]);
  if (t.type === 'type_identifier' || t.type === 'qualified_type') return t.text;
  if (t.type === 'generic_type') return goTypeName(t.childForFieldName('type'));
  return undefined;
}

function goLiteralType(v: Node | null | undefined): string | undefined {
  if (!v) return undefined;
  if (v.type === 'unary_expression' && v.childForFieldName('operator')?.text === '&') return goLiteralType(v.childForFieldName('operand'));
  if (v.type === 'composite_literal') return goTypeName(v.childForFieldName('type'));
  return undefined;
}

function plainTarget(n: Node, name: string, scopes: LocalScopes | undefined): Exclude<Target, { kind: 'member' }> {
  // An import's own local name is followed to what it imports, as language servers do.
  if (scopes?.isImportBinding(n)) return { kind: 'import', name, binding: { name, ...pos(n), kind: 'import' } };
  if (scopes?.isDefinition(n)) return { kind: 'declaration', name, ...pos(n) };
  const b = scopes?.lookup(n, name);
  if (b) return b.kind === 'import' ? { kind: 'import', name, binding: b } : { kind: 'local', name, binding: b };
  return { kind: 'free', name };
}

/**
 * Classifies the identifier at a 1-based line/column. `scopes` comes from {@link LocalScopes}
 * when the language has a locals query; without one, every name is free.
 */
export function analyzePosition(root: Node, language: LanguageId, line: number, col: number, scopes: LocalScopes | undefined): PositionInfo {
  const n = identifierAt(root, line - 1, col - 1);
  if (!n) return { target: undefined, line, col };
  const info = analyzeIdentifier(n, root, language, scopes);
  const call = callShape(n, root, scopes);
  return call ? { ...info, call } : info;
}

const CALL_TYPES = new Set(['call_expression', 'call', 'new_expression']);
const FUNCTION_LITERALS = new Set(['arrow_function', 'function_expression', 'function', 'lambda', 'func_literal']);

function callShape(n: Node, root: Node, scopes: LocalScopes | undefined): CallShape | undefined {
  let callee: Node = n;
  const p = n.parent;
  if (p && (p.type === 'member_expression' || p.type === 'attribute' || p.type === 'selector_expression')) callee = p;
  const call = callee.parent;
  if (!call || !CALL_TYPES.has(call.type)) return undefined;
  const fn = call.childForFieldName('function') ?? call.childForFieldName('constructor');
  if (!fn || fn.startIndex !== callee.startIndex || fn.endIndex !== callee.endIndex) return undefined;
  const args = (call.childForFieldName('arguments')?.namedChildren ?? []).filter((a): a is Node => a !== null && a.type !== 'comment');
  const predArgs = args.map((a): boolean | undefined => {
    if (FUNCTION_LITERALS.has(a.type)) return /\bis\s/.test(a.childForFieldName('return_type')?.text ?? '');
    // A name declared with a function type: `predicate: (v: T) => boolean`.
    const b = a.type === 'identifier' ? scopes?.lookup(a, a.text) : undefined;
    if (!b || b.kind !== 'definition') return undefined;
    const type = root.descendantForPosition({ row: b.line - 1, column: b.col - 1 })?.parent?.childForFieldName('type')?.text ?? '';
    return /=>/.test(type) ? PREDICATE_TYPE.test(type) : undefined;
  });
  return {
    args: args.length,
    fnArgs: args.map((a, i) => FUNCTION_LITERALS.has(a.type) || predArgs[i] !== undefined),
    predArgs,
    undefArgs: args.map((a) => a.type === 'undefined' || a.type === 'null' || a.text === 'undefined' || a.text === 'None'),
  };
}

/** A function type returning a type predicate: `(value: T) => value is S`. */
const PREDICATE_TYPE = /=>\s*[\w$]+\s+is\s/;

/** Parameter arity of the function or method whose name is at a position, for overload choice. */
export function arityAt(root: Node, line: number, col: number): Arity | undefined {
  const n = root.descendantForPosition({ row: line - 1, column: col - 1 });
  const decl = n?.parent;
  const params = decl?.childForFieldName('parameters');
  if (!params) return undefined;
  const a: Arity = { min: 0, max: 0, fnParams: [], predParams: [], undefParams: [] };
  for (const p of params.namedChildren) {
    if (!p || p.type === 'comment') continue;
    const text = p.text;
    if (p.type === 'identifier' && (text === 'self' || text === 'cls') && a.max === 0) continue;
    if (/^\.\.\.|^\*/.test(text) || p.type === 'list_splat_pattern' || p.type === 'dictionary_splat_pattern') {
      a.max = Infinity;
      a.fnParams.push(false);
      a.predParams.push(false);
      a.undefParams.push(false);
      continue;
    }
    // Optional by its node type (`x?: T`, Python `x=1`), or by a default value (`delay = 0`). Not
    // by an `=` anywhere in its text: `work: () => void` is required.
    const optional =
      p.type === 'optional_parameter' || p.type === 'default_parameter' || p.type === 'typed_default_parameter' || p.childForFieldName('value') !== null || p.childForFieldName('default_value') !== null;
    if (/^this\b/.test(text) || p.type === 'this_parameter') continue;
    if (!optional) a.min++;
    a.max++;
    const type = (p.childForFieldName('type')?.text ?? '').replace(/^:\s*/, '');
    a.fnParams.push(/=>|Callable|Function\b/.test(type));
    a.predParams.push(PREDICATE_TYPE.test(type));
    a.undefParams.push(/^(undefined|null|void|None)$/.test(type));
  }
  return a;
}

/** Strips `x!`, `(x)` and `x as T` around a receiver. */
function unwrap(n: Node): Node {
  // tree-sitter reads `a - b!.c` as `(a - b)!.c`: the receiver is the right operand.
  if (n.type === 'non_null_expression' && n.namedChildren[0]?.type === 'binary_expression') {
    const right = n.namedChildren[0].childForFieldName('right');
    if (right) return unwrap(right);
  }
  let cur = n;
  for (let i = 0; i < 4; i++) {
    if (cur.type === 'non_null_expression' || cur.type === 'parenthesized_expression' || cur.type === 'as_expression' || cur.type === 'satisfies_expression') {
      const inner = cur.namedChildren[0];
      if (!inner) break;
      cur = inner;
    } else break;
  }
  return cur;
}

function analyzeIdentifier(n: Node, root: Node, language: LanguageId, scopes: LocalScopes | undefined): PositionInfo {
  const name = n.text;
  const at = pos(n);
  if (scopes?.isImportBinding(n)) return { target: { kind: 'import', name, binding: { name, ...at, kind: 'import' } }, ...at };
  // The exported name of `import { a as b }` and the names of `export { a } from './x'`: what
  // the module exports under that name.
  const spec = n.parent;
  if (spec && (spec.type === 'import_specifier' || spec.type === 'export_specifier') && spec.childForFieldName('name')?.startIndex === n.startIndex) {
    const fromModule = spec.type === 'import_specifier' || spec.parent?.parent?.childForFieldName('source') != null;
    if (fromModule) return { target: { kind: 'import', name, binding: { name, ...at, kind: 'import' }, imported: true }, ...at };
  }
  // A declaration's own name (a class, a function, a method or field in a class body).
  const parent = n.parent;
  if (parent && parent.childForFieldName('name')?.startIndex === n.startIndex && /definition|declaration|signature|declarator|spec|_item$/.test(parent.type)) {
    return { target: { kind: 'declaration', name, ...at }, ...at };
  }
  const member = memberAccess(n, language);
  if (member) {
    const obj = unwrap(member.object);
    if (obj.type === 'this') {
      const cls = enclosingClass(n);
      return { target: { kind: 'member', name, receiver: cls ? { kind: 'self', cls } : { kind: 'unknown', text: 'this' } }, ...at };
    }
    if (obj.type === 'super' || (obj.type === 'call' && obj.childForFieldName('function')?.text === 'super')) {
      const cls = enclosingClass(n);
      return { target: { kind: 'member', name, receiver: cls ? { kind: 'super', cls } : { kind: 'unknown', text: 'super' } }, ...at };
    }
    if (language === 'python' && isSelfParameter(obj, scopes)) {
      const cls = enclosingClass(n);
      if (cls) return { target: { kind: 'member', name, receiver: { kind: 'self', cls } }, ...at };
    }
    const typedLanguage = isTsFamily(language);
    // `subscriptions[i].unsubscribe()`: the element type of a declared array.
    if (typedLanguage && obj.type === 'subscript_expression') {
      const array = unwrap(obj.childForFieldName('object') ?? obj);
      const t = array.type === 'identifier' ? plainTarget(array, array.text, scopes) : undefined;
      const typeName = t?.kind === 'local' ? declaredType(root, t.binding, scopes, true) : undefined;
      if (typeName) return { target: { kind: 'member', name, receiver: { kind: 'typed', typeName } }, ...at };
    }
    if (IDENTIFIER_TYPES.has(obj.type)) {
      // Go `url.URL` in a type names the package even where a parameter `url` shadows it there.
      const target: Exclude<Target, { kind: 'member' }> = obj.type === 'package_identifier' && obj.parent?.type === 'qualified_type' ? { kind: 'free', name: obj.text } : plainTarget(obj, obj.text, scopes);
      if (target.kind === 'local' && typedLanguage) {
        const typeName = declaredType(root, target.binding, scopes);
        if (typeName) return { target: { kind: 'member', name, receiver: { kind: 'typed', typeName } }, ...at };
      }
      return { target: { kind: 'member', name, receiver: { kind: 'name', name: obj.text, target } }, ...at };
    }
    return { target: { kind: 'member', name, receiver: { kind: 'unknown', text: obj.text.slice(0, 80) } }, ...at };
  }
  return { target: plainTarget(n, name, scopes), ...at };
}

/** Definitions named `member` directly in a class body (methods, fields, Python `self.x = ...`). */
export function classMembers(cls: Node, member: string): Array<{ line: number; col: number }> {
  const out: Array<{ line: number; col: number }> = [];
  const body = cls.childForFieldName('body');
  if (!body) return out;
  const visit = (n: Node, depth: number): void => {
    for (const c of n.namedChildren) {
      if (!c) continue;
      const nm = c.childForFieldName('name');
      if (nm && nm.text === member && /definition|signature|declaration|_field|property/.test(c.type)) out.push(pos(nm));
      // Python: `x = ...` in the class body, `self.x = ...` in its methods.
      if (c.type === 'expression_statement') {
        const a = c.namedChildren[0];
        if (a && (a.type === 'assignment' || a.type === 'augmented_assignment')) {
          const left = a.childForFieldName('left');
          if (left?.type === 'identifier' && left.text === member && depth === 0) out.push(pos(left));
          // `self.x = …`, `self.a, self.b = …`, and `cls.x = …` in a classmethod.
          const targets = left && (left.type === 'pattern_list' || left.type === 'tuple_pattern') ? left.namedChildren : [left];
          for (const target of targets) {
            const attr = target?.type === 'attribute' ? target.childForFieldName('attribute') : null;
            const o = target?.childForFieldName('object');
            if (attr?.text === member && o?.type === 'identifier' && (o.text === 'self' || o.text === 'cls')) out.push(pos(attr));
          }
        }
      }
      // TS constructor parameter properties: constructor(private x: T).
      if (c.type === 'required_parameter' || c.type === 'optional_parameter') {
        const hasModifier = c.namedChildren.some((m) => m?.type === 'accessibility_modifier' || m?.type === 'override_modifier');
        const p = c.childForFieldName('pattern');
        if (hasModifier && p?.text === member) out.push(pos(p));
      }
      if (c.type === 'decorated_definition') visit(c, depth);
      else if (depth < 3 && (c.type === 'function_definition' || c.type === 'method_definition' || c.type === 'block' || c.type === 'statement_block' || c.type === 'formal_parameters' || c.type === 'if_statement')) {
        visit(c.childForFieldName('body') ?? c, depth + 1);
        if (c.type === 'method_definition') {
          const params = c.childForFieldName('parameters');
          if (params) visit(params, depth + 1);
        }
      }
    }
  };
  visit(body, 0);
  const seen = new Set<string>();
  return out.filter((p) => {
    const k = `${p.line}:${p.col}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** The class node whose name sits on a 1-based line (and column, when known). */
export function classAt(root: Node, line: number, name: string): Node | undefined {
  let found: Node | undefined;
  const walk = (n: Node): void => {
    if (found) return;
    if (n.startPosition.row > line - 1 || n.endPosition.row < line - 1) return;
    if (CLASS_NODES.has(n.type) && n.childForFieldName('name')?.text === name && n.childForFieldName('name')?.startPosition.row === line - 1) {
      found = n;
      return;
    }
    for (const c of n.namedChildren) if (c) walk(c);
  };
  walk(root);
  return found;
}

/**
 * Positions of every identifier named `name` in a file, outside strings and comments: a text
 * scan for whole-word occurrences, each confirmed by the syntax tree (cheaper than walking
 * every node of a large file).
 */
export function identifiersNamed(root: Node, source: string, name: string): Array<{ line: number; col: number; inDocLink?: true }> {
  const out: Array<{ line: number; col: number; inDocLink?: true }> = [];
  if (name.length === 0) return out;
  const isWord = (c: string | undefined) => c !== undefined && /[\w$]/.test(c);
  let i = source.indexOf(name);
  while (i >= 0) {
    if (!isWord(source[i - 1]) && !isWord(source[i + name.length])) {
      const n = root.descendantForIndex(i, i + name.length);
      if (n && IDENTIFIER_TYPES.has(n.type) && n.text === name) out.push(pos(n));
      // `{@link Name}` in a doc comment refers to the name in scope, as TypeScript resolves it.
      else if (n && n.type === 'comment' && /\{@link(?:code|plain)?\s+$/.test(source.slice(Math.max(0, i - 12), i))) {
        const before = source.slice(0, i);
        const lineNo = before.split('\n').length;
        out.push({ line: lineNo, col: i - before.lastIndexOf('\n'), inDocLink: true });
      }
    }
    i = source.indexOf(name, i + name.length);
  }
  return out;
}
