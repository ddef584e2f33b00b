/**
 * The repository map: the files of a workspace with their most important definitions, ranked
 * and cut to a token budget, so that a model sees the shape of a code base in a thousand
 * tokens. It is Aider's repo map, read as a pipeline of small stages:
 *
 *   1. tags      every definition (from the index's symbol table) and, per identifier, the
 *                files that use it (the index's reference postings);
 *   2. graph     files are nodes; each file that uses an identifier links to the files that
 *                define it, weighted by how telling the identifier is ({@link identifierWeight});
 *                where this departs from Aider, the constant or comment says why;
 *   3. rank      personalised PageRank over the files, then each file's rank is spread over its
 *                out-links to rank (file, identifier) definitions;
 *   4. fit       the largest prefix of the ranked definitions whose rendering fits the budget,
 *                counted with a real tokenizer, never over it;
 *   5. render    `path:` then one line per definition: `L<line> <signature>`, members indented
 *                under their type (its header shown even when only a member ranked), files in
 *                the order of their best definition. Top-level definitions and members of
 *                types are ranked; definitions local to a function are not.
 *
 * Stages 1-3 without a focus depend only on the index, so their result is cached per index
 * state ({@link RepoMapSource.stateVersion}); a focus (files, symbols, words of a question)
 * re-runs stage 3 on the cached graph with a personalisation vector and heavier identifiers.
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { distance } from 'fastest-levenshtein';
import { VltError } from '../errors';
import { identifierParts, tokenizeQuery } from '../search/tokenizer';
import type { SymbolRow } from '../store/store';
import type { LanguageId, SymbolKind } from '../types';
import { pageRank, RankGraphBuilder, type RankGraph } from './pagerank';

// ---------------------------------------------------------------------------------------------
// Public contract
// ---------------------------------------------------------------------------------------------

/** What the map reads: the engine satisfies it as it is. */
export interface RepoMapSource {
  /** Absolute workspace root, to accept absolute focus and scope paths. */
  readonly root: string;
  /** Changes whenever what the index holds may have changed; the cache key. */
  readonly stateVersion: string;
  readonly store: {
    listFiles(): Array<{ id: number; path: string; language: LanguageId; generated?: boolean }>;
    allSymbols(): SymbolRow[];
    allRefPostings(): Array<{ name: string; fileIds: number[] }>;
  };
  /** Files indexed for navigation only (generated code): never on the map. */
  isNavigationOnly?(file: { generated: boolean }): boolean;
}

/** A file→file link that is not about one identifier, such as a resolved import; ids are the store's file ids. */
export interface ExtraEdge {
  from: number;
  to: number;
  weight: number;
}

export interface RepoMapperOptions {
  /**
   * Extra weighted file→file edges, asked for once per index state when the graph is built
   * (resolved imports, for instance). They shift file ranks; definitions are still ranked
   * through identifiers only.
   */
  extraEdges?: (files: ReadonlyArray<{ id: number; path: string }>) => Iterable<ExtraEdge>;
  /** Replaces the tokenizer (tests); defaults to gpt-tokenizer's o200k_base. */
  countTokens?: TokenCounter;
}

export interface RepoMapOptions {
  /** Only show files under this workspace-relative directory (or this one file). */
  scope?: string;
  /** Budget for the map, in tokens (default {@link DEFAULT_MAP_TOKENS}). */
  maxTokens?: number;
  /** Allow a budget above {@link MAX_MAP_TOKENS}. */
  allowLarge?: boolean;
  /** Focus items of any kind, classified here: a file or directory path, a symbol name, or words. */
  focus?: string[];
  /** Workspace-relative paths or directory prefixes to rank around. */
  focusFiles?: string[];
  /** Identifiers (`parseConfig`) or qualified names (`Writer.Close`) to rank around. */
  focusSymbols?: string[];
  /** Free text (a question): words are matched against identifiers, their parts, and path segments. */
  focusWords?: string[];
  /** The `next_cursor` of a previous call with the same scope and focus. */
  cursor?: string;
  /**
   * Count the text's tokens as it costs inside a JSON string (escaped newlines and quotes),
   * which is how a tool answer carries it.
   */
  countJsonEscaped?: boolean;
}

export interface RepoMapSymbol {
  name: string;
  kind: SymbolKind;
  line: number;
  end_line: number;
  signature: string;
  /**
   * The rank that reached this definition through the files using it; a definition no other
   * file uses gets a small share of its own file's rank instead.
   */
  rank: number;
}

export interface RepoMapFile {
  path: string;
  /** The file's PageRank (the ranks of all files sum to 1). */
  rank: number;
  /** The ranked definitions shown for this file, in line order (context headers excluded). */
  symbols: RepoMapSymbol[];
}

export interface RepoMapResult {
  text: string;
  files: RepoMapFile[];
  /** Tokens of `text` as counted for the budget. */
  tokens: number;
  /** More ranked definitions remain (see `next_cursor`), or an entry had to be shortened. */
  truncated: boolean;
  /** Pass back as `cursor` to continue with the next-ranked definitions. */
  next_cursor?: string;
  /** Focus items that matched nothing, and similar remarks; also at the top of `text` when they fit. */
  notes: string[];
  stats: {
    graphMs: number;
    rankMs: number;
    renderMs: number;
    /** The graph came from the cache (no index read). */
    cached: boolean;
    /** PageRank iterations of this call (0 when the ranking came from the cache). */
    iterations: number;
    /** Ranked entries in scope, from the first page on. */
    entries: number;
  };
}

export type { TokenCounter } from '../tokens';
import type { TokenCounter } from '../tokens';

/** Aider's default map budget. */
export const DEFAULT_MAP_TOKENS = 1024;
/** No map is larger than this unless the caller says `allowLarge` (the MCP answer limit). */
export const MAX_MAP_TOKENS = 20_000;

// ---------------------------------------------------------------------------------------------
// Ranking weights: Aider's, and a few of ours where Aider's map goes wrong; each with its reason
// ---------------------------------------------------------------------------------------------

/** Damping of PageRank, as networkx and Aider use it. */
const DAMPING = 0.85;
/** An identifier the caller mentioned (a focus symbol, or a word spelling a defined name) matters most. */
const MENTIONED_MUL = 10;
/** A word that is one part of an identifier (`retry` in `runWithRetry`) is a weaker mention. */
const PART_MENTION_MUL = 3;
/** Long compound names (`parse_config`, `runWithRetry`) are specific: a use of one is a real dependency. */
const SPECIFIC_NAME_MUL = 10;
const SPECIFIC_NAME_MIN_LENGTH = 8;
/**
 * A short plain name defined only as a member (`get`, `push`, `size`, `Close`) is matched, by
 * name, by every `.get()` and `.push()` of the repository, most of which call the standard
 * library's. Aider has no such rule; without it a class's `push` method tops the map of any
 * TypeScript tree.
 */
const PLAIN_MEMBER_MUL = 0.1;
/**
 * One- and two-letter names (`r`, `N`, `db`) are mostly locals and fields elsewhere; a
 * definition spelled so collects their uses by name.
 */
const TINY_NAME_MUL = 0.1;
const TINY_NAME_MAX_LENGTH = 2;
/** `_private` names are implementation details of their file. */
const PRIVATE_NAME_MUL = 0.1;
/** A name defined in many files (`String`, `close`, `init`) says little about which one a use means. */
const COMMON_NAME_MUL = 0.1;
const COMMON_NAME_DEFINERS = 5;
/**
 * A definition no other file uses (an entry point, a file's private helper) still has a place
 * in the map: it ranks as this share of its file's rank, about what a definition gets from one
 * plain use in a file of a third of that rank. Aider instead gives such definitions a 0.1
 * self-link inside PageRank, which hands a file's whole rank to its one unused helper when the
 * file uses nothing else, and puts a private `_clamp` at the top of the map.
 */
