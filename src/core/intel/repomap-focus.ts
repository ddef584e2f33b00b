/**
 * Focus resolution for the repository map: what a request's focus items (paths, symbols,
 * words of a question) name in one index state, turned into the personalisation that
 * stage 3 ranks with.
 */
import * as path from 'node:path';
import { identifierParts, tokenizeQuery } from '../search/tokenizer';
import { MENTIONED_MUL, PART_MENTION_MUL, type MapState, type Personalization } from './repomap-rank';

/** The focus fields of a map request (see `RepoMapOptions`). */
export interface FocusRequest {
  focus?: string[];
  focusFiles?: string[];
  focusSymbols?: string[];
  focusWords?: string[];
}

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

/** Lookups per index state, built on the first focus that needs them. */
const lookupCache = new WeakMap<MapState, FocusLookups>();

function lookups(state: MapState): FocusLookups {
  const cached = lookupCache.get(state);
  if (cached) return cached;
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
  const built = { byLower, byPart: new Map(), lowerIdents, byPathWord };
  lookupCache.set(state, built);
  return built;
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
export function normalizePath(root: string, p: string): string {
  let s = p.trim().replace(/\\/g, '/');
  if (path.isAbsolute(s)) {
    const rel = path.relative(root, s);
    if (!rel.startsWith('..') && !path.isAbsolute(rel)) s = rel.replace(/\\/g, '/');
  }
  s = s.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  return s === '.' ? '' : s;
}

/** Nodes whose path is `p`, lies under directory `p`, or (with `suffix`) ends with `/p`. */
export function filesMatching(state: MapState, p: string, suffix: boolean): number[] {
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

/** The longest focus item accepted. */
export const FOCUS_ITEM_MAX_CHARS = 2000;

/**
 * The focus of a request as stage 3 takes it: a teleport vector over the files it names,
 * heavier groups for the identifiers it mentions, and the focus symbols' entries pinned first.
 * What matched nothing is said in `notes`. Undefined when nothing matched.
 */
// eslint-disable-next-line max-lines-per-function -- one case per kind of focus item (file, folder, symbol, words), a few lines each, all adding to the vector being built
export function resolveFocus(state: MapState, root: string, opts: FocusRequest, notes: string[]): Personalization | undefined {
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
