/**
 * Tree-sitter based parser: symbols, references, imports and chunks of one source file.
 *
 * Symbols and references come from one tag query per language (`queries/<language>.scm`),
 * written in the style of upstream `tags.scm` files. Capture conventions:
 *
 * - `@definition.<kind>` on a definition node with `@name` on its name. Kinds are the
 *   SymbolKinds (`function`, `method`, `class`, `interface`, `struct`, `enum`, `trait`,
 *   `type`, `module`, `constant`, `variable`, `field`); `macro` counts as `function`. A
 *   `function` directly inside a class-like definition becomes a `method`.
 * - `@receiver` (optional, in a definition pattern) names the type a method belongs to when
 *   that type does not enclose it: Go receivers, C++ `Type::method` definitions.
 * - `@scope` with `@name`: a block that qualifies the definitions inside it without being a
 *   symbol itself (Rust `impl`, Swift `extension`).
 * - `@reference.call`, `@reference.type`, `@reference` (or any other `@reference.<x>`) on
 *   the use, with `@name` on the identifier.
 * - `@import` on an import/include/use/require statement.
 * - Captures starting with `_` only feed predicates.
 *
 * When two patterns capture the same name node, the one written first in the file wins, so
 * specific patterns (an interface) go before general ones (any type).
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type * as WebTreeSitter from 'web-tree-sitter';
import type { Language, Node, Parser, Query, Tree } from 'web-tree-sitter';
import { VltError } from '../errors';
import type { Chunk, ImportSpec, LanguageId, ParsedFile, SymbolDef, SymbolKind, SymbolRef } from '../types';
import {
  buildChunks,
  chunkMarkdown,
  DEFAULT_CHUNK_OPTIONS,
  LineIndex,
  type ChunkOptions,
  type DefInfo,
} from './chunker';
import { readImport } from './imports';
import { chunkText, type TextLanguageRules } from './text-chunker';
import { GRAMMARS, queryFilesFor, readAsText } from './languages';

/*
 * The CommonJS build of web-tree-sitter is loaded with `require` on purpose: the bundles are
 * CommonJS, and the ESM build calls `createRequire(import.meta.url)`, which esbuild leaves
 * undefined in a CommonJS bundle. A literal `require` call makes esbuild pick the package's
 * `require` export condition; vitest provides `require` to the modules it runs as well.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const TreeSitter = require('web-tree-sitter') as typeof WebTreeSitter;

export interface CodeParserOptions {
  /** Directory holding every grammar `.wasm` and `web-tree-sitter.wasm` (the bundled layout). */
  wasmDir?: string;
  /** Directory holding the `<language>.scm` tag queries. */
  queriesDir?: string;
  /** Chunk size limits; defaults to 1500 characters, 80 lines, merge below 200 characters. */
  chunk?: Partial<ChunkOptions>;
}

export interface CodeParser {
  /**
   * Parses one file. Synchronous: grammars load on first use of a language. Syntax errors
   * never throw (the output is best effort); a missing grammar or query throws a VltError
   * with code PARSER_UNAVAILABLE.
   */
  parse(path: string, language: LanguageId, source: string): ParsedFile;
  /**
   * Parses `source` and runs `fn` over its syntax tree, with the language's locals query
   * (`queries/locals/<language>.scm`, scopes and bindings) when there is one. The tree is
   * freed when `fn` returns, so nodes must not escape it. Throws PARSER_UNAVAILABLE like
   * `parse`, and for markdown.
   */
  withTree<T>(language: LanguageId, source: string, fn: (root: Node, locals: Query | undefined) => T): T;
  /**
   * A query of another kind than tags and locals, `queries/<kind>/<language>.scm` (such as
   * `routes`), compiled for the language once; undefined when the language has none. Throws
   * PARSER_UNAVAILABLE for a missing grammar or a query that does not compile.
   */
  extraQuery(kind: string, language: LanguageId): Query | undefined;
  /** Like `withTree`, but the caller keeps the tree until it calls `dispose()`. */
  openTree(language: LanguageId, source: string): { root: Node; locals: Query | undefined; dispose(): void };
  /**
   * Loads a language's grammar, tag query and locals query now, as its first parse would
   * (a host warming up while idle); throws PARSER_UNAVAILABLE like `parse`.
   */
  prepare(language: LanguageId): void;
  /** Frees the parser, the queries and the cached grammars. */
  dispose(): void;
}