const UNREFERENCED_SHARE = 0.01;
/**
 * The links of a file that weigh less than this in all (a use of a name defined in many files,
 * a `_private` one) pass on only their share of its rank and let the rest teleport (see
 * `minOutWeight` in pagerank.ts), rather than hand a weak link the file's whole rank. A file
 * using any one ordinary name ranks as in Aider.
 */
const MIN_OUT_WEIGHT = 1;

/**
 * Predeclared identifiers a file uses without any workspace file defining them: a use of one
 * is not a dependency. Only names that are rarely also a method or helper of the workspace are
 * listed (Python's `filter` and `open`, Go 1.21's `min` and `max` are left out on purpose).
 */
const PREDECLARED: Partial<Record<LanguageId, readonly string[]>> = {
  go: [
    'any', 'bool', 'byte', 'comparable', 'complex64', 'complex128', 'error', 'float32', 'float64', 'int', 'int8', 'int16', 'int32', 'int64',
    'rune', 'string', 'uint', 'uint8', 'uint16', 'uint32', 'uint64', 'uintptr', 'true', 'false', 'iota', 'nil',
    'append', 'cap', 'close', 'complex', 'copy', 'delete', 'imag', 'len', 'make', 'new', 'panic', 'print', 'println', 'real', 'recover',
  ],
  python: [
    'str', 'int', 'float', 'bool', 'bytes', 'bytearray', 'complex', 'list', 'dict', 'set', 'frozenset', 'tuple', 'object', 'None', 'True', 'False',
    'isinstance', 'issubclass', 'len', 'super', 'print', 'range', 'enumerate', 'zip', 'sorted', 'reversed', 'hasattr', 'getattr', 'setattr', 'callable', 'repr',
    'property', 'staticmethod', 'classmethod', 'Exception', 'BaseException', 'ValueError', 'TypeError', 'KeyError', 'IndexError', 'AttributeError',
    'RuntimeError', 'NotImplementedError', 'StopIteration', 'OSError', 'ImportError', 'LookupError', 'AssertionError',
  ],
  rust: ['bool', 'char', 'str', 'i8', 'i16', 'i32', 'i64', 'i128', 'isize', 'u8', 'u16', 'u32', 'u64', 'u128', 'usize', 'f32', 'f64', 'Self', 'self'],
};

/** {@link PREDECLARED} inverted: name → the languages that predeclare it. */
const PREDECLARED_BY_NAME: ReadonlyMap<string, ReadonlySet<LanguageId>> = (() => {
  const m = new Map<string, Set<LanguageId>>();
  for (const [lang, names] of Object.entries(PREDECLARED) as Array<[LanguageId, readonly string[]]>) {
    for (const n of names) {
      let langs = m.get(n);
      if (!langs) m.set(n, (langs = new Set()));
      langs.add(lang);
    }
  }
  return m;
})();

// ---------------------------------------------------------------------------------------------
// Rendering limits
// ---------------------------------------------------------------------------------------------

/** A signature longer than this is cut: the map is a table of contents, not the code. */
const MAX_SIGNATURE_CHARS = 160;
/** One file defining the same name many times (overloads, generated tables) shows this many, then a count. */
const MAX_ROWS_PER_ENTRY = 12;
/** Focused rankings kept per index state, so that paging through a focused map does not re-rank. */
const FOCUS_CACHE_SIZE = 8;

// ---------------------------------------------------------------------------------------------
// Tokenizer
// ---------------------------------------------------------------------------------------------

import { loadTokenCounter } from '../tokens';
export { loadTokenCounter };

// ---------------------------------------------------------------------------------------------
// Stage 1-2: tags and graph (cached per index state)
// ---------------------------------------------------------------------------------------------

interface FileNode {
  id: number;
  path: string;
  language: LanguageId;
}

/** A ranked unit: all definitions of one name in one file (Aider's (file, ident) pair). */
interface Entry {
  node: number;
  ident: number;
  /** The graph groups whose flow reaches this definition, or -1 (see {@link buildState}). */
  viaPlain: number;
  viaAll: number;
  /** Definitions in line order. */
  rows: SymbolRow[];
  /** No other file uses the name: ranked by {@link UNREFERENCED_SHARE}. */
  unreferenced: boolean;
}

interface Ranking {
  nodeRank: Float64Array;
  /** Each entry's rank (pinned entries without their lead). */
  entryRank: Float64Array;
  /** Unit ids in rank order: `u < entries.length` is an entry, else the bare file `u - entries.length`. */
  order: Int32Array;
  iterations: number;
}

interface MapState {
  key: string;
  files: FileNode[];
  graph: RankGraph;
  /** Defined names, in order of first definition; an index into it is an "ident". */
  idents: string[];
  identOf: Map<string, number>;
  /** Per ident: its graph groups, and the nodes defining it. */
  identGroups: number[][];
  identDefiners: number[][];
  entries: Entry[];
  /** Per node: its mappable definitions in line order (for container headers). */
  fileRows: SymbolRow[][];
  graphMs: number;
  base?: Ranking;
  focused: Map<string, Ranking>;
  /** Lazily built lookups for focus resolution. */
  lookups?: FocusLookups;
  /** Standalone token cost of each unit, for the first guess of how many fit. */
  unitCost: Map<number, number>;
  /** See {@link tieOrder}. */
  tie?: Int32Array;
}

/**
 * Whether a path is test code by the conventions of the languages indexed: a test folder
 * (`test/`, `tests/`, `__tests__/`, `testdata/`, `spec/`), or a test file name (`x_test.go`,
 * `test_x.py`, `x_test.py`, `conftest.py`, `x.test.ts`, `x.spec.js`, `XTest.java`, `x_spec.rb`).
 */
export function isTestPath(p: string): boolean {
  const segments = p.split('/');
  const base = segments.pop() ?? '';
  if (segments.some((d) => /^(?:tests?|__tests__|testdata|specs?)$/i.test(d))) return true;
  return /(?:_test\.go|^test_.*\.py|_test\.py|^conftest\.py|\.(?:test|spec)\.[cm]?[jt]sx?|(?:Test|Tests|IT)\.(?:java|kt|cs)|_spec\.rb|_test\.rb)$/.test(base);
}

/**
 * Definitions the map shows: code symbols, not markdown headings, and not fields: a field is
 * a line of its type's shape, which the type's own line stands for, and the navigator indexes
 * fields to resolve member accesses, not to spend a map's budget on them.
 */
function isMappable(row: SymbolRow, language: LanguageId | undefined): boolean {
  return row.kind !== 'heading' && row.kind !== 'field' && language !== 'markdown' && row.name.length > 0;
}

/** Kinds whose members a map shows: a method of a class, a constant of an enum. */
const TYPE_KINDS: ReadonlySet<SymbolKind> = new Set<SymbolKind>(['class', 'interface', 'struct', 'enum', 'trait', 'type', 'module']);

/**
 * A file's definitions without those local to a function or a value (`const push = …` inside a
 * function body): they are implementation details, and because references are matched by name
 * they would collect every `array.push()` of the repository. A member whose container is not in
 * the same file (a Go method, a Rust impl) is kept.
 */
