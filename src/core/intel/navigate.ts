/**
 * Definitions and references through a provider chain, each answer carrying its provenance:
 *
 * 1. `lsp`: a language server (exact, type-aware), when one runs for the file's language and
 *    answers within the timeout;
 * 2. `graph`: the index's own resolution: the syntax tree of the file (locals scopes, member
 *    receivers), imports resolved to files, re-exports followed, class members and base
 *    classes searched; then, for names no scope binds, every indexed definition of the name;
 * 3. `ctags`: Universal Ctags' tags for the name, when installed and only when the index did
 *    not settle it: name matches only, merged with the index's candidates;
 * 4. `search`: the hybrid search, when nothing above knows the name.
 *
 * Only LSP answers are `exact`. A fallback answer says how it was resolved (`how`) and how
 * sure it is (`confidence`); an ambiguous name lists every candidate, ranked, and is never
 * silently narrowed to one.
 */
import * as path from 'node:path';
import { VltError } from '../errors';
import type { Logger, WorkspaceFs } from '../ports';
import type { CodeParser } from '../parse/parser';
import { isTsFamily } from '../parse/languages';
import type { IndexStore, SymbolRow } from '../store/store';
import type { LanguageId } from '../types';
import type { CodeGraph } from './code-graph';
import { goFileMatches, goFileNameMatches } from './go-build';
import type { LanguageServers, SourceRange } from './lsp';
import { KIND_RANK, packageQualified, qualifies, rankDefinitions, splitQualified, suggestNames, type QualifiedName } from './names';
import type { NavLocation, Provenance } from './location';
import { gatherReferences, rankReferences } from './references';
import { IndexResolver, MAX_DEPTH } from './resolution';
import { nameCol, SourceFiles, type FileFacts, type Loc, type TreeCache } from './sources';
import { classAt, classInfo } from './syntax';

export type { NavLocation, Provenance } from './location';

export interface ProviderRun {
  provider: Provenance;
  status: 'answered' | 'empty' | 'skipped' | 'failed';
  reason?: string;
  ms: number;
}

export interface NavAnswer {
  query: string;
  /** The identifier asked about. */
  symbol: string;
  /** Definitions, or references for `references`, best first. */
  locations: NavLocation[];
  /** Several candidates and nothing to choose between them: all are listed. */
  ambiguous: boolean;
  /** Names that exist, when the asked one does not (prefix and edit-distance matches). */
  suggestions?: string[];
  /** What the caller should know: a server not ready, a fallback that answered, truncation. */
  notes: string[];
  providers: ProviderRun[];
  /** For references: the definition they were gathered for. */
  definition?: NavLocation;
  /** More exist than are listed, or the search stopped before the end (notes say which). */
  truncated?: boolean;
  /** For references: how many there are in all, when every candidate file was searched. */
  total?: number;
  /** Why there are no locations; set whenever `locations` is empty. */
  reason?: NavReason;
}

/**
 * Why an answer lists nothing. Never silent: every empty answer carries one.
 * - `not-defined`: the name (or the identifier at the position) has no definition in the workspace;
 * - `no-uses`: the definition exists and no candidate file uses it;
 * - `budget`: the time budget ran out before any use was found;
 * - `lsp-failed`: the language server failed and the index found nothing either.
 * (No identifier at a position is a `USAGE` error, not an answer.)
 */
export interface NavReason {
  code: 'not-defined' | 'no-uses' | 'budget' | 'lsp-failed';
  message: string;
}

/**
 * An answer as it leaves the navigator: an empty one always says why, in `reason` and in its
 * notes (which every host already shows).
 */
function withReason(a: NavAnswer): NavAnswer {
  if (a.locations.length > 0) return a;
  a.reason ??= { code: 'not-defined', message: `nothing named ${a.symbol || a.query} was found in the workspace` };
  if (!a.notes.includes(a.reason.message)) a.notes.push(a.reason.message);
  return a;
}

/**
 * Uses resolved on syntax trees (the costly way) before a reference search stops, unless a
 * larger limit is asked for: enough to count every use of all but the most used methods
 * exactly, few enough that a name like `String` or `Len` answers in seconds, not minutes.
 */
const TREE_USES_CAP = 2000;

/**
 * How long a language server still loading its workspace (see `LanguageServerInfo.warm`) is
 * waited for when the index has its references already: long enough for a small workspace's
 * server to answer exactly, short enough that a large one's first load is not waited out.
 */
const LOADING_PATIENCE_MS = 2000;

