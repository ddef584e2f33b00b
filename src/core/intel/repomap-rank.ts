/**
 * Stages 1-3 of the repository map (see repomap.ts): the definitions and who uses each name,
 * the file graph they make, and personalised PageRank over it, spread to the definitions.
 * The weights are named constants, each with the reason it departs from Aider's where it does.
 */
import type { SymbolRow } from '../store/store';
import type { LanguageId, SymbolKind } from '../types';
import { pageRank, RankGraphBuilder, type RankGraph } from './pagerank';

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
  isNavigationOnly?(file: { generated: boolean; path?: string }): boolean;
}

/** A file→file link that is not about one identifier, such as a resolved import; ids are the store's file ids. */
export interface ExtraEdge {
  from: number;
  to: number;
  weight: number;
}

// ---------------------------------------------------------------------------------------------
// Ranking weights: Aider's, and a few of ours where Aider's map goes wrong; each with its reason
// ---------------------------------------------------------------------------------------------

/** Damping of PageRank, as networkx and Aider use it. */
const DAMPING = 0.85;
/** An identifier the caller mentioned (a focus symbol, or a word spelling a defined name) matters most. */
export const MENTIONED_MUL = 10;
/** A word that is one part of an identifier (`retry` in `runWithRetry`) is a weaker mention. */
export const PART_MENTION_MUL = 3;
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
// Stage 1-2: tags and graph (cached per index state)
// ---------------------------------------------------------------------------------------------

export interface FileNode {
  id: number;
  path: string;
  language: LanguageId;
}

/** A ranked unit: all definitions of one name in one file (Aider's (file, ident) pair). */
export interface Entry {
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

export interface Ranking {
  nodeRank: Float64Array;
  /** Each entry's rank (pinned entries without their lead). */
  entryRank: Float64Array;
  /** Unit ids in rank order: `u < entries.length` is an entry, else the bare file `u - entries.length`. */
  order: Int32Array;
  iterations: number;
}

/** Stages 1-2 of one index state, and the rankings and costs computed on it since. */
export interface MapState {
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
// eslint-disable-next-line max-lines-per-function -- stages 1 and 2 in one pass over the definitions, each linking rule commented where it applies; the rules share the per-name tables the pass builds
export function buildState(source: RepoMapSource, key: string, extraEdges: ((files: ReadonlyArray<{ id: number; path: string }>) => Iterable<ExtraEdge>) | undefined): MapState {
  const t0 = performance.now();
  const store = source.store;
  const files: FileNode[] = store
    .listFiles()
    .filter((f) => !source.isNavigationOnly?.({ generated: f.generated === true, path: f.path }))
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

/** What a focus changes in stage 3 (made by repomap-focus.ts). */
export interface Personalization {
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

export function rank(state: MapState, p: Personalization | undefined): { ranking: Ranking; ms: number } {
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

/** Definitions in line order, an enclosing one before what it encloses. */
export function byPosition(a: SymbolRow, b: SymbolRow): number {
  return a.startLine - b.startLine || b.endLine - a.endLine || a.id - b.id;
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