function withoutLocals(rows: SymbolRow[]): SymbolRow[] {
  if (!rows.some((r) => r.container)) return rows;
  const kindOf = new Map<string, SymbolKind>();
  for (const r of rows) if (!kindOf.has(r.qualifiedName)) kindOf.set(r.qualifiedName, r.kind);
  const isLocal = (r: SymbolRow): boolean => {
    const kind = r.container !== undefined ? kindOf.get(r.container) : undefined;
    return kind !== undefined && !TYPE_KINDS.has(kind);
  };
  return rows.filter((r) => !isLocal(r));
}

/**
 * Aider's weight of an identifier, before any focus, plus two rules of ours against names
 * that collide with the standard library's and with locals: {@link PLAIN_MEMBER_MUL} when every
 * definition of the name is a member of a type, {@link TINY_NAME_MUL} for one or two letters.
 */
export function identifierWeight(name: string, definingFiles: number, onlyMembers = false): number {
  let mul = 1;
  // One pass over the characters: this runs for every defined name of the repository.
  let upper = false;
  let lower = false;
  let joiner = false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 65 && c <= 90) upper = true;
    else if (c >= 97 && c <= 122) lower = true;
    else if (c === 95 || c === 45) joiner = true;
  }
  // snake_case and kebab-case need a letter besides the joiner; camelCase needs both cases.
  const compound = (joiner && (upper || lower)) || (upper && lower);
  const specific = compound && name.length >= SPECIFIC_NAME_MIN_LENGTH;
  if (specific) mul *= SPECIFIC_NAME_MUL;
  else if (onlyMembers) mul *= PLAIN_MEMBER_MUL;
  if (name.length <= TINY_NAME_MAX_LENGTH) mul *= TINY_NAME_MUL;
  if (name.startsWith('_')) mul *= PRIVATE_NAME_MUL;
  if (definingFiles > COMMON_NAME_DEFINERS) mul *= COMMON_NAME_MUL;
  return mul;
}

/**
 * Links the users of a name to its definers `domain` (indices into `definers`), recording in
 * `via` the groups that reach each definer. Code outside the tests never uses a test file's
 * definitions (Go's _test.go files, a src/test tree), so its uses link to the other definers
 * only; tests link to all. A use of a name that k files define is a use of one of them: each
 * link weighs 1/k, so a name defined five times does not pass on five times its users' rank
 * (Aider links each fully). The index's postings say which files use a name, not how often, so
 * every user weighs the same (Aider: the square root of its use count).
 */
function linkDomain(
  builder: RankGraphBuilder,
  weight: number,
  users: Int32Array,
  domain: readonly number[],
  definers: readonly number[],
  isTest: Uint8Array,
  via: Array<{ plain: number; all: number }>,
  groups: number[],
): void {
  if (users.length === 0) return;
  const targets = domain.map((j) => definers[j]!);
  if (!targets.some((n) => isTest[n])) {
    const g = builder.addGroup(weight / targets.length, users, targets);
    groups.push(g);
    for (const j of domain) via[j]!.all = g;
    return;
  }
  const plainDomain = domain.filter((j) => !isTest[definers[j]!]);
  const plainUsers = users.filter((n) => !isTest[n]);
  const testUsers = users.filter((n) => isTest[n]);
  if (plainUsers.length > 0 && plainDomain.length > 0) {
    const g = builder.addGroup(
      weight / plainDomain.length,
      plainUsers,
      plainDomain.map((j) => definers[j]!),
    );
    groups.push(g);
    for (const j of plainDomain) via[j]!.plain = g;
  }
  if (testUsers.length > 0) {
    const g = builder.addGroup(weight / targets.length, testUsers, targets);
    groups.push(g);
    for (const j of domain) via[j]!.all = g;
  }
}

/**
 * A definition no other file can name: a `private` member in the languages that spell it so.
 * Other files' uses of the name mean another definition. (Rust's privacy is per module tree,
 * not per file, and Go's is handled per package in {@link buildState}.)
 */
function isFilePrivate(row: SymbolRow, language: LanguageId): boolean {
  return PRIVATE_MODIFIER_LANGUAGES.has(language) && /^(?:@[\w.]+(?:\([^)]*\))?\s+)*private\b/.test(row.signature);
}

const PRIVATE_MODIFIER_LANGUAGES: ReadonlySet<LanguageId> = new Set<LanguageId>(['java', 'kotlin', 'csharp', 'typescript', 'tsx', 'php', 'swift']);

/** A Go identifier that starts with a lower-case letter (or `_`): unexported, package-private. */
function isGoUnexported(name: string): boolean {
  const c = name.charCodeAt(0);
  return (c >= 97 && c <= 122) || c === 95;
}

/** Per node, a number identifying its directory. */
function directoryIds(files: readonly FileNode[]): Int32Array {
  const ids = new Map<string, number>();
  return Int32Array.from(files, (f) => {
    const dir = f.path.slice(0, Math.max(0, f.path.lastIndexOf('/')));
    let id = ids.get(dir);
    if (id === undefined) ids.set(dir, (id = ids.size));
    return id;
  });
}

/** Indices of `items` grouped by `key`, groups in order of first appearance. */
function splitBy<T>(items: readonly T[], key: (item: T) => number): number[][] {
  const groups = new Map<number, number[]>();
  items.forEach((item, j) => {
    const k = key(item);
    let list = groups.get(k);
    if (!list) groups.set(k, (list = []));
    list.push(j);
  });
  return [...groups.values()];
}

/**
 * Stages 1 and 2: the definitions, who uses each name, and the graph, built once per index
 * state. Aider links every file using a name to every file defining it; here a use links only
 * to definitions it could mean (each rule explained where it is applied): not to a language's
 * predeclared names, not to the user's own file, not across Go packages for unexported names,
 * not to `private` members of another file, not from code outside the tests into test files;
 * and a use of a name defined k times weighs 1/k per definition.
 */