/** The reason for an empty answer, naming a language server that failed first. */
function emptyReason(code: 'not-defined' | 'no-uses', message: string, providers: readonly ProviderRun[]): NavReason {
  const failed = providers.find((p) => p.provider === 'lsp' && p.status === 'failed');
  return failed ? { code: 'lsp-failed', message: `the language server failed (${failed.reason ?? 'no reason given'}), and ${message}` } : { code, message };
}

/**
 * Ctags is asked only when the index cannot settle the name itself (its tags are name matches,
 * and loading them costs a process or a large cache read): said so in the providers.
 */
const ctagsNotNeeded = (): ProviderRun => ({ provider: 'ctags', status: 'skipped', reason: 'not needed: the index resolved the name', ms: 0 });
const ctagsNotForReferences = (): ProviderRun => ({ provider: 'ctags', status: 'skipped', reason: "not needed: references are gathered for the index's first definition", ms: 0 });

/** A Universal Ctags tag, as the ctags port returns it. */
export interface Tag {
  name: string;
  path: string;
  line: number;
  kind: string;
  scope?: string;
}

/** Universal Ctags, reached by the host (it spawns the program). */
export interface TagsProvider {
  /** Why ctags cannot answer, or undefined when it can. */
  unavailable(): Promise<string | undefined>;
  lookup(name: string): Promise<Tag[]>;
}

export interface NavigatorDeps {
  root: string;
  fs: WorkspaceFs;
  store: IndexStore;
  graph(): Promise<CodeGraph>;
  parser(): Promise<CodeParser>;
  /** The host's syntax-tree cache, kept across calls; without one, trees live for one call. */
  trees?: TreeCache;
  logger: Logger;
  lsp?: LanguageServers;
  tags?: TagsProvider;
  /** Every distinct definition name, when the host keeps them (spares a table scan per navigator). */
  symbolNames?(): readonly string[];
  /** Top search hits for a name: `path` and 1-based `line`. */
  search?(query: string): Promise<Array<{ path: string; line: number; symbol: string | null }>>;
}

export interface NavOptions {
  /** Skip the language server (the fallback chain alone, as `--no-lsp` and the benchmark do). */
  noLsp?: boolean;
  /**
   * Upper bound for the LSP step (default 10 s). Given explicitly, it is also how long a server
   * still loading its workspace is waited for; without it, references do not wait for one
   * (see `referencesWhileLoading`).
   */
  lspTimeoutMs?: number;
  /** For references: the most locations listed (the total still counts every use found). */
  limit?: number;
  /**
   * For references resolved by the index: stop after this long and answer with what was found,
   * saying that the list is partial (files nearest the definition are resolved first).
   */
  budgetMs?: number;
  signal?: AbortSignal;
}

type Query = { kind: 'position'; path: string; line: number; col: number } | { kind: 'name'; name: string };

/** `file:line:col` (also `file:line:col` with a Windows drive letter) or a symbol name. */
export function parseNavQuery(q: string): Query {
  const trimmed = q.trim();
  if (trimmed.length === 0) throw new VltError('USAGE', 'give a symbol name or FILE:LINE:COL');
  const m = /^(.+):(\d+):(\d+)$/.exec(trimmed);
  if (m?.[1] && m[2] && m[3]) return { kind: 'position', path: m[1], line: Number(m[2]), col: Number(m[3]) };
  if (/^(.+\.[\w]+):(\d+)$/.test(trimmed)) throw new VltError('USAGE', `"${trimmed}" has a line but no column; give FILE:LINE:COL`);
  return { kind: 'name', name: trimmed };
}
export class Navigator {
  /** The files a call reads and the index's resolution over them; both forget everything between calls. */
  private readonly files: SourceFiles;
  private readonly resolver: IndexResolver;

  constructor(private readonly deps: NavigatorDeps) {
    this.files = new SourceFiles(deps);
    this.resolver = new IndexResolver(deps, this.files);
  }

  /** Frees every cached tree and forgets per-call caches. */
  private reset(): void {
    this.files.reset();
    this.resolver.reset();
  }

  private suggestions(name: string): string[] {
    return suggestNames(this.deps.store, this.allNames(), name);
  }

  private namesCache: readonly string[] | undefined;
  private allNames(): readonly string[] {
    this.namesCache ??= this.deps.symbolNames ? this.deps.symbolNames() : [...new Set(this.deps.store.allSymbols().map((s) => s.name))];
    return this.namesCache;
  }

