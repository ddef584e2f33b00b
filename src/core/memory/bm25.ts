/**
 * A small in-memory BM25F index for notes, thread entries and session history: a few thousand
 * documents of a few fields each, changed one document at a time. The code index has its own,
 * far more compact index (`search/text-index.ts`); this one trades memory for being simple and
 * incrementally updatable.
 *
 * Scoring is BM25F (Robertson & Zaragoza, "The Probabilistic Relevance Framework", 2009): each
 * field's term frequency is length-normalised with its own average length and weighted, the
 * weighted sum is saturated once with k1, and multiplied by the term's idf.
 */
import { tokenize } from '../search/tokenizer';

/** Saturation of term frequency; the usual value. */
const K1 = 1.2;
/** Strength of length normalisation; the usual value. */
const B = 0.75;

/** Words with a letter outside ASCII, which the code tokenizer would cut into pieces. */
const UNICODE_WORD = /[\p{L}\p{N}_]*[^\x00-\x7f][\p{L}\p{N}_]*/gu;
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Tokens of prose or code: the code tokenizer (whole identifiers plus their camelCase and
 * snake_case parts, light plural stemming, stop words dropped) plus whole non-ASCII words
 * (`café`, `проект`), lower-cased.
 */
export function textTokens(text: string): string[] {
  const out = tokenize(text);
  // Most notes are ASCII; the Unicode scan is the slow part of tokenizing, so it runs only when needed.
  if (!NON_ASCII.test(text)) return out;
  for (const m of text.matchAll(UNICODE_WORD)) {
    const w = m[0].toLowerCase();
    if (/\p{L}/u.test(w)) out.push(w);
  }
  return out;
}

export interface Bm25Hit<K> {
  key: K;
  score: number;
}

/** Per term: the internal ids of the documents holding it, and their term frequencies, `fields` per id. */
interface Posting {
  ids: number[];
  tf: number[];
}

/**
 * Documents get a fresh internal id each time they are set; replacing or deleting one only
 * marks its old id dead, and postings are compacted once dead ids outnumber live ones. Flat
 * arrays instead of a map per term keep building a 1,000-note index cheap in time and garbage.
 */
export class Bm25Index<K> {
  private readonly fieldNames: string[];
  private readonly weights: number[];
  private readonly nf: number;
  /** Live key → internal id. */
  private readonly ids = new Map<K, number>();
  /** Internal id → key; undefined once the id is dead. */
  private keys: Array<K | undefined> = [];
  /** Token count per field, `nf` per internal id. */
  private lengths: number[] = [];
  private readonly postings = new Map<string, Posting>();
  private readonly totalLengths: number[];
  private dead = 0;

  /** @param fields field name → weight; a title might weigh 3 where the body weighs 1. */
  constructor(
    fields: Readonly<Record<string, number>>,
    private readonly tokenizeFn: (text: string) => string[] = textTokens,
  ) {
    this.fieldNames = Object.keys(fields);
    this.weights = this.fieldNames.map((f) => fields[f] ?? 1);
    this.nf = this.fieldNames.length;
    this.totalLengths = this.fieldNames.map(() => 0);
  }

  get size(): number {
    return this.ids.size;
  }

  has(key: K): boolean {
    return this.ids.has(key);
  }

  /** Adds a document, replacing any earlier one with the same key. Unknown fields are ignored. */
  set(key: K, fields: Readonly<Record<string, string | undefined>>): void {
    this.delete(key);
    const nf = this.nf;
    const id = this.keys.length;
    this.keys.push(key);
    this.ids.set(key, id);
    // Counted per document first, so that the shared postings are touched once per distinct term.
    const termIndex = new Map<string, number>();
    const counts: number[] = [];
    for (let fi = 0; fi < nf; fi++) {
      const text = fields[this.fieldNames[fi]!];
      const tokens = text ? this.tokenizeFn(text) : [];
      this.lengths.push(tokens.length);
      this.totalLengths[fi] = (this.totalLengths[fi] ?? 0) + tokens.length;
      for (const t of tokens) {
        let ix = termIndex.get(t);
        if (ix === undefined) {
          ix = termIndex.size;
          termIndex.set(t, ix);
          for (let k = 0; k < nf; k++) counts.push(0);
        }
        counts[ix * nf + fi]! += 1;
      }
    }
    for (const [t, ix] of termIndex) {
      let p = this.postings.get(t);
      if (!p) {
        p = { ids: [], tf: [] };
        this.postings.set(t, p);
      }
      p.ids.push(id);
      for (let k = 0; k < nf; k++) p.tf.push(counts[ix * nf + k]!);
    }
  }

  delete(key: K): void {
    const id = this.ids.get(key);
    if (id === undefined) return;
    this.ids.delete(key);
    this.keys[id] = undefined;
    for (let fi = 0; fi < this.nf; fi++) this.totalLengths[fi] = (this.totalLengths[fi] ?? 0) - (this.lengths[id * this.nf + fi] ?? 0);
    this.dead++;
    if (this.dead > 1000 && this.dead > this.ids.size) this.compact();
  }

  clear(): void {
    this.ids.clear();
    this.keys = [];
    this.lengths = [];
    this.postings.clear();
    this.totalLengths.fill(0);
    this.dead = 0;
  }

  /**
   * The best `k` documents for `query`, best first. Documents `filter` rejects are skipped
   * before scoring (they still count for idf, which describes the whole collection).
   */
  search(query: string, k: number, filter?: (key: K) => boolean): Array<Bm25Hit<K>> {
    const terms = [...new Set(this.tokenizeFn(query))];
    const n = this.ids.size;
    if (terms.length === 0 || n === 0 || k <= 0) return [];
    const nf = this.nf;
    const avg = this.totalLengths.map((total) => Math.max(1e-9, total / n));
    const scores = new Map<number, number>();
    for (const term of terms) {
      const p = this.postings.get(term);
      if (!p) continue;
      let df = 0;
      for (const id of p.ids) if (this.keys[id] !== undefined) df++;
      if (df === 0) continue;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (let j = 0; j < p.ids.length; j++) {
        const id = p.ids[j]!;
        const key = this.keys[id];
        if (key === undefined || (filter && !filter(key))) continue;
        let weighted = 0;
        for (let fi = 0; fi < nf; fi++) {
          const f = p.tf[j * nf + fi]!;
          if (f === 0) continue;
          const norm = 1 - B + (B * this.lengths[id * nf + fi]!) / avg[fi]!;
          weighted += (this.weights[fi]! * f) / norm;
        }
        scores.set(id, (scores.get(id) ?? 0) + (idf * weighted * (K1 + 1)) / (K1 + weighted));
      }
    }
    return [...scores]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, k)
      .map(([id, score]) => ({ key: this.keys[id]!, score }));
  }

  /** Distinct query terms that occur in the index, for highlighting and snippets. */
  matchedTerms(query: string): string[] {
    return [...new Set(this.tokenizeFn(query))].filter((t) => this.postings.has(t));
  }

  /** Drops dead ids from every posting list. Ids are kept: only the lists shrink. */
  private compact(): void {
    const nf = this.nf;
    for (const [t, p] of this.postings) {
      const ids: number[] = [];
      const tf: number[] = [];
      for (let j = 0; j < p.ids.length; j++) {
        const id = p.ids[j]!;
        if (this.keys[id] === undefined) continue;
        ids.push(id);
        for (let k = 0; k < nf; k++) tf.push(p.tf[j * nf + k]!);
      }
      if (ids.length) this.postings.set(t, { ids, tf });
      else this.postings.delete(t);
    }
    this.dead = 0;
  }
}