/** Languages whose locals query is another's (same node types). */
const LOCALS_BASE: Partial<Record<LanguageId, LanguageId>> = { tsx: 'typescript' };
/** Languages whose other queries (routes) are another's: JavaScript's calls and decorators are TypeScript's nodes. */
const EXTRA_QUERY_BASE: Partial<Record<LanguageId, LanguageId>> = { ...LOCALS_BASE, javascript: 'typescript' };

const enum Role {
  None,
  Def,
  Ref,
  Scope,
  Import,
}

interface PatternInfo {
  role: Role;
  /** The capture that holds the definition/scope node, e.g. `definition.function`. */
  capture: string;
  defKind: SymbolKind;
  refKind: SymbolRef['kind'];
}

interface LanguageRuntime {
  language: Language;
  query: Query;
  patterns: PatternInfo[];
}

const DEF_KINDS: Readonly<Record<string, SymbolKind>> = {
  function: 'function',
  method: 'method',
  class: 'class',
  interface: 'interface',
  struct: 'struct',
  enum: 'enum',
  trait: 'trait',
  type: 'type',
  module: 'module',
  constant: 'constant',
  variable: 'variable',
  field: 'field',
  macro: 'function',
};

/** Kinds whose directly nested functions are methods. */
const CLASS_LIKE: ReadonlySet<string> = new Set(['class', 'interface', 'struct', 'enum', 'trait', 'scope']);

/** Kinds whose signature runs to the start of their body. */
const HAS_BODY: ReadonlySet<string> = new Set(['function', 'method', 'class', 'interface', 'struct', 'enum', 'trait', 'module', 'scope']);

/** Body node types of grammars that do not mark the body with a `body` field (Kotlin). */
const BODY_TYPES: ReadonlySet<string> = new Set(['class_body', 'enum_class_body', 'function_body', 'block', 'declaration_list', 'do_block', 'class_declarations']);

const MAX_SIGNATURE = 200;

/** The global WebAssembly object: the project's TypeScript libs (no DOM) declare only its types. */
const Wasm = (globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => WebAssembly.Module } }).WebAssembly;