  /** Workspace-relative POSIX path of a user-given path; refuses paths outside the workspace. */
  relPath(p: string): string {
    const abs = path.resolve(this.deps.root, p);
    const rel = path.relative(this.deps.root, abs);
    if (rel.startsWith('..') || path.isAbsolute(rel)) throw new VltError('PATH_OUTSIDE_WORKSPACE', `${p} is outside the workspace ${this.deps.root}`);
    return rel.split(path.sep).join('/');
  }
  private describe(loc: Loc, provenance: Provenance, exact: boolean, confidence: NavLocation['confidence'], how: string): NavLocation {
    const out: NavLocation = { path: loc.path, line: loc.line, col: loc.col, provenance, exact, confidence, how };
    const file = this.deps.store.getFile(loc.path);
    const sym = file ? this.deps.store.symbolsOfFile(file.id).find((s) => s.startLine === loc.line) : undefined;
    if (sym) {
      out.kind = sym.kind;
      out.signature = sym.signature;
    }
    return out;
  }

  // ---- the chain --------------------------------------------------------------------------------

  async definition(query: string, opts: NavOptions = {}): Promise<NavAnswer> {
    this.reset();
    try {
      return withReason(await this.definitionInner(query, opts));
    } finally {
      if (!this.keep) this.reset();
    }
  }

  /**
   * Set while `references` runs: the definition step's trees stay for the uses, and ctags is not
   * asked when the index has a candidate (the uses are gathered for the first candidate, which
   * is the index's whatever ctags adds).
   */
  private keep = false;

  private async definitionInner(query: string, opts: NavOptions): Promise<NavAnswer> {
    const q = parseNavQuery(query);
    if (q.kind === 'name') return this.definitionByName(query, q.name, opts);
    const file = this.relPath(q.path);
    const facts = await this.files.fileFacts(file);
    if (!facts) {
      const exists = await this.deps.fs.stat(path.join(this.deps.root, file)).catch(() => undefined);
      if (!exists) throw new VltError('PATH_NOT_FOUND', `${file} does not exist in the workspace`);
      // A name in prose (a README, a comment in a file no parser reads) is looked up by name.
      const word = await this.wordAt(file, q.line, q.col);
      if (!word) throw new VltError('USAGE', `no identifier at ${file}:${q.line}:${q.col} (${file} has no parser, so only a name under the cursor can be looked up)`);
      const byName = await this.definitionByName(query, word, opts);
      return { ...byName, notes: [`${file} has no parser for its language: \`${word}\` was looked up by name`, ...byName.notes] };
    }
    this.checkPosition(file, facts, q.line, q.col);
    const providers: ProviderRun[] = [];
    const notes: string[] = [];
    const answer = (symbol: string, locations: NavLocation[], ambiguous = false): NavAnswer => ({ query, symbol, locations, ambiguous, notes, providers });

    // 1. LSP.
    const lspLocs = await this.lspStep('definition', file, facts.language, q.line, q.col, opts, providers, notes);
    const ident = await this.resolver.analyze(file, q.line, q.col);
    const name = ident?.target?.name;
    if (lspLocs && lspLocs.length > 0) {
      return answer(
        name ?? '',
        lspLocs.map((r) => this.describe({ path: r.path, line: r.startLine, col: r.startCol }, 'lsp', true, 'high', 'language server')),
      );
    }
    if (!name) throw new VltError('USAGE', `no identifier at ${file}:${q.line}:${q.col}`);

    // 2. The index's own resolution.
    const t0 = performance.now();
    const r = await this.resolver.resolveAt(file, q.line, q.col);
    if (r.locs.length > 0) {
      providers.push({ provider: 'graph', status: 'answered', reason: r.how, ms: performance.now() - t0 });
      providers.push(ctagsNotNeeded());
      if (lspLocs !== undefined) notes.push('answered by the index after the language server gave no answer');
      return answer(name, r.locs.map((l) => this.describe(l, 'graph', false, 'high', r.how)));
    }
    const candidates = r.candidates;
    providers.push({ provider: 'graph', status: candidates.length > 0 ? 'answered' : 'empty', reason: r.how, ms: performance.now() - t0 });

    // 3. ctags, when the index could not resolve the use: name matches, merged with the index's candidates.
    let tags: Tag[] | undefined;
    if (this.keep && candidates.length > 0) providers.push(ctagsNotForReferences());
    else tags = await this.ctagsStep(name, providers);
    if (candidates.length > 0 || (tags && tags.length > 0)) {
      const merged = this.mergeCandidates(candidates, tags ?? []);
      const unique = merged.length === 1;
      if (!unique) notes.push(`${merged.length} definitions are named ${name}; none could be chosen without types, so all are listed, nearest first`);
      return answer(
        name,
        merged.map((c) => ({ ...c, confidence: unique ? 'medium' : 'low', how: unique ? `the only definition named ${name}` : r.how })),
        !unique,
      );
    }
    // 4. Search.
    const hits = await this.searchStep(name, providers);
    if (hits.length > 0) {
      notes.push(`no definition of ${name} is indexed; these are search hits`);
      return answer(name, hits);
    }
    return {
      ...answer(name, []),
      suggestions: this.suggestions(name),
      reason: emptyReason('not-defined', `${name} at ${file}:${q.line}:${q.col} is not defined in the workspace (${r.how}; no indexed definition or search hit has this name)`, providers),
    };
  }

