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
 *
 * This file holds the contract and the mapper: the cache, stage 4 and paging with cursors.
 * Stages 1-3 are in repomap-rank.ts, the focus in repomap-focus.ts and stage 5 in
 * repomap-render.ts.
 */
import { createHash } from 'node:crypto';
import { distance } from 'fastest-levenshtein';
import { VltError } from '../errors';
import { loadTokenCounter, type TokenCounter } from '../tokens';
import { FOCUS_ITEM_MAX_CHARS, filesMatching, normalizePath, resolveFocus } from './repomap-focus';
import { buildState, compareStrings, rank, type ExtraEdge, type MapState, type Ranking, type RepoMapSource } from './repomap-rank';
import { renderPage, type Page, type RepoMapFile } from './repomap-render';

export { identifierWeight, isTestPath, type ExtraEdge, type RepoMapSource } from './repomap-rank';
export type { RepoMapFile, RepoMapSymbol } from './repomap-render';
export { loadTokenCounter, type TokenCounter };

// ---------------------------------------------------------------------------------------------
// Public contract
// ---------------------------------------------------------------------------------------------

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

/** Aider's default map budget. */
export const DEFAULT_MAP_TOKENS = 1024;
/** No map is larger than this unless the caller says `allowLarge` (the MCP answer limit). */
export const MAX_MAP_TOKENS = 20_000;

/** Focused rankings kept per index state, so that paging through a focused map does not re-rank. */
const FOCUS_CACHE_SIZE = 8;

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

/** Identifies a request's scope and focus, whatever their order. */
function fingerprint(root: string, opts: RepoMapOptions): string {
  const norm = (xs: string[] | undefined) => [...(xs ?? [])].map((x) => x.trim()).sort();
  const parts = [normalizePath(root, opts.scope ?? ''), norm(opts.focus), norm(opts.focusFiles), norm(opts.focusSymbols), norm(opts.focusWords)];
  return createHash('sha1').update(JSON.stringify(parts)).digest('hex').slice(0, 12);
}

// ---------------------------------------------------------------------------------------------
// The mapper (stage 4, fitting, is in RepoMapper.render)
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
  // eslint-disable-next-line max-lines-per-function -- the map's steps over one request (check, rank, page, render within the budget), sharing the budget and the cursor
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

function round2(ms: number): number {
  return Math.round(ms * 100) / 100;
}