function isDir(p: string | undefined): p is string {
  try {
    return p !== undefined && fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Directory of this module: the bundle's directory once built, `src/core/parse` under vitest. */
function moduleDir(): string | undefined {
  return typeof __dirname === 'string' ? __dirname : undefined;
}

interface Locations {
  runtimeWasm: string;
  grammar(language: LanguageId): string | undefined;
  queriesDir: string;
}

function locate(opts: CodeParserOptions): Locations {
  const here = moduleDir();
  const bundledWasm = here ? path.join(here, 'wasm') : undefined;
  const wasmDir = opts.wasmDir ?? (isDir(bundledWasm) ? bundledWasm : undefined);
  // Next to this module: `dist/queries` in the bundle, `src/core/parse/queries` under vitest.
  const besideModule = here ? path.join(here, 'queries') : undefined;
  const queriesDir = opts.queriesDir ?? (isDir(besideModule) ? besideModule : path.resolve('src/core/parse/queries'));
  if (wasmDir) {
    return {
      runtimeWasm: path.join(wasmDir, 'web-tree-sitter.wasm'),
      grammar: (language) => {
        const g = GRAMMARS[language];
        return g ? path.join(wasmDir, g.file) : undefined;
      },
      queriesDir,
    };
  }
  // Running from sources: resolve the packages from node_modules, as seen from this module
  // and, failing that, from the working directory (a script bundled outside the project).
  const requires = [typeof __filename === 'string' ? __filename : undefined, path.join(process.cwd(), 'index.js')]
    .filter((f): f is string => f !== undefined)
    .map((f) => createRequire(f));
  const resolve = (id: string): string | undefined => {
    for (const req of requires) {
      try {
        return req.resolve(id);
      } catch {
        // Try the next starting point.
      }
    }
    return undefined;
  };
  const pkgDir = (pkg: string): string | undefined => {
    const p = resolve(`${pkg}/package.json`);
    return p ? path.dirname(p) : undefined;
  };
  const runtimeWasm = resolve('web-tree-sitter/web-tree-sitter.wasm');
  if (!runtimeWasm) throw new VltError('PARSER_UNAVAILABLE', 'cannot locate web-tree-sitter.wasm in node_modules');
  return {
    runtimeWasm,
    grammar: (language) => {
      const g = GRAMMARS[language];
      if (!g) return undefined;
      const dir = pkgDir(g.pkg);
      return dir ? path.join(dir, g.subdir, g.file) : undefined;
    },
    queriesDir,
  };
}

let initPromise: Promise<void> | undefined;

/** Initialises the tree-sitter runtime once per thread. */
function initRuntime(runtimeWasm: string): Promise<void> {
  initPromise ??= TreeSitter.Parser.init({ locateFile: () => runtimeWasm }).catch((e: unknown) => {
    initPromise = undefined;
    throw new VltError('PARSER_UNAVAILABLE', `cannot initialise tree-sitter: ${String(e)}`, { runtimeWasm }, { cause: e });
  });
  return initPromise;
}

/** Reads each pattern's role from its text, since captures alone do not say which pattern they serve. */
function analysePatterns(query: Query, source: string): PatternInfo[] {
  const infos: PatternInfo[] = [];
  const n = query.patternCount();
  const utf8 = Buffer.from(source, 'utf8');
  for (let i = 0; i < n; i++) {
    // Pattern offsets are byte offsets into the UTF-8 query: a `…` in a comment must not shift them.
    const text = utf8.subarray(query.startIndexForPattern(i), query.endIndexForPattern(i)).toString('utf8');
    const info: PatternInfo = { role: Role.None, capture: '', defKind: 'function', refKind: 'reference' };
    const def = /@(definition\.(\w+))/.exec(text);
    const ref = /@reference(?:\.([\w]+))?/.exec(text);
    if (def && def[1] && def[2]) {
      info.role = Role.Def;
      info.capture = def[1];
      info.defKind = DEF_KINDS[def[2]] ?? 'function';
    } else if (/@scope\b/.test(text)) {
      info.role = Role.Scope;
      info.capture = 'scope';
    } else if (ref) {
      info.role = Role.Ref;
      const k = ref[1];
      info.refKind = k === 'call' ? 'call' : k === 'inherit' ? 'inherit' : k === 'type' || k === 'class' || k === 'interface' || k === 'implementation' ? 'type' : 'reference';
    } else if (/@import\b/.test(text)) {
      info.role = Role.Import;
      info.capture = 'import';
    }
    infos.push(info);
  }
  return infos;
}

/** Leading decorators, annotations and attributes, which a signature leaves out. */
const LEADING_ANNOTATIONS =
  /^(?:@(?!(?:implementation|interface|protocol|property|end|class)\b)[\w.:]+(?:\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))?\s*|#\[(?:[^\]]|\[[^\]]*\])*\]\s*|\[\[[^\]]*\]\]\s*|\[(?:[^\]"]|"[^"]*")*\]\s*)+/;

interface RawDef {
  pattern: number;
  kind: SymbolKind | 'scope';
  name: string;
  node: Node;
  nameRow: number;
  receiver: string | undefined;
  start: number;
  end: number;
}

interface RawRef {
  start: number;
  pattern: number;
  node: Node;
  kind: SymbolRef['kind'];
}

function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** First line of a statement, or the whole statement on one line when it spans several. */
function statementText(text: string): string {
  const t = text.trim();
  return clip(t.includes('\n') ? collapse(t) : t, MAX_SIGNATURE);
}

/** Above this share of a file's rows inside syntax errors, a language with line rules reads the file as text. */
const MAX_ERROR_SHARE = 0.5;

/** The share of `rows` that lie inside ERROR or MISSING nodes; only subtrees with errors are walked. */
function errorShare(root: Node, rows: number): number {
  let bad = 0;
  let lastRow = -1;
  const walk = (n: Node): void => {
    if (n.type === 'ERROR' || n.isMissing) {
      const from = Math.max(n.startPosition.row, lastRow + 1);
      if (n.endPosition.row >= from) bad += n.endPosition.row - from + 1;
      lastRow = Math.max(lastRow, n.endPosition.row);
      return;
    }
    for (let i = 0; i < n.childCount; i++) {
      const c = n.child(i);
      if (c?.hasError) walk(c);
    }
  };
  walk(root);
  return rows > 0 ? bad / rows : 0;
}

class TreeSitterCodeParser implements CodeParser {
  private parser: Parser | undefined;
  private readonly runtimes = new Map<LanguageId, LanguageRuntime>();
  private readonly localsQueries = new Map<LanguageId, Query | null>();
  private readonly extraQueries = new Map<string, Query | null>();
  private readonly chunkOptions: ChunkOptions;
  private textRulesCache: Partial<Record<LanguageId, TextLanguageRules>> | undefined;

  constructor(
    private readonly loc: Locations,
    chunk: Partial<ChunkOptions> | undefined,
  ) {
    this.chunkOptions = { ...DEFAULT_CHUNK_OPTIONS, ...chunk };
  }

  /** The line rules of the languages read as text, from `queries/text-definitions.json`. */
  private textRules(): Partial<Record<LanguageId, TextLanguageRules>> {
    if (!this.textRulesCache) {
      const file = path.join(this.loc.queriesDir, 'text-definitions.json');
      try {
        this.textRulesCache = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Record<LanguageId, TextLanguageRules>>;
      } catch (e) {
        throw new VltError('PARSER_UNAVAILABLE', `cannot load the text languages' definition patterns: ${String(e)}`, { file }, { cause: e });
      }
    }
    return this.textRulesCache;
  }

  private runtime(language: LanguageId): LanguageRuntime {
    const cached = this.runtimes.get(language);
    if (cached) return cached;
    const wasm = this.loc.grammar(language);
    if (!wasm) throw new VltError('PARSER_UNAVAILABLE', `no grammar for ${language}`, { language });
    let lang: Language;
    try {
      // Compiling synchronously keeps parse() synchronous; V8 compiles wasm lazily, so this
      // takes milliseconds even for the multi-megabyte grammars.
      lang = TreeSitter.Language.loadSync(new Wasm.Module(fs.readFileSync(wasm)));
    } catch (e) {
      throw new VltError('PARSER_UNAVAILABLE', `cannot load the ${language} grammar: ${String(e)}`, { language, wasm }, { cause: e });
    }
    const queryPath = queryFilesFor(language).map((f) => path.join(this.loc.queriesDir, f)).join(' + ');
    let source: string;
    let query: Query;
    try {
      source = queryFilesFor(language)
        .map((f) => fs.readFileSync(path.join(this.loc.queriesDir, f), 'utf8'))
        .join('\n');
      query = new TreeSitter.Query(lang, source);
    } catch (e) {
      throw new VltError('PARSER_UNAVAILABLE', `cannot load the ${language} tag query: ${String(e)}`, { language, queryPath }, { cause: e });
    }
    const patterns = analysePatterns(query, source);
    // Reference patterns only need their @name; not recording the outer use node saves
    // marshalling one node object per reference.
    for (const name of query.captureNames) if (name.startsWith('reference')) query.disableCapture(name);
    const rt: LanguageRuntime = { language: lang, query, patterns };
    this.runtimes.set(language, rt);
    return rt;
  }

  parse(_path: string, language: LanguageId, source: string): ParsedFile {
    if (language === 'markdown') {
      const { symbols, chunks } = chunkMarkdown(source, this.chunkOptions);
      return { language, imports: [], importSpecs: [], chunks, symbols, refs: [] };
    }
    if (!GRAMMARS[language] || readAsText(_path, language)) return this.asText(language, source);
    const rt = this.runtime(language);
    const L = new LineIndex(source);
    if (L.rowCount === 0) return { language, imports: [], importSpecs: [], chunks: [], symbols: [], refs: [] };
    let tree: Tree | null = null;
    try {
      this.parser ??= new TreeSitter.Parser();
      this.parser.setLanguage(rt.language);
      tree = this.parser.parse(source);
      if (!tree) return this.fallback(language, L);
      // A grammar that cannot read most of a file (bash-completion's main script is one syntax
      // error to tree-sitter-bash) would lose its definitions: its text reader keeps them.
      if (tree.rootNode.hasError && this.textRules()[language] && errorShare(tree.rootNode, L.rowCount) > MAX_ERROR_SHARE) return this.asText(language, source);
      return this.extract(rt, tree, language, L);
    } catch (e) {
      if (e instanceof VltError) throw e;
      // A failure inside the wasm runtime may leave the parser in a bad state; start afresh
      // next time and still return the file's text as chunks.
      try {
        this.parser?.delete();
      } catch {
        // The parser is being discarded anyway.
      }
      this.parser = undefined;
      return this.fallback(language, L);
    } finally {
      tree?.delete();
    }
  }

  /** A file read by the text reader: definitions by line patterns, no references or imports. */
  private asText(language: LanguageId, source: string): ParsedFile {
    const { symbols, chunks } = chunkText(source, this.textRules()[language], this.chunkOptions);
    return { language, imports: [], importSpecs: [], chunks, symbols, refs: [] };
  }

  /** Line-based chunks without symbols, for a file the parser could not handle. */
  private fallback(language: LanguageId, L: LineIndex): ParsedFile {
    const o = this.chunkOptions;
    const chunks: Chunk[] = [];
    let a = 0;
    const push = (s: number, e: number): void => {
      while (s <= e && L.isBlank(s)) s++;
      while (e >= s && L.isBlank(e)) e--;
      if (s <= e) chunks.push({ startLine: s + 1, endLine: e + 1, kind: 'block', text: L.text(s, e) });
    };
    for (let r = 0; r < L.rowCount; r++) {
      if (r > a && (r - a + 1 > o.maxLines || L.size(a, r) > o.maxChars)) {
        push(a, r - 1);
        a = r;
      }
    }
    push(a, L.rowCount - 1);
    return { language, imports: [], importSpecs: [], chunks, symbols: [], refs: [] };
  }

  // eslint-disable-next-line max-lines-per-function -- one pass over the query's captures; the capture kinds share the file's tables (symbols, references, imports, chunks)
  private extract(rt: LanguageRuntime, tree: Tree, language: LanguageId, L: LineIndex): ParsedFile {
    const source = L.source;
    const root = tree.rootNode;
    const matches = rt.query.matches(root);
    const defsByName = new Map<number, RawDef>();
    const rawRefs: RawRef[] = [];
    const importNodes = new Map<number, Node>();

    for (const m of matches) {
      const info = rt.patterns[m.patternIndex];
      if (!info) continue;
      switch (info.role) {
        case Role.Ref:
          for (const c of m.captures) {
            if (c.name === 'name') rawRefs.push({ start: c.node.startIndex, pattern: m.patternIndex, node: c.node, kind: info.refKind });
          }
          break;
        case Role.Def:
        case Role.Scope: {
          let nameNode: Node | undefined;
          let defNode: Node | undefined;
          let receiver: Node | undefined;
          for (const c of m.captures) {
            if (c.name === 'name') nameNode = c.node;
            else if (c.name === info.capture) defNode = c.node;
            else if (c.name === 'receiver') receiver = c.node;
          }
          if (!nameNode || !defNode) break;
          const key = nameNode.startIndex;
          const prev = defsByName.get(key);
          if (prev && prev.pattern <= m.patternIndex) break;
          const name = collapse(source.slice(key, nameNode.endIndex));
          if (!name) break;
          defsByName.set(key, {
            pattern: m.patternIndex,
            kind: info.role === Role.Scope ? 'scope' : info.defKind,
            name,
            node: defNode,
            nameRow: nameNode.startPosition.row,
            receiver: receiver ? collapse(receiver.text) : undefined,
            start: defNode.startIndex,
            end: defNode.endIndex,
          });
          break;
        }
        case Role.Import:
          for (const c of m.captures) {
            if (c.name === 'import' && !importNodes.has(c.node.startIndex)) importNodes.set(c.node.startIndex, c.node);
          }
          break;
        default:
          break;
      }
    }

    // Nesting: sort outermost first and keep a stack of the definitions still open.
    const raw = [...defsByName.values()].sort((a, b) => a.start - b.start || b.end - a.end);
    const defs: DefInfo[] = [];
    const symbols: SymbolDef[] = [];
    const stack: { def: DefInfo; start: number; end: number }[] = [];
    for (const r of raw) {
      // Pop what does not strictly enclose r. Definitions sharing one node (Go `var y, z = 1, 2`)
      // are siblings, not nested.
      for (;;) {
        const top = stack[stack.length - 1];
        if (!top || (top.end > r.start && !(top.start === r.start && top.end === r.end))) break;
        stack.pop();
      }
      const parent = stack[stack.length - 1]?.def;
      let kind = r.kind;
      if (kind === 'function' && parent && CLASS_LIKE.has(parent.kind)) kind = 'method';
      // A name written qualified (Elixir `defmodule Shop.Cart`) is its last part, under the rest.
      const dotted = /^[\w$]+(?:\.[\w$]+)+$/.test(r.name) ? r.name.split('.') : undefined;
      const name = dotted ? dotted[dotted.length - 1]! : r.name;
      const prefix = [parent?.qualifiedName, r.receiver, dotted?.slice(0, -1).join('.')].filter((p): p is string => !!p).join('.');
      const qualifiedName = prefix ? `${prefix}.${name}` : name;
      const startRow = r.node.startPosition.row;
      const endRow = L.rowOf(Math.max(r.start, r.end - 1));
      const def: DefInfo = {
        kind,
        qualifiedName,
        signature: this.signature(r, kind, L),
        startRow,
        endRow,
        headerRow: r.nameRow,
        node: r.node,
        parent,
        symbol: undefined,
      };
      if (kind !== 'scope') {
        const sym: SymbolDef = {
          name,
          kind,
          qualifiedName,
          signature: def.signature,
          startLine: startRow + 1,
          endLine: endRow + 1,
        };
        if (prefix) sym.container = prefix;
        def.symbol = sym;
        symbols.push(sym);
      }
      defs.push(def);
      stack.push({ def, start: r.start, end: r.end });
    }

    // References: one per identifier (the first pattern wins), definition names excluded.
    rawRefs.sort((a, b) => a.start - b.start || a.pattern - b.pattern);
    const refs: SymbolRef[] = [];
    let lastStart = -1;
    for (const r of rawRefs) {
      if (r.start === lastStart) continue;
      // A definition's own name is not a use; a scope's name (impl Foo) is one.
      const def = defsByName.get(r.start);
      if (def && def.kind !== 'scope') continue;
      lastStart = r.start;
      const name = source.slice(r.start, r.node.endIndex);
      if (!name) continue;
      const p = r.node.startPosition;
      refs.push({ name, line: p.row + 1, col: p.column + 1, kind: r.kind });
    }

    const importList = [...importNodes.values()].sort((a, b) => a.startIndex - b.startIndex);
    const importSpecs: ImportSpec[] = importList.flatMap((n) => readImport(n, language));
    const imports = importList
      .map((n) => {
        const text = statementText(source.slice(n.startIndex, n.endIndex));
        // Go lists imports in one parenthesised block; each spec is reported as its own import.
        return n.type === 'import_spec' ? `import ${text}` : text;
      });

    const chunks = buildChunks(root, L, defs, language, this.chunkOptions);
    return { language, imports, importSpecs, chunks, symbols, refs };
  }

  /**
   * The declaration up to its body, on one line: from the start of the definition's line
   * (so `export`, `const` or `type` keywords on that line are kept) to the body's `{` or `:`,
   * leading annotations removed.
   */
  private signature(r: RawDef, kind: string, L: LineIndex): string {
    const source = L.source;
    const row = r.node.startPosition.row;
    const lineStart = L.start(row);
    const prefix = source.slice(lineStart, r.start);
    // Code before the definition on its line (`class A { fun b()`) is not part of it.
    const start = /[{};]/.test(prefix) ? r.start : lineStart;
    let end = -1;
    if (HAS_BODY.has(kind)) {
      let body = r.node.childForFieldName('body');
      if (!body) {
        const value = r.node.childForFieldName('value');
        body = value?.childForFieldName('body') ?? null;
      }
      if (!body) {
        for (let i = r.node.namedChildCount - 1; i >= 0; i--) {
          const c = r.node.namedChild(i);
          if (c && BODY_TYPES.has(c.type)) {
            body = c;
            break;
          }
        }
      }
      if (body && body.startIndex > r.start) end = body.startIndex;
    }
    let text: string;
    if (end > 0) text = source.slice(start, end);
    else if (HAS_BODY.has(kind)) {
      // A type without a body field (Go `type X struct {`): up to the `{` opening its members.
      text = source.slice(start, Math.min(r.end, L.start(row + 3)));
      const brace = text.indexOf('{');
      if (brace > 0) text = text.slice(0, brace);
      // Objective-C `@implementation X` has no braces: its members start the next lines.
      const member = text.search(/\n\s*(?:[-+]\s*\(|@(?:end|property|synthesize)\b)/);
      if (member > 0) text = text.slice(0, member);
    } else if (kind === 'type') {
      // Type aliases are short and their right-hand side is the point: up to three lines.
      text = source.slice(start, Math.min(r.end, L.start(row + 3)));
    } else {
      // Constants and variables: their first line.
      text = source.slice(start, Math.min(r.end, L.end(row)));
    }
    // Bound the work of the regular expressions below on pathological declarations.
    if (text.length > 2000) text = text.slice(0, 2000);
    if (text.includes('\n')) {
      const lines = text.split('\n');
      text = [lines[0], ...lines.slice(1).filter((l) => !/^\s*(\/\/|#(?![[!])|\/\*|\*)/.test(l))].join('\n');
    }
    let sig = collapse(text).replace(LEADING_ANNOTATIONS, '');
    sig = sig.replace(/\s*[{:;]\s*$/, '').trim();
    return clip(sig, MAX_SIGNATURE);
  }

  private localsQuery(language: LanguageId, rt: LanguageRuntime): Query | undefined {
    const cached = this.localsQueries.get(language);
    if (cached !== undefined) return cached ?? undefined;
    const file = path.join(this.loc.queriesDir, 'locals', `${LOCALS_BASE[language] ?? language}.scm`);
    let query: Query | null = null;
    if (fs.existsSync(file)) {
      try {
        query = new TreeSitter.Query(rt.language, fs.readFileSync(file, 'utf8'));
      } catch (e) {
        throw new VltError('PARSER_UNAVAILABLE', `cannot load the ${language} locals query: ${String(e)}`, { language, file }, { cause: e });
      }
    }
    this.localsQueries.set(language, query);
    return query ?? undefined;
  }

  extraQuery(kind: string, language: LanguageId): Query | undefined {
    if (language === 'markdown' || !/^[a-z]+$/.test(kind)) return undefined;
    const key = `${kind}/${language}`;
    const cached = this.extraQueries.get(key);
    if (cached !== undefined) return cached ?? undefined;
    const rt = this.runtime(language);
    const file = path.join(this.loc.queriesDir, kind, `${EXTRA_QUERY_BASE[language] ?? language}.scm`);
    let query: Query | null = null;
    if (fs.existsSync(file)) {
      try {
        query = new TreeSitter.Query(rt.language, fs.readFileSync(file, 'utf8'));
      } catch (e) {
        throw new VltError('PARSER_UNAVAILABLE', `cannot load the ${language} ${kind} query: ${String(e)}`, { language, file }, { cause: e });
      }
    }
    this.extraQueries.set(key, query);
    return query ?? undefined;
  }

  prepare(language: LanguageId): void {
    if (language === 'markdown') return;
    this.localsQuery(language, this.runtime(language));
  }

  withTree<T>(language: LanguageId, source: string, fn: (root: Node, locals: Query | undefined) => T): T {
    const t = this.openTree(language, source);
    try {
      return fn(t.root, t.locals);
    } finally {
      t.dispose();
    }
  }

  openTree(language: LanguageId, source: string): { root: Node; locals: Query | undefined; dispose(): void } {
    if (language === 'markdown') throw new VltError('PARSER_UNAVAILABLE', 'markdown has no syntax tree for navigation', { language });
    const rt = this.runtime(language);
    const locals = this.localsQuery(language, rt);
    this.parser ??= new TreeSitter.Parser();
    this.parser.setLanguage(rt.language);
    const tree = this.parser.parse(source);
    if (!tree) throw new VltError('INTERNAL', `tree-sitter returned no tree for a ${language} file`);
    let live = true;
    return {
      root: tree.rootNode,
      locals,
      dispose: () => {
        if (live) tree.delete();
        live = false;
      },
    };
  }

  dispose(): void {
    for (const q of this.localsQueries.values()) q?.delete();
    this.localsQueries.clear();
    for (const q of this.extraQueries.values()) q?.delete();
    this.extraQueries.clear();
    for (const rt of this.runtimes.values()) rt.query.delete();
    this.runtimes.clear();
    this.parser?.delete();
    this.parser = undefined;
  }
}

/**
 * Creates a parser. Grammars and queries are found in `opts` when given, else next to the
 * bundle (`dist/wasm`, `dist/queries`), else in node_modules and `src/core/parse/queries`.
 */
export async function createCodeParser(opts: CodeParserOptions = {}): Promise<CodeParser> {
  const loc = locate(opts);
  await initRuntime(loc.runtimeWasm);
  return new TreeSitterCodeParser(loc, opts.chunk);
}