  private mergeCandidates(rows: readonly SymbolRow[], tags: readonly Tag[]): NavLocation[] {
    const out: NavLocation[] = rows.slice(0, 50).map((s) => ({
      path: s.path,
      line: s.startLine,
      col: 1,
      kind: s.kind,
      signature: s.signature,
      provenance: 'graph' as const,
      exact: false,
      confidence: 'low' as const,
      how: '',
    }));
    for (const t of tags) {
      if (out.some((o) => o.path === t.path && o.line === t.line)) continue;
      out.push({ path: t.path, line: t.line, col: 1, kind: t.kind, provenance: 'ctags', exact: false, confidence: 'low', how: 'ctags tag' });
    }
    return out;
  }

  private checkPosition(file: string, facts: FileFacts, line: number, col: number): void {
    if (line < 1 || line > facts.lines.length) throw new VltError('USAGE', `line ${line} is outside ${file}, which has ${facts.lines.length} lines`);
    const width = (facts.lines[line - 1] ?? '').length;
    if (col < 1 || col > width + 1) throw new VltError('USAGE', `column ${col} is outside line ${line} of ${file}, which has ${width} characters`);
  }

  private async lspStep(
    what: 'definition' | 'references',
    file: string,
    language: LanguageId,
    line: number,
    col: number,
    opts: NavOptions,
    providers: ProviderRun[],
    notes: string[],
  ): Promise<SourceRange[] | undefined> {
    const lsp = this.deps.lsp;
    if (opts.noLsp) {
      providers.push({ provider: 'lsp', status: 'skipped', reason: 'disabled (--no-lsp)', ms: 0 });
      return undefined;
    }
    const server = lsp?.serverFor(language);
    if (!lsp || !server) {
      providers.push({ provider: 'lsp', status: 'skipped', reason: `no language server for ${language}`, ms: 0 });
      return undefined;
    }
    if (server.state === 'not-installed') {
      providers.push({ provider: 'lsp', status: 'skipped', reason: `${server.name} is not installed (${server.detail})`, ms: 0 });
      return undefined;
    }
    const timeoutMs = opts.lspTimeoutMs ?? 10_000;
    const pos = { path: file, line, col };
    const a =
      what === 'definition'
        ? await lsp.definition(pos, { timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) })
        : await lsp.references(pos, { timeoutMs, includeDeclaration: false, ...(opts.signal ? { signal: opts.signal } : {}) });
    if (!a.ok) {
      providers.push({ provider: 'lsp', status: 'failed', reason: `${a.server ?? server.name}: ${a.failure} (${a.reason})`, ms: a.ms });
      notes.push(`the language server did not answer (${a.failure}: ${a.reason}); the fallback chain answered`);
      return [];
    }
    providers.push({ provider: 'lsp', status: a.value.length > 0 ? 'answered' : 'empty', reason: a.server, ms: a.ms });
    return a.value;
  }

  private async ctagsStep(name: string, providers: ProviderRun[]): Promise<Tag[] | undefined> {
    const tags = this.deps.tags;
    if (!tags) {
      providers.push({ provider: 'ctags', status: 'skipped', reason: 'no ctags provider in this host', ms: 0 });
      return undefined;
    }
    const t0 = performance.now();
    const why = await tags.unavailable();
    if (why) {
      providers.push({ provider: 'ctags', status: 'skipped', reason: why, ms: performance.now() - t0 });
      return undefined;
    }
    try {
      const found = await tags.lookup(name);
      providers.push({ provider: 'ctags', status: found.length > 0 ? 'answered' : 'empty', reason: `${found.length} tags named ${name} (candidates for the index to confirm)`, ms: performance.now() - t0 });
      return found;
    } catch (e) {
      providers.push({ provider: 'ctags', status: 'failed', reason: String(e), ms: performance.now() - t0 });
      return undefined;
    }
  }


  private async searchStep(name: string, providers: ProviderRun[]): Promise<NavLocation[]> {
    if (!this.deps.search) {
      providers.push({ provider: 'search', status: 'skipped', reason: 'no search in this host', ms: 0 });
      return [];
    }
    const t0 = performance.now();
    const hits = await this.deps.search(name);
    providers.push({ provider: 'search', status: hits.length > 0 ? 'answered' : 'empty', ms: performance.now() - t0 });
    return hits.slice(0, 10).map((h) => ({ path: h.path, line: h.line, col: 1, provenance: 'search', exact: false, confidence: 'low', how: 'search hit' }));
  }

  /** The identifier (dotted names included) at a 1-based line and column of a file, read as text. */
  private async wordAt(file: string, line: number, col: number): Promise<string | undefined> {
    const bytes = await this.deps.fs.readFile(path.join(this.deps.root, file)).catch(() => undefined);
    if (!bytes) return undefined;
    const text = new TextDecoder().decode(bytes.subarray(0, 4 * 1024 * 1024)).split('\n')[line - 1];
    if (text === undefined) return undefined;
    for (const m of text.matchAll(/[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*/g)) {
      const at = m.index + 1;
      if (col >= at && col <= at + m[0].length) return m[0].length >= 2 ? m[0] : undefined;
    }
    return undefined;
  }

  private async definitionByName(query: string, name: string, opts: NavOptions): Promise<NavAnswer> {
    void opts;
    const providers: ProviderRun[] = [{ provider: 'lsp', status: 'skipped', reason: 'a language server needs a position; give FILE:LINE:COL for an exact answer', ms: 0 }];
    const notes: string[] = [];
    const t0 = performance.now();
    const qualified = splitQualified(name);
    // A qualified name means the members of that type (or its bases) or the top-level
    // definitions of that package or module, and nothing else named like its last part.
    const members = qualified ? await this.qualifiedDefinitions(qualified, 0) : [];
    let rows: SymbolRow[];
    if (members.length > 0) rows = members;
    else {
      rows = this.deps.store.findSymbols(name, { limit: 200 });
      // A qualified name (`Writer.Close`) matches by suffix in the store; a bare name exactly.
      if (!/[.:#]/.test(name)) rows = rows.filter((s) => s.name === name);
      else if (rows.length === 0) rows = packageQualified(this.deps.store, name);
    }
    const ranked = await this.defaultBuildFirst(rankDefinitions(rows));
    providers.push({ provider: 'graph', status: ranked.length > 0 ? 'answered' : 'empty', reason: `${ranked.length} indexed definitions`, ms: performance.now() - t0 });
    // Ctags knows names only: its tags join the index's rows unless the qualifiers chose those
    // (then it is not asked at all).
    let tags: Tag[] | undefined;
    if (members.length > 0) providers.push(ctagsNotNeeded());
    else if (this.keep && ranked.length > 0) providers.push(ctagsNotForReferences());
    else tags = await this.ctagsStep(name.split(/[.:#]/).pop() ?? name, providers);
    const merged = await this.atNames(this.mergeCandidates(ranked, tags ?? []), qualified?.name ?? name);
    if (merged.length > 0) {
      const overloaded = overloadSignatures(merged);
      const unique = merged.length === 1 || overloaded;
      if (overloaded) notes.push(`${name} is one function declared ${merged.length} times in ${merged[0]!.path}: its overload signatures and its implementation`);
      else if (!unique) notes.push(`${merged.length} definitions are named ${name}; all are listed, most likely first (types and functions before variables, non-test files first)`);
      const how = overloaded ? `a signature of the only function named ${name}` : unique ? `the only definition named ${name}` : 'one of several definitions with this name';
      return {
        query,
        symbol: name,
        locations: merged.map((c) => ({ ...c, col: c.col, confidence: unique ? 'medium' : 'low', how })),
        ambiguous: !unique,
        notes,
        providers,
      };
    }
    const hits = await this.searchStep(name, providers);
    const out: NavAnswer = { query, symbol: name, locations: hits, ambiguous: false, notes, providers, suggestions: this.suggestions(name) };
    if (hits.length > 0) notes.push(`no definition named ${name} is indexed; these are search hits`);
    else out.reason = emptyReason('not-defined', `no definition named ${name} is indexed in the workspace`, providers);
    return out;
  }

  /**
   * Definitions of `q.name` whose owner the qualifiers name (see `qualifies`); when the type
   * named last has no such member, the members of its bases and embedded types, nearest first.
   */
  private async qualifiedDefinitions(q: QualifiedName, depth: number): Promise<SymbolRow[]> {
    const rows = this.deps.store.findSymbols(q.name, { limit: 1000 }).filter((s) => s.name === q.name);
    const direct = rows.filter((s) => qualifies(s, q.quals));
    if (direct.length > 0 || depth > MAX_DEPTH || q.quals.length === 0) return direct;
    const typeName = q.quals[q.quals.length - 1]!;
    const owners = this.deps.store
      .findSymbols(typeName, { limit: 200 })
      .filter((s) => s.name === typeName && (KIND_RANK[s.kind] ?? 5) <= 1 && qualifies(s, q.quals.slice(0, -1)));
    const out: SymbolRow[] = [];
    for (const owner of owners) {
      for (const base of await this.basesOf(owner)) {
        // A base in the owner's own package or module comes first; a base named alone may be anywhere.
        const inherited = await this.qualifiedDefinitions({ quals: [base], name: q.name }, depth + 1);
        const near = inherited.filter((s) => s.path.slice(0, s.path.lastIndexOf('/') + 1) === owner.path.slice(0, owner.path.lastIndexOf('/') + 1));
        out.push(...(near.length > 0 ? near : inherited));
      }
    }
    return out;
  }

  /** The base classes, implemented interfaces and embedded types a type's declaration names. */
  private async basesOf(owner: SymbolRow): Promise<string[]> {
    const names = new Set<string>();
    for (const r of this.deps.store.getRefs(owner.fileId)) {
      if (r.kind === 'inherit' && r.line >= owner.startLine && r.line <= owner.endLine) names.add(r.name);
    }
    const facts = await this.files.fileFacts(owner.path);
    if (facts && facts.language !== 'go') {
      const node = classAt((await this.files.syntax(owner.path, facts)).root, owner.startLine, owner.name);
      for (const b of (node && classInfo(node)?.bases) ?? []) names.add(b.name);
    }
    names.delete(owner.name);
    return [...names];
  }

  /**
   * Go definitions in files of the default build before those of other platforms (a package
   * split into `_plan9.go` and `//go:build !plan9` files), otherwise in the same order.
   */
  private async defaultBuildFirst(rows: SymbolRow[]): Promise<SymbolRow[]> {
    if (rows.length < 2 || rows.length > 200 || !rows.some((r) => r.path.endsWith('.go'))) return rows;
    const outside = new Set<SymbolRow>();
    for (const r of rows) {
      if (!r.path.endsWith('.go')) continue;
      const f = goFileNameMatches(r.path) ? await this.files.fileFacts(r.path) : undefined;
      if (!f || !goFileMatches(r.path, f.text)) outside.add(r);
    }
    return [...rows.filter((r) => !outside.has(r)), ...rows.filter((r) => outside.has(r))];
  }

  /** Index locations at the column of the definition's name, as the position form gives them. */
  private async atNames(locs: NavLocation[], name: string): Promise<NavLocation[]> {
    for (const l of locs) {
      if (l.col !== 1) continue;
      const facts = await this.files.fileFacts(l.path);
      if (facts) l.col = nameCol(facts, l.line, name);
    }
    return locs;
  }

  async references(query: string, opts: NavOptions = {}): Promise<NavAnswer> {
    this.reset();
    this.keep = true;
    try {
      return withReason(await this.referencesInner(query, opts));
    } finally {
      this.keep = false;
      this.reset();
    }
  }

  private async referencesInner(query: string, opts: NavOptions): Promise<NavAnswer> {
    const q = parseNavQuery(query);
    // A caller that chose the server's timeout waits for it, loading or not (a benchmark of the
    // server, `--lsp-timeout`).
    if (q.kind === 'position' && !opts.noLsp && opts.lspTimeoutMs === undefined && this.deps.lsp) {
      const file = this.relPath(q.path);
      const facts = await this.files.fileFacts(file);
      const server = facts ? this.deps.lsp.serverFor(facts.language) : undefined;
      if (facts && server && server.state !== 'not-installed' && server.warm === false) return this.referencesWhileLoading(query, { ...q, path: file }, facts, server.name, opts);
    }
    return this.referencesChain(query, opts);
  }

  /** The chain for references: the definition, then the language server's references at a position, else the index's. */
  private async referencesChain(query: string, opts: NavOptions): Promise<NavAnswer> {
    const def = await this.definition(query, opts);
    const q = parseNavQuery(query);
    const base = (providers: ProviderRun[], notes: string[]) => ({ query, symbol: def.symbol, ambiguous: def.ambiguous, notes, providers });
    const providers = [...def.providers];
    const notes = [...def.notes];
    const target = def.locations[0];
    if (q.kind === 'position' && target?.provenance === 'lsp') {
      const file = this.relPath(q.path);
      const facts = await this.files.fileFacts(file);
      if (facts) {
        const refs = await this.lspStep('references', file, facts.language, q.line, q.col, opts, providers, notes);
        if (refs && refs.length > 0) return this.lspReferences(base(providers, notes), file, facts.language, target, refs, opts.limit ?? 500);
      }
    }
    return this.indexReferences(query, def, base(providers, notes), opts);
  }

  /** An answer of the language server's references, ranked, with what the caller should know. */
  private async lspReferences(base: Pick<NavAnswer, 'query' | 'symbol' | 'ambiguous' | 'notes' | 'providers'>, file: string, language: LanguageId, definition: NavLocation, refs: SourceRange[], limit: number): Promise<NavAnswer> {
    const all = rankReferences(
      refs.map((r) => this.describe({ path: r.path, line: r.startLine, col: r.startCol }, 'lsp', true, 'high', 'language server')),
      definition.path,
    );
    if (isTsFamily(language) && !(await this.hasTsProject(file))) {
      base.notes.push(
        `no tsconfig.json or jsconfig.json covers ${file}: the language server's project holds only the files it opened and what they import, so uses in other files can be missing (add a tsconfig.json, or ask with --no-lsp for the index's answer)`,
      );
    }
    return { ...base, locations: all.slice(0, limit), total: all.length, definition, truncated: all.length > limit };
  }

  /**
   * References at a position while the file's language server is not warm (it has not answered
   * references since it started). Its first references load (type-check) every package that
   * could hold a use, and on a large workspace its start alone takes seconds: longer than a
   * person waits, when the index can answer in a second. So the server's chain (definition,
   * then references) and the index's run side by side. The server's answer is taken when it
   * comes within LOADING_PATIENCE_MS of the call or before the index's; otherwise the index
   * answers and says the server is still loading. The server's requests go on until their own
   * timeout, so that a long-lived host's next call finds it loaded and waits for it as usual.
   */
  private async referencesWhileLoading(query: string, pos: { path: string; line: number; col: number }, facts: FileFacts, serverName: string, opts: NavOptions): Promise<NavAnswer> {
    const t0 = performance.now();
    const limit = opts.limit ?? 500;
    const lspProviders: ProviderRun[] = [];
    const lspNotes: string[] = [];
    const viaLsp = (async () => {
      const defs = await this.lspStep('definition', pos.path, facts.language, pos.line, pos.col, opts, lspProviders, lspNotes);
      if (!defs || defs.length === 0) return undefined;
      const refs = await this.lspStep('references', pos.path, facts.language, pos.line, pos.col, opts, lspProviders, lspNotes);
      return refs && refs.length > 0 ? { defs, refs } : undefined;
    })();
    const stopIndex = new AbortController();
    const signal = opts.signal ? AbortSignal.any([opts.signal, stopIndex.signal]) : stopIndex.signal;
    const indexed = this.referencesChain(query, { ...opts, noLsp: true, signal }).then(
      (a) => ({ ok: true as const, a }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    // The index's answer, with the server's runs in place of its "--no-lsp" one.
    const indexAnswer = async (extra?: ProviderRun): Promise<NavAnswer> => {
      const i = await indexed;
      if (!i.ok) throw i.e;
      const providers = [...lspProviders, ...(extra ? [extra] : []), ...i.a.providers.filter((p) => p.provider !== 'lsp')];
      return { ...i.a, providers, notes: [...lspNotes, ...i.a.notes] };
    };
    const lspAnswer = async (found: { defs: SourceRange[]; refs: SourceRange[] }): Promise<NavAnswer> => {
      stopIndex.abort();
      await indexed;
      const d = found.defs[0]!;
      const definition = this.describe({ path: d.path, line: d.startLine, col: d.startCol }, 'lsp', true, 'high', 'language server');
      const symbol = (await this.resolver.analyze(pos.path, pos.line, pos.col))?.target?.name ?? '';
      return this.lspReferences({ query, symbol, ambiguous: false, notes: lspNotes, providers: lspProviders }, pos.path, facts.language, definition, found.refs, limit);
    };
    const first = await Promise.race([viaLsp.then((v) => ({ lsp: v })), indexed.then((i) => ({ index: i }))]);
    if ('lsp' in first) return first.lsp ? lspAnswer(first.lsp) : indexAnswer();
    if (!first.index.ok || first.index.a.locations.length === 0) {
      // The index has nothing to offer: the server is waited for, up to its timeout.
      const late = await viaLsp;
      return late ? lspAnswer(late) : indexAnswer();
    }
    const left = LOADING_PATIENCE_MS - (performance.now() - t0);
    const late = left > 0 ? await Promise.race([viaLsp, new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), left))]) : 'waiting';
    if (late !== 'waiting') return late ? lspAnswer(late) : indexAnswer();
    const waited = ((performance.now() - t0) / 1000).toFixed(1);
    const why = `${serverName} is still loading the workspace (no references after ${waited} s, the first since it started)`;
    const answer = await indexAnswer({ provider: 'lsp', status: 'skipped', reason: why, ms: performance.now() - t0 });
    answer.notes.unshift(`${why}; these are the index's references, not type-checked: ask again once it has loaded, or give a timeout to wait for it (--lsp-timeout), for its exact answer`);
    return answer;
  }

  /** References gathered by the index for the first of `def`'s locations; see {@link gatherReferences}. */
  private async indexReferences(query: string, def: NavAnswer, base: Pick<NavAnswer, 'query' | 'symbol' | 'ambiguous' | 'notes' | 'providers'>, opts: NavOptions): Promise<NavAnswer> {
    const limit = opts.limit ?? 500;
    const { providers, notes } = base;
    const target = def.locations[0];
    if (!target || def.locations.every((l) => l.provenance === 'search')) {
      const reason = def.reason ?? emptyReason('not-defined', `no definition of ${def.symbol || query} is indexed (search finds the name only in text), so its uses cannot be resolved`, providers);
      return { ...base, locations: [], reason, ...(def.suggestions ? { suggestions: def.suggestions } : {}) };
    }
    if (def.ambiguous) notes.push(`references are gathered for the first candidate, ${target.path}:${target.line}`);
    const t0 = performance.now();
    const deadline = opts.budgetMs !== undefined ? performance.now() + opts.budgetMs : undefined;
    // Uses are identifiers: `strings.TrimSpace`, `Server.Serve` and `Type::method` are used as
    // `TrimSpace`, `Serve` and `method`, resolved back to the definition one by one.
    const bare = def.symbol.split(/[.:#]+/).filter(Boolean).pop() ?? def.symbol;
    const found = await gatherReferences({ deps: this.deps, files: this.files, resolver: this.resolver }, bare, target, { limit: Math.max(limit, TREE_USES_CAP), ...(opts.signal ? { signal: opts.signal } : {}), ...(deadline !== undefined ? { deadline } : {}) });
    const { locs, stopped } = found;
    providers.push({
      provider: 'graph',
      status: locs.length > 0 ? 'answered' : 'empty',
      reason: `uses in the files that can see the definition, each resolved (${found.files.candidates} candidate files from the index, ${found.files.parsed} parsed)`,
      ms: performance.now() - t0,
    });
    const answer: NavAnswer = { ...base, locations: locs.slice(0, limit), definition: target, truncated: !found.complete || locs.length > limit };
    if (found.complete) answer.total = locs.length;
    if (stopped?.by === 'budget') {
      notes.push(
        `partial: the index resolved the uses in ${stopped.searched} of ${stopped.files} files that could use ${def.symbol} (nearest to the definition first) before its ${((opts.budgetMs ?? 0) / 1000).toFixed(1)} s budget ran out; give a larger budget for the rest, or a language server for this language answers in full`,
      );
    } else if (stopped?.by === 'limit') {
      notes.push(`partial: the search stopped after resolving ${Math.max(limit, TREE_USES_CAP)} uses on syntax trees, in ${stopped.searched} of ${stopped.files} files; a larger limit, or a language server, finds the rest and an exact total`);
    }
    if (locs.length === 0) {
      answer.reason = stopped?.by === 'budget'
        ? { code: 'budget', message: `no uses found before the ${((opts.budgetMs ?? 0) / 1000).toFixed(1)} s budget ran out (${stopped.searched} of ${stopped.files} candidate files searched); give a larger budget to search the rest` }
        : emptyReason('no-uses', `${def.symbol} is defined at ${target.path}:${target.line}:${target.col}, and none of the ${found.files.candidates} files that could use it does`, providers);
    }
    return answer;
  }

  /** Whether a `tsconfig.json` or `jsconfig.json` sits in the file's directory or one above it, up to the root. */
  private async hasTsProject(file: string): Promise<boolean> {
    const parts = file.split('/').slice(0, -1);
    for (let n = parts.length; n >= 0; n--) {
      for (const name of ['tsconfig.json', 'jsconfig.json']) {
        const found = await this.deps.fs.stat(path.join(this.deps.root, ...parts.slice(0, n), name)).then(
          () => true,
          () => false,
        );
        if (found) return true;
      }
    }
    return false;
  }
}

/**
 * Whether the candidates are one TypeScript function's overload signatures and implementation:
 * all functions of that name in one file. They are one definition, not an ambiguous name.
 */
function overloadSignatures(cands: readonly NavLocation[]): boolean {
  const first = cands[0];
  return cands.length > 1 && first !== undefined && /\.[cm]?tsx?$/.test(first.path) && cands.every((c) => c.path === first.path && c.kind === 'function' && c.provenance !== 'ctags');
}