function buildState(source: RepoMapSource, key: string, extraEdges: RepoMapperOptions['extraEdges']): MapState {
  const t0 = performance.now();
  const store = source.store;
  const files: FileNode[] = store
    .listFiles()
    .filter((f) => !source.isNavigationOnly?.({ generated: f.generated === true }))
    .map((f) => ({ id: f.id, path: f.path, language: f.language }));
  // Nodes in path order, names in order of first definition, referencers in node order: the
  // graph is then the same whatever order the indexer stored files in, and so are the ranks,
  // to the last bit.
  files.sort((a, b) => compareStrings(a.path, b.path));
  const nodeOfId = new Map<number, number>();
  files.forEach((f, i) => nodeOfId.set(f.id, i));
  // The same lookup as an array where ids are dense enough (they are, unless files churned a
  // lot): it runs once per symbol and once per reference posting.
  const maxId = files.reduce((m, f) => Math.max(m, f.id), 0);
  const denseNode = maxId <= 4 * files.length + 1024 ? new Int32Array(maxId + 1).fill(-1) : undefined;
  if (denseNode) files.forEach((f, i) => (denseNode[f.id] = i));
  const nodeOf = (id: number): number | undefined => {
    if (!denseNode) return nodeOfId.get(id);
    const n = id >= 0 && id < denseNode.length ? denseNode[id]! : -1;
    return n >= 0 ? n : undefined;
  };

  // Stage 1: definitions, bucketed by name without an object per (file, name).
  const rows: SymbolRow[] = [];
  const rowNode: number[] = [];
  const rowIdent: number[] = [];
  const identOf = new Map<string, number>();
  const idents: string[] = [];
  const fileRows: SymbolRow[][] = files.map(() => []);
  for (const row of store.allSymbols()) {
    const node = nodeOf(row.fileId);
    if (node !== undefined && isMappable(row, files[node]!.language)) fileRows[node]!.push(row);
  }
  for (let node = 0; node < files.length; node++) {
    const kept = withoutLocals(fileRows[node]!).sort(byPosition);
    fileRows[node] = kept;
    for (const row of kept) {
      let ident = identOf.get(row.name);
      if (ident === undefined) {
        ident = idents.length;
        idents.push(row.name);
        identOf.set(row.name, ident);
      }
      rows.push(row);
      rowNode.push(node);
      rowIdent.push(ident);
    }
  }
  // Rows of each ident, contiguous; a stable counting sort keeps them in file, then line order.
  const rowStart = new Int32Array(idents.length + 1);
  for (const ident of rowIdent) rowStart[ident + 1]!++;
  for (let i = 0; i < idents.length; i++) rowStart[i + 1]! += rowStart[i]!;
  const fill = rowStart.slice(0, idents.length);
  const rowsByIdent = new Int32Array(rows.length);
  rowIdent.forEach((ident, i) => (rowsByIdent[fill[ident]!++] = i));

  // Who uses each defined name. A use of a language's predeclared name (Go's `int`, `error`,
  // `len`) depends on the language, not on the workspace file that happens to declare it for
  // documentation (Go's builtin/builtin.go) or a same-named helper, so it links nowhere.
  const referencers: Array<Int32Array | undefined> = new Array(idents.length);
  for (const { name, fileIds } of store.allRefPostings()) {
    const ident = identOf.get(name);
    if (ident === undefined) continue;
    const predeclaredIn = PREDECLARED_BY_NAME.get(name);
    const nodes: number[] = [];
    for (const fileId of fileIds) {
      const n = nodeOf(fileId);
      if (n !== undefined && !predeclaredIn?.has(files[n]!.language)) nodes.push(n);
    }
    if (nodes.length > 0) referencers[ident] = Int32Array.from(nodes).sort();
  }

  // Stage 2: the graph. Each (file, name) is one ranked entry; each name links its users to
  // its definers through a group per visibility domain, or two when tests define it (below).
  const isTest = Uint8Array.from(files, (f) => (isTestPath(f.path) ? 1 : 0));
  const dirOf = directoryIds(files);
  const builder = new RankGraphBuilder(files.length);
  const entries: Entry[] = [];
  const identGroups: number[][] = [];
  const identDefiners: number[][] = [];
  const NO_NODES = new Int32Array(0);
  // Scratch membership marks, reused for every name: this loop runs once per defined name.
  const isDefiner = new Uint8Array(files.length);
  for (let ident = 0; ident < idents.length; ident++) {
    const name = idents[ident]!;
    const definers: number[] = [];
    const defRows: SymbolRow[][] = [];
    // Per definer: whether another file can see any of its definitions of the name.
    const visible: boolean[] = [];
    let onlyMembers = true;
    let allGo = true;
    for (let k = rowStart[ident]!; k < rowStart[ident + 1]!; k++) {
      const i = rowsByIdent[k]!;
      const node = rowNode[i]!;
      const language = files[node]!.language;
      if (definers[definers.length - 1] !== node) {
        definers.push(node);
        defRows.push([]);
        visible.push(false);
        if (language !== 'go') allGo = false;
      }
      defRows[defRows.length - 1]!.push(rows[i]!);
      if (!isFilePrivate(rows[i]!, language)) visible[visible.length - 1] = true;
      if (rows[i]!.container === undefined) onlyMembers = false;
    }
    identDefiners.push(definers);
    // A file's use of a name it defines itself resolves to its own definition (scoping rules
    // agree in every language here), so it links nowhere; a name only its own file uses is a
    // private helper and ranks as unreferenced. Aider keeps these self-links, and a file of
    // helpers calling each other then fills the map with its internals.
    let refs = NO_NODES;
    const users = referencers[ident];
    if (users) {
      for (const d of definers) isDefiner[d] = 1;
      refs = users.filter((n) => isDefiner[n] === 0);
      for (const d of definers) isDefiner[d] = 0;
    }
    const groups: number[] = [];
    if (definers.length === 1) {
      // The common case, without the bookkeeping of several definers: same rules, one target.
      const d = definers[0]!;
      let users = refs;
      if (users.length > 0 && visible[0] && allGo && isGoUnexported(name)) users = users.filter((n) => dirOf[n] === dirOf[d]);
      if (users.length > 0 && visible[0] && isTest[d]) users = users.filter((n) => isTest[n] === 1);
      const g = users.length > 0 && visible[0] ? builder.addGroup(identifierWeight(name, 1, onlyMembers), users, definers) : -1;
      if (g >= 0) groups.push(g);
      identGroups.push(groups);
      entries.push({ node: d, ident, viaPlain: -1, viaAll: g, rows: defRows[0]!, unreferenced: g < 0 });
      continue;
    }
    const via = definers.map(() => ({ plain: -1, all: -1 }));
    if (refs.length > 0) {
      const weight = identifierWeight(name, definers.length, onlyMembers);
      // Go's unexported names are visible in their own package (directory) only; matched by
      // name across the tree, `limit` or `buf` would collect every local variable so named.
      const seen = definers.map((_, j) => j).filter((j) => visible[j]);
      if (allGo && isGoUnexported(name)) {
        for (const domain of splitBy(seen, (j) => dirOf[definers[j]!]!)) {
          const dir = dirOf[definers[seen[domain[0]!]!]!]!;
          linkDomain(builder, weight, refs.filter((n) => dirOf[n] === dir), domain.map((k) => seen[k]!), definers, isTest, via, groups);
        }
      } else if (seen.length > 0) {
        linkDomain(builder, weight, refs, seen, definers, isTest, via, groups);
      }
    }
    identGroups.push(groups);
    for (let j = 0; j < definers.length; j++) {
      const { plain, all } = via[j]!;
      entries.push({ node: definers[j]!, ident, viaPlain: plain, viaAll: all, rows: defRows[j]!, unreferenced: plain < 0 && all < 0 });
    }
  }
  if (extraEdges) {
    for (const e of extraEdges(files)) {
      const from = nodeOfId.get(e.from);
      const to = nodeOfId.get(e.to);
      if (from !== undefined && to !== undefined && e.weight > 0 && Number.isFinite(e.weight)) builder.addEdge(from, to, e.weight);
    }
  }
  return {
    key,
    files,
    graph: builder.build(),
    idents,
    identOf,
    identGroups,
    identDefiners,
    entries,
    fileRows,
    graphMs: performance.now() - t0,
    focused: new Map(),
    unitCost: new Map(),
  };
}

// ---------------------------------------------------------------------------------------------
// Stage 3: rank
// ---------------------------------------------------------------------------------------------

interface Personalization {
  /** Teleport weights per node, or undefined for uniform. */
  vector?: Float64Array;
  /** Group index → multiplier of its weight. */
  groupMul: Map<number, number>;
  /**
   * Entries of the focus symbols: they lead the map. PageRank raises what a focus uses, not
   * the focus itself (its rank comes from its users), yet whoever asks about `OrderService`
   * wants to see `OrderService` first.
   */
  pinned: Set<number>;
  /** Identifies this personalization, for the focused-ranking cache. */
  key: string;
}

