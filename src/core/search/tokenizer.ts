/**
 * Code-aware tokenizer. Identifiers are kept whole (lower-cased) AND split into their
 * camelCase / snake_case / digit parts, so `ParseDuration` matches both the query
 * "ParseDuration" and "parse duration". A light plural stemmer (`writers` → `writer`)
 * is applied to parts only; whole identifiers stay exact.
 */

const IDENT = /[A-Za-z_$][A-Za-z0-9_$]*|[0-9]+[A-Za-z_][A-Za-z0-9_]*|[0-9]{2,}/g;

/** Words too common in code and prose to carry signal; they only cost time in scoring. */
const STOPWORDS = new Set([
  // English function words only: verbs like get/set/put/new/use name code and must stay.
  'the', 'and', 'for', 'are', 'but', 'not', 'you', 'was', 'our', 'his', 'her', 'she', 'how', 'its',
  'this', 'that', 'with', 'from', 'have', 'what', 'when', 'where', 'which', 'will', 'would', 'there',
  'their', 'then', 'than', 'them', 'these', 'those', 'into', 'does', 'been', 'were', 'is', 'it',
  'of', 'to', 'in', 'on', 'or', 'an', 'as', 'at', 'be', 'by', 'if', 'we', 'do', 'so', 'my', 'me',
  'am',
]);

const splitCache = new Map<string, string[]>();
const SPLIT_CACHE_MAX = 200_000;

function stem(part: string): string {
  // Only the plural "s": richer stemming merges identifiers that mean different things.
  if (part.length > 3 && part.endsWith('s') && !part.endsWith('ss') && !part.endsWith('us') && !part.endsWith('is')) {
    return part.slice(0, -1);
  }
  return part;
}

const LOWER_WORD = /^[a-z]+$/;
/** snake_case in lower case: its only boundaries are the underscores. */
const LOWER_SNAKE = /^[a-z_]+$/;
/** Shared by every identifier without parts: callers read results, never change them (the cache shares them as well). */
const NO_PARTS: string[] = [];

/** The sub-words of one identifier, lower-cased and stemmed, excluding the whole identifier. */
export function identifierParts(ident: string): string[] {
  // The commonest identifiers (`err`, `return`, `names`) are one lower-case word: their only
  // possible part is their stem, found without the cache or the boundary expressions.
  if (LOWER_WORD.test(ident)) {
    if (ident.length < 2) return NO_PARTS;
    const p = stem(ident);
    return p !== ident && !STOPWORDS.has(p) ? [p] : NO_PARTS;
  }
  // Lower-case snake_case (most of C's, Python's and Rust's names): split at the underscores, as
  // the boundary expressions below would, without them or the cache.
  if (LOWER_SNAKE.test(ident)) {
    const out: string[] = [];
    for (const raw of ident.split('_')) {
      if (raw.length < 2) continue;
      const p = stem(raw);
      if (p !== ident && !STOPWORDS.has(p)) out.push(p);
    }
    return out.length > 0 ? out : NO_PARTS;
  }
  let parts = splitCache.get(ident);
  if (parts) return parts;
  parts = [];
  const lower = ident.toLowerCase();
  // Boundaries: lower→Upper, UPPER→Upper+lower (HTTPServer → HTTP Server), letters↔digits, `_`, `$`.
  const spaced = ident
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/([A-Za-z])([0-9])/g, '$1 $2')
    .replace(/[_$]+/g, ' ');
  for (const raw of spaced.split(' ')) {
    if (raw.length < 2) continue;
    const p = stem(raw.toLowerCase());
    if (p !== lower && !STOPWORDS.has(p)) parts.push(p);
  }
  if (splitCache.size > SPLIT_CACHE_MAX) splitCache.clear();
  splitCache.set(ident, parts);
  return parts;
}

/**
 * Tokens of a text, in order, with duplicates (term frequency matters for BM25).
 * Tokens shorter than two characters and stop words are dropped.
 */
export function tokenize(text: string, out: string[] = []): string[] {
  IDENT.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = IDENT.exec(text)) !== null) {
    const ident = m[0];
    if (ident.length < 2) continue;
    const lower = ident.toLowerCase();
    const parts = identifierParts(ident);
    if (parts.length === 0) {
      const s = stem(lower);
      if (!STOPWORDS.has(s)) out.push(s);
      continue;
    }
    out.push(lower);
    for (const p of parts) out.push(p);
  }
  return out;
}

/** Tokens of a path: each segment and file stem, plus their identifier parts. */
export function tokenizePath(path: string): string[] {
  return tokenize(path.replace(/[/\\.\-]+/g, ' '));
}

/** Distinct query tokens, order preserved. */
export function tokenizeQuery(text: string): string[] {
  return [...new Set(tokenize(text))];
}

export function isStopword(word: string): boolean {
  return STOPWORDS.has(word);
}

/**
 * A field's tokens as the index takes them: each token once, in the order of its first
 * occurrence, with how often it occurs, and the field's length in tokens. The parse workers
 * count them, so that the thread that adds documents does one lookup per distinct term.
 */
export interface CountedTerms {
  terms: readonly string[];
  counts: ArrayLike<number>;
  length: number;
}

/** A field's tokens, as a list or counted. */
export type FieldTerms = readonly string[] | CountedTerms;

export function isCounted(terms: FieldTerms): terms is CountedTerms {
  return !Array.isArray(terms);
}

/** Counts a list of tokens (see {@link CountedTerms}). */
export function countTerms(tokens: readonly string[]): CountedTerms {
  const at = new Map<string, number>();
  const terms: string[] = [];
  const counts: number[] = [];
  for (const t of tokens) {
    const i = at.get(t);
    if (i === undefined) {
      at.set(t, terms.length);
      terms.push(t);
      counts.push(1);
    } else counts[i]!++;
  }
  return { terms, counts, length: tokens.length };
}