function rank(state: MapState, p: Personalization | undefined): { ranking: Ranking; ms: number } {
  const t0 = performance.now();
  const g = state.graph;
  let groupWeight: Float64Array | undefined;
  if (p && p.groupMul.size > 0) {
    groupWeight = g.groupWeight.slice();
    for (const [group, mul] of p.groupMul) groupWeight[group] = groupWeight[group]! * mul;
  }
  const res = pageRank(g, {
    alpha: DAMPING,
    minOutWeight: MIN_OUT_WEIGHT,
    ...(p?.vector ? { personalization: p.vector } : {}),
    ...(groupWeight ? { groupWeight } : {}),
    // A focused ranking starts from the plain one: most of the graph barely moves.
    ...(state.base ? { start: state.base.nodeRank } : {}),
  });
  // Each file's rank spread over its out-links gives the rank of the definitions they reach:
  // a group's flow reaches each of its definers.
  const entryRank = new Float64Array(state.entries.length);
  state.entries.forEach((e, i) => {
    entryRank[i] = e.unreferenced
      ? UNREFERENCED_SHARE * res.rank[e.node]!
      : (e.viaPlain >= 0 ? res.groupFlow[e.viaPlain]! : 0) + (e.viaAll >= 0 ? res.groupFlow[e.viaAll]! : 0);
  });
  // Pinned entries lead; ranks are probabilities (at most 1), so +2 puts them first.
  const key = p && p.pinned.size > 0 ? entryRank.slice() : entryRank;
  if (p) for (const i of p.pinned) key[i] = key[i]! + 2;
  const tie = tieOrder(state);
  const entryIds = Array.from(state.entries.keys());
  entryIds.sort((a, b) => key[b]! - key[a]! || tie[a]! - tie[b]!);
  // Files with nothing to show come last, by their own rank (Aider lists them as bare paths).
  const bare: number[] = [];
  const hasEntries = new Uint8Array(state.files.length);
  for (const e of state.entries) hasEntries[e.node] = 1;
  for (let n = 0; n < state.files.length; n++) if (!hasEntries[n]) bare.push(n);
  bare.sort((a, b) => res.rank[b]! - res.rank[a]! || compareStrings(state.files[a]!.path, state.files[b]!.path));
  const order = new Int32Array(entryIds.length + bare.length);
  order.set(entryIds);
  bare.forEach((n, i) => (order[entryIds.length + i] = state.entries.length + n));
  return { ranking: { nodeRank: res.rank, entryRank, order, iterations: res.iterations }, ms: performance.now() - t0 };
}

/** Each entry's position in path-then-line order, the tie-breaker of equal ranks (computed once per state). */
function tieOrder(state: MapState): Int32Array {
  if (state.tie) return state.tie;
  const ids = Array.from(state.entries.keys());
  const es = state.entries;
  // Nodes are numbered in path order.
  ids.sort((a, b) => es[a]!.node - es[b]!.node || es[a]!.rows[0]!.startLine - es[b]!.rows[0]!.startLine || a - b);
  const tie = new Int32Array(ids.length);
  ids.forEach((id, pos) => (tie[id] = pos));
  state.tie = tie;
  return tie;
}

// ---------------------------------------------------------------------------------------------
// Focus resolution
// ---------------------------------------------------------------------------------------------

interface FocusLookups {
  /** Lower-cased defined name → idents. */
  byLower: Map<string, number[]>;
  /** Identifier part → idents, filled per part on demand (see {@link identsWithPart}). */
  byPart: Map<string, number[]>;
  /** The idents lower-cased, for screening by substring. */
  lowerIdents: string[];
  /** Lower-cased path segment, file name, file stem or stem part → nodes. */
  byPathWord: Map<string, number[]>;
}

function lookups(state: MapState): FocusLookups {
  if (state.lookups) return state.lookups;
  const push = (m: Map<string, number[]>, k: string, v: number) => {
    const list = m.get(k);
    if (!list) m.set(k, [v]);
    else if (list[list.length - 1] !== v) list.push(v);
  };
  const byLower = new Map<string, number[]>();
  const lowerIdents = state.idents.map((name) => name.toLowerCase());
  lowerIdents.forEach((name, i) => push(byLower, name, i));
  const byPathWord = new Map<string, number[]>();
  state.files.forEach((f, n) => {
    const segments = f.path.toLowerCase().split('/');
    const base = segments[segments.length - 1] ?? '';
    const stem = base.replace(/\.[^.]*$/, '');
    const words = new Set([...segments, stem, ...tokenizeQuery(stem.replace(/[^A-Za-z0-9]+/g, ' '))]);
    for (const w of words) if (w) push(byPathWord, w, n);
  });
  state.lookups = { byLower, byPart: new Map(), lowerIdents, byPathWord };
  return state.lookups;
}

/**
 * Idents whose name has `part` among its identifier parts. Splitting every name up front costs
 * more than a whole focused ranking on a large tree, so names are screened by substring first
 * and only the candidates are split, once per part asked for.
 */
function identsWithPart(state: MapState, part: string): number[] {
  const lk = lookups(state);
  let hit = lk.byPart.get(part);
  if (hit) return hit;
  hit = [];
  // A part is a piece of the lower-cased name (at most minus a plural "s"), so a name without
  // it as a substring cannot have it as a part.
  const lower = lk.lowerIdents;
  for (let i = 0; i < lower.length; i++) {
    const name = lower[i]!;
    if (name.length > part.length && name.includes(part) && identifierParts(state.idents[i]!).includes(part)) hit.push(i);
  }
  lk.byPart.set(part, hit);
  return hit;
}

/** A user path made workspace-relative with forward slashes, no `./` and no trailing slash. */
function normalizePath(root: string, p: string): string {
  let s = p.trim().replace(/\\/g, '/');
  if (path.isAbsolute(s)) {
    const rel = path.relative(root, s);
    if (!rel.startsWith('..') && !path.isAbsolute(rel)) s = rel.replace(/\\/g, '/');
  }
  s = s.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  return s === '.' ? '' : s;
}

/** Nodes whose path is `p`, lies under directory `p`, or (with `suffix`) ends with `/p`. */
function filesMatching(state: MapState, p: string, suffix: boolean): number[] {
  if (!p) return state.files.map((_, i) => i);
  const out: number[] = [];
  state.files.forEach((f, i) => {
    if (f.path === p || f.path.startsWith(`${p}/`) || (suffix && f.path.endsWith(`/${p}`))) out.push(i);
  });
  return out;
}

/** The ident and defining nodes of a symbol name, bare (`Close`) or qualified (`Writer.Close`, `io::Read`). */
function symbolMatches(state: MapState, name: string): { ident: number; nodes: number[] } | undefined {
  const direct = state.identOf.get(name);
  if (direct !== undefined) return { ident: direct, nodes: state.identDefiners[direct]! };
  const m = /^(.*?)(?:\.|::|#|\/)([^.:#/]+)$/.exec(name);
  if (!m) return undefined;
  const ident = state.identOf.get(m[2]!);
  if (ident === undefined) return undefined;
  const nodes = new Set<number>();
  for (const e of state.entries) {
    if (e.ident !== ident) continue;
    if (e.rows.some((r) => r.qualifiedName === name || endsWithQualified(r.qualifiedName, name))) nodes.add(e.node);
  }
  return nodes.size > 0 ? { ident, nodes: [...nodes] } : undefined;
}

function endsWithQualified(qualifiedName: string, suffix: string): boolean {
  if (!qualifiedName.endsWith(suffix)) return false;
  const before = qualifiedName.slice(0, qualifiedName.length - suffix.length);
  return before.endsWith('.') || before.endsWith('::') || before.endsWith('#') || before.endsWith('/');
}

/**
 * A word and, after it, its likely stems: the tokenizer only drops a plural "s", but a
 * question says "decoded" or "scheduling" where the code says `decode` and `schedule`.
 */
function wordForms(token: string): string[] {
  const forms = [token];
  const strip = (suffix: string, add = '') => {
    if (token.length > suffix.length + 2 && token.endsWith(suffix)) forms.push(token.slice(0, -suffix.length) + add);
  };
  strip('ing');
  strip('ing', 'e');
  strip('ed');
  strip('d');
  strip('es');
  strip('s');
  return forms;
}

const FOCUS_ITEM_MAX_CHARS = 2000;

function resolveFocus(state: MapState, root: string, opts: RepoMapOptions, notes: string[]): Personalization | undefined {
  const personal = new Map<number, number>();
  const groupMul = new Map<number, number>();
  const bump = (ident: number, mul: number) => {
    for (const g of state.identGroups[ident]!) groupMul.set(g, Math.max(groupMul.get(g) ?? 1, mul));
  };
  const personalize = (nodes: Iterable<number>) => {
    for (const n of nodes) personal.set(n, 1);
  };
  const clip = (s: string) => (s.length > 80 ? `${s.slice(0, 80)}…` : s);

  const focusFile = (raw: string, suffix: boolean): boolean => {
    const nodes = filesMatching(state, normalizePath(root, raw), suffix);
    if (nodes.length === 0 || nodes.length === state.files.length) return false;
    personalize(nodes);
    return true;
  };
  const pinned = new Set<number>();
  const focusSymbol = (name: string): boolean => {
    const m = symbolMatches(state, name);
    if (!m) return false;
    bump(m.ident, MENTIONED_MUL);
    personalize(m.nodes);
    const nodes = new Set(m.nodes);
    state.entries.forEach((e, i) => {
      if (e.ident === m.ident && nodes.has(e.node)) pinned.add(i);
    });
    return true;
  };
  const unmatchedWords: string[] = [];
  const focusWords = (text: string): boolean => {
    const lk = lookups(state);
    let any = false;
    // A word spelling a defined name exactly is a mention of it, as in Aider.
    for (const raw of text.match(/[A-Za-z_$][A-Za-z0-9_$]*/g) ?? []) {
      const ident = state.identOf.get(raw);
      if (ident !== undefined) {
        bump(ident, MENTIONED_MUL);
        any = true;
      }
    }
    // How many of the words name a part of each identifier: "how is a cursor decoded" makes
    // `decodeCursor` (two parts named) weigh more than `encodeCursor` (one).
    const partHits = new Map<number, number>();
    for (const word of new Set(text.split(/[^A-Za-z0-9_$]+/).filter(Boolean))) {
      let hit = false;
      const parts = new Set<number>();
      for (const token of tokenizeQuery(word)) {
        for (const form of wordForms(token)) {
          const exact = lk.byLower.get(form) ?? [];
          const withPart = identsWithPart(state, form);
          const nodes = lk.byPathWord.get(form) ?? [];
          if (exact.length + withPart.length + nodes.length === 0) continue;
          for (const g of exact) bump(g, MENTIONED_MUL);
          for (const g of withPart) parts.add(g);
          personalize(nodes);
          hit = true;
          break;
        }
      }
      for (const g of parts) partHits.set(g, (partHits.get(g) ?? 0) + 1);
      if (hit) any = true;
      else if (tokenizeQuery(word).length > 0) unmatchedWords.push(word);
    }
    for (const [g, n] of partHits) bump(g, Math.min(MENTIONED_MUL, PART_MENTION_MUL ** n));
    return any;
  };

  for (const raw of opts.focusFiles ?? []) {
    if (!focusFile(raw, true)) notes.push(`focus file "${clip(raw)}" matches no indexed file`);
  }
  for (const raw of opts.focusSymbols ?? []) {
    if (!focusSymbol(raw.trim())) notes.push(`focus symbol "${clip(raw)}" has no definition in the index`);
  }
  for (const raw of opts.focusWords ?? []) focusWords(raw);
  for (const raw of opts.focus ?? []) {
    const item = raw.trim();
    if (!item) continue;
    // A path or a directory prefix first, then a defined symbol, then a path suffix, then words.
    const looksLikePath = /[/\\]/.test(item) || /\.[A-Za-z0-9]{1,8}$/.test(item);
    if (focusFile(item, false) || (!/\s/.test(item) && focusSymbol(item)) || (looksLikePath && focusFile(item, true))) continue;
    if (looksLikePath && !/\s/.test(item)) {
      notes.push(`focus "${clip(item)}" matches no indexed file or symbol`);
      continue;
    }
    const before = unmatchedWords.length;
    const matched = focusWords(item);
    if (/\s/.test(item)) continue;
    // One token: say what became of it, once, rather than list it among unmatched words.
    unmatchedWords.length = before;
    if (!matched) notes.push(`focus "${clip(item)}" matches no indexed file, symbol, identifier part or path segment`);
    else if (/^[A-Za-z_$][\w$]*$/.test(item) && identifierParts(item).length > 1) {
      notes.push(`focus "${clip(item)}" is not a defined symbol; its words were matched instead`);
    }
  }
  if (unmatchedWords.length > 0) notes.push(`focus words matching no identifier or path: ${[...new Set(unmatchedWords)].slice(0, 10).map(clip).join(', ')}`);

  if (personal.size === 0 && groupMul.size === 0) return undefined;
  let vector: Float64Array | undefined;
  if (personal.size > 0) {
    vector = new Float64Array(state.files.length);
    for (const [n, w] of personal) vector[n] = w;
  }
  const key = JSON.stringify([[...personal.keys()].sort((a, b) => a - b), [...groupMul].sort((a, b) => a[0] - b[0]), [...pinned].sort((a, b) => a - b)]);
  return { ...(vector ? { vector } : {}), groupMul, pinned, key };
}

// ---------------------------------------------------------------------------------------------
// Stage 5: render (stage 4, fitting, is in RepoMapper.render)
// ---------------------------------------------------------------------------------------------

interface Page {
  text: string;
  files: RepoMapFile[];
}

function oneLine(s: string): string {
  // A declaration over several lines, joined: no blank inside brackets, no trailing comma.
  const flat = s
    .replace(/\s+/g, ' ')
    .replace(/([([]) /g, '$1')
    .replace(/,? ([)\]])/g, '$1')
    .trim();
  const chars = [...flat];
  return chars.length > MAX_SIGNATURE_CHARS ? `${chars.slice(0, MAX_SIGNATURE_CHARS).join('')}…` : flat;
}

function lastSegment(qualified: string): string {
  const m = /([^.:#/]+)$/.exec(qualified);
  return m ? m[1]! : qualified;
}

/** The definitions enclosing `row` in its own file, outermost first (a method's class, ...). */
function enclosing(rows: readonly SymbolRow[], row: SymbolRow): SymbolRow[] {
  const chain: SymbolRow[] = [];
  let cur = row;
  for (let depth = 0; depth < 8 && cur.container; depth++) {
    const want = cur.container;
    let best: SymbolRow | undefined;
    for (const r of rows) {
      if (r.startLine > cur.startLine) break;
      if (r !== cur && r.qualifiedName === want && r.endLine >= cur.endLine) best = r;
    }
    if (!best) break;
    chain.unshift(best);
    cur = best;
  }
  return chain;
}

/**
 * Renders units (entries or bare files) grouped by file, files in the order their first unit
 * ranks, definitions in line order under their enclosing definitions. `minimal` shows only
 * the first definition of each entry, by name, for the one-entry fallback of a tiny budget.
 */
function renderPage(state: MapState, ranking: Ranking, units: readonly number[], minimal = false): Page {
  const nEntries = state.entries.length;
  const byNode = new Map<number, { selected: SymbolRow[]; more: number }>();
  const rankOf = new Map<SymbolRow, number>();
  for (const u of units) {
    const node = u < nEntries ? state.entries[u]!.node : u - nEntries;
    let slot = byNode.get(node);
    if (!slot) {
      slot = { selected: [], more: 0 };
      byNode.set(node, slot);
    }
    if (u >= nEntries) continue;
    const rows = state.entries[u]!.rows;
    const limit = minimal ? 1 : MAX_ROWS_PER_ENTRY;
    slot.selected.push(...rows.slice(0, limit));
    for (const r of rows) rankOf.set(r, ranking.entryRank[u]!);
    slot.more += Math.max(0, rows.length - limit);
  }
  const lines: string[] = [];
  const files: RepoMapFile[] = [];
  for (const [node, slot] of byNode) {
    const file = state.files[node]!;
    const rankValue = Number(ranking.nodeRank[node]!.toPrecision(6));
    if (slot.selected.length === 0) {
      lines.push(file.path);
      files.push({ path: file.path, rank: rankValue, symbols: [] });
      continue;
    }
    lines.push(`${file.path}:`);
    const allRows = state.fileRows[node]!;
    const shown = new Map<SymbolRow, number>();
    for (const row of slot.selected) {
      const chain = enclosing(allRows, row);
      chain.forEach((r, depth) => {
        if (!shown.has(r)) shown.set(r, depth);
      });
      shown.set(row, chain.length);
    }
    const ordered = [...shown.keys()].sort((a, b) => a.startLine - b.startLine || b.endLine - a.endLine || a.id - b.id);
    for (const row of ordered) {
      const depth = shown.get(row)!;
      let sig = minimal ? row.qualifiedName || row.name : oneLine(row.signature || row.name);
      // A member declared outside its type's body (a Rust impl method) names the type, unless its signature does (a Go receiver).
      if (depth === 0 && row.container && !minimal) {
        const owner = lastSegment(row.container);
        if (!sig.includes(owner)) sig += ` (in ${owner})`;
      }
      lines.push(`  L${row.startLine} ${'  '.repeat(depth)}${sig}`);
    }
    if (slot.more > 0) lines.push(`  ⋮ ${slot.more} more definition${slot.more > 1 ? 's' : ''} of these names`);
    files.push({
      path: file.path,
      rank: rankValue,
      symbols: [...slot.selected]
        .sort(byPosition)
        .map((r) => ({ name: r.name, kind: r.kind, line: r.startLine, end_line: r.endLine, signature: oneLine(r.signature || r.name), rank: Number(rankOf.get(r)!.toPrecision(6)) })),
    });
  }
  return { text: lines.length ? `${lines.join('\n')}\n` : '', files };
}

// ---------------------------------------------------------------------------------------------
// Cursor
// ---------------------------------------------------------------------------------------------

/**
 * A cursor is `m1-<offset>-<fingerprint>-<index state>`: plain rather than base64, because a
 * base64 cursor costs a model three times the tokens. Nothing in it is secret; the fingerprint
 * (scope and focus) and the index state only make a cursor used out of context fail clearly.
 */
const CURSOR_PATTERN = /^m1-(\d{1,9})-([0-9a-f]{12})-([A-Za-z0-9._:]{1,64})$/;

function encodeCursor(offset: number, fingerprint: string, state: string): string {
  return `m1-${offset}-${fingerprint}-${stateTag(state)}`;
}

/** The index state as the cursor carries it: as is when short and plain, else hashed. */
function stateTag(state: string): string {
  return /^[A-Za-z0-9._:]{1,64}$/.test(state) ? state : createHash('sha1').update(state).digest('hex').slice(0, 16);
}

/** The example a tool sizes its answer envelope with: as long as a real cursor gets. */
export const SAMPLE_CURSOR = encodeCursor(999_999, 'f'.repeat(12), '9999.9999');

function decodeCursor(cursor: string, fingerprint: string, state: string, units: number): number {
  const m = CURSOR_PATTERN.exec(cursor);
  if (!m) {
    throw new VltError('USAGE', 'cursor is not a repository-map cursor; pass the next_cursor of a previous map unchanged, or leave cursor out to start from the top');
  }
  if (m[2] !== fingerprint) {
    throw new VltError('USAGE', 'cursor belongs to a map with a different scope or focus; repeat the same scope and focus, or leave cursor out to start from the top');
  }
  if (m[3] !== stateTag(state)) {
    throw new VltError('USAGE', 'the index changed since this cursor was made, so the ranking moved; leave cursor out to start from the top');
  }
  const offset = Number(m[1]);
  if (offset > units) throw new VltError('USAGE', 'cursor points past the end of the map; leave cursor out to start from the top');
  return offset;
}

function fingerprint(root: string, opts: RepoMapOptions): string {
  const norm = (xs: string[] | undefined) => [...(xs ?? [])].map((x) => x.trim()).sort();
  const parts = [normalizePath(root, opts.scope ?? ''), norm(opts.focus), norm(opts.focusFiles), norm(opts.focusSymbols), norm(opts.focusWords)];
  return createHash('sha1').update(JSON.stringify(parts)).digest('hex').slice(0, 12);
}

// ---------------------------------------------------------------------------------------------
// The mapper
// ---------------------------------------------------------------------------------------------

const mappers = new WeakMap<RepoMapSource, RepoMapper>();

/**
 * Builds and caches the repository map of one engine (or any {@link RepoMapSource}). Keep
 * one per engine, e.g. through {@link repoMapperFor}: the cache is what makes a second map cheap.
 */
export class RepoMapper {
  private state: MapState | undefined;

  constructor(
    private readonly source: RepoMapSource,
    private readonly options: RepoMapperOptions = {},
  ) {}

  /** Renders the map; see {@link RepoMapOptions}. Bad input (budget, scope, cursor) is a USAGE error. */
  async render(opts: RepoMapOptions = {}): Promise<RepoMapResult> {
    const maxTokens = opts.maxTokens ?? DEFAULT_MAP_TOKENS;
    if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new VltError('USAGE', `max tokens must be a positive integer, not ${String(maxTokens)}`);
    if (maxTokens > MAX_MAP_TOKENS && !opts.allowLarge) {
      throw new VltError('USAGE', `a map of ${maxTokens} tokens is larger than the limit of ${MAX_MAP_TOKENS}; ask for at most ${MAX_MAP_TOKENS} and page with the cursor`);
    }
    for (const list of [opts.focus, opts.focusFiles, opts.focusSymbols, opts.focusWords]) {
      if ((list?.length ?? 0) > 100) throw new VltError('USAGE', 'at most 100 focus items are accepted');
      for (const item of list ?? []) if (item.length > FOCUS_ITEM_MAX_CHARS) throw new VltError('USAGE', `a focus item is longer than ${FOCUS_ITEM_MAX_CHARS} characters`);
    }
    const countRaw = this.options.countTokens ?? (await loadTokenCounter());
    const count: TokenCounter = opts.countJsonEscaped ? (t) => countRaw(JSON.stringify(t)) : countRaw;

    // Stages 1-2, from the cache when the index did not change.
    const key = this.source.stateVersion;
    const cached = this.state?.key === key;
    if (!cached) this.state = buildState(this.source, key, this.options.extraEdges);
    const state = this.state!;

    const root = this.source.root;
    const scope = normalizePath(root, opts.scope ?? '');
    const inScope = scope ? filesMatching(state, scope, false) : undefined;
    if (inScope && inScope.length === 0) throw scopeError(state, scope);

    // Stage 3.
    const notes: string[] = [];
    if (state.files.length === 0) notes.push('the index holds no files; run `vlt coderag init` first');
    const personal = resolveFocus(state, root, opts, notes);
    let rankMs = 0;
    let iterations = 0;
    let ranking: Ranking;
    if (!state.base) {
      const r = rank(state, undefined);
      state.base = r.ranking;
      rankMs += r.ms;
      iterations += r.ranking.iterations;
    }
    if (!personal) ranking = state.base;
    else {
      const hit = state.focused.get(personal.key);
      if (hit) ranking = hit;
      else {
        const r = rank(state, personal);
        ranking = r.ranking;
        rankMs += r.ms;
        iterations += r.ranking.iterations;
        if (state.focused.size >= FOCUS_CACHE_SIZE) state.focused.delete(state.focused.keys().next().value!);
        state.focused.set(personal.key, ranking);
      }
    }

    // Stage 4: the units of this scope from the cursor on, and how many of them fit.
    const t0 = performance.now();
    let units = Array.from(ranking.order);
    if (inScope) {
      const allowed = new Uint8Array(state.files.length);
      for (const n of inScope) allowed[n] = 1;
      const nEntries = state.entries.length;
      units = units.filter((u) => allowed[u < nEntries ? state.entries[u]!.node : u - nEntries] === 1);
    }
    const fp = fingerprint(root, opts);
    const offset = opts.cursor !== undefined ? decodeCursor(opts.cursor, fp, key, units.length) : 0;
    const rest = units.slice(offset);

    const compose = (page: Page, withNotes: boolean) => (withNotes && notes.length ? `${notes.map((n) => `note: ${n}`).join('\n')}\n${page.text}` : page.text);
    let withNotes = notes.length > 0 && count(compose({ text: '', files: [] }, true)) <= maxTokens;
    const measured = new Map<number, { page: Page; tokens: number }>();
    const attempt = (k: number) => {
      let m = measured.get(k);
      if (!m) {
        const page = renderPage(state, ranking, rest.slice(0, k));
        m = { page, tokens: count(compose(page, withNotes)) };
        measured.set(k, m);
      }
      return m;
    };
    const fixed = withNotes ? count(compose({ text: '', files: [] }, true)) : 0;
    let k = this.fitCount(state, ranking, rest, maxTokens, fixed, countRaw, (n) => attempt(n).tokens);
    let page = attempt(k).page;
    let tokens = attempt(k).tokens;
    let shortened = false;
    if (k === 0 && rest.length > 0) {
      // Not even the first entry fits: show it by name only rather than repeat this page forever.
      withNotes = false;
      const minimal = renderPage(state, ranking, rest.slice(0, 1), true);
      const minimalTokens = count(minimal.text);
      if (minimalTokens > maxTokens) {
        throw new VltError('USAGE', `max tokens ${maxTokens} is too small for the next map entry, which needs about ${minimalTokens} tokens even by name only; ask for more tokens`);
      }
      page = minimal;
      tokens = minimalTokens;
      k = 1;
      shortened = true;
    }
    const text = compose(page, withNotes);
    const next = offset + k;
    const result: RepoMapResult = {
      text,
      files: page.files,
      tokens,
      truncated: shortened || next < units.length,
      notes,
      stats: {
        graphMs: cached ? 0 : round2(state.graphMs),
        rankMs: round2(rankMs),
        renderMs: round2(performance.now() - t0),
        cached,
        iterations,
        entries: units.length,
      },
    };
    if (next < units.length) result.next_cursor = encodeCursor(next, fp, key);
    return result;
  }

  /**
   * The largest k such that the first k units fit in `limit`, by exact count (`measure`).
   * Each unit's standalone token cost (cached per index state) gives a first guess; each exact
   * count then rescales the guess by how far off it was, and a binary search settles the last
   * few units. A 20K-token map costs a handful of full counts this way, rather than one per
   * halving of a list of tens of thousands of definitions.
   */
  private fitCount(state: MapState, ranking: Ranking, rest: readonly number[], limit: number, fixed: number, countRaw: TokenCounter, measure: (k: number) => number): number {
    const n = rest.length;
    if (n === 0 || limit - fixed <= 0) return 0;
    const nEntries = state.entries.length;
    // prefix[k]: estimated tokens of the first k units, filled as far as a question needs.
    const prefix = [0];
    const seenFiles = new Set<number>();
    const largestWithin = (budget: number): number => {
      while (prefix.length <= n && prefix[prefix.length - 1]! <= budget) {
        const u = rest[prefix.length - 1]!;
        const node = u < nEntries ? state.entries[u]!.node : u - nEntries;
        let cost = state.unitCost.get(u);
        if (cost === undefined) {
          const text = renderPage(state, ranking, [u]).text;
          // Without its path line: that is paid once per file, below.
          cost = countRaw(text.slice(text.indexOf('\n') + 1));
          state.unitCost.set(u, cost);
        }
        if (!seenFiles.has(node)) {
          seenFiles.add(node);
          cost += countRaw(`${state.files[node]!.path}:\n`);
        }
        prefix.push(prefix[prefix.length - 1]! + cost);
      }
      let k = prefix.length - 1;
      while (k > 0 && prefix[k]! > budget) k--;
      return k;
    };
    // Invariant: the first lo units fit (0 trivially), the first hi do not (n + 1: a sentinel).
    let lo = 0;
    let hi = n + 1;
    let k = Math.min(n, Math.max(1, largestWithin(limit - fixed)));
    for (let probe = 0; probe < 4 && hi - lo > 1; probe++) {
      const tokens = measure(k);
      if (tokens <= limit) lo = k;
      else hi = k;
      if (hi - lo <= 1) break;
      const ratio = Math.max(0.25, (tokens - fixed) / Math.max(1, prefix[k]!));
      k = Math.min(hi - 1, Math.max(lo + 1, largestWithin((limit - fixed) / ratio)));
    }
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      if (measure(mid) <= limit) lo = mid;
      else hi = mid;
    }
    return lo;
  }
}

/** The engine's mapper, created on first use and kept as long as the engine is. */
export function repoMapperFor(source: RepoMapSource, options?: RepoMapperOptions): RepoMapper {
  let m = mappers.get(source);
  if (!m) {
    m = new RepoMapper(source, options);
    mappers.set(source, m);
  }
  return m;
}

function scopeError(state: MapState, scope: string): VltError {
  const dirs = new Set<string>();
  for (const f of state.files) {
    const parts = f.path.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  // Directories whose path, or whose last segment, is a typo away from what was asked.
  const want = scope.toLowerCase();
  const last = want.split('/').pop() ?? want;
  const scored: Array<[string, number]> = [];
  for (const d of dirs) {
    const lower = d.toLowerCase();
    const dist = Math.min(distance(lower, want), distance(lower.split('/').pop() ?? lower, last) + (lower.endsWith(last) ? 0 : 1));
    if (dist <= Math.max(1, Math.floor(last.length / 3))) scored.push([d, dist]);
  }
  scored.sort((a, b) => a[1] - b[1] || a[0].length - b[0].length || compareStrings(a[0], b[0]));
  const top = [...new Set(state.files.map((f) => (f.path.includes('/') ? `${f.path.split('/')[0]}/` : f.path)))].slice(0, 8);
  const hint =
    scored.length > 0 ? `did you mean ${scored.slice(0, 5).map((x) => x[0]).join(', ')}?` : top.length > 0 ? `indexed top-level entries: ${top.join(', ')}` : 'the index is empty';
  return new VltError('USAGE', `scope "${scope}" matches no indexed file; ${hint}`);
}

function byPosition(a: SymbolRow, b: SymbolRow): number {
  return a.startLine - b.startLine || b.endLine - a.endLine || a.id - b.id;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function round2(ms: number): number {
  return Math.round(ms * 100) / 100;
}
