/**
 * BM25 over whole files: one document per file, kept in step with the workspace by content
 * hash, so that a caller that moves from one state of the files to the next re-tokenizes only
 * the files that changed.
 *
 * Two callers: `vlt eval history` scores it as the plain baseline (path + whole content, the
 * classic k1 = 1.2, b = 0.75), and the locate mode reads it as one channel of evidence among
 * several, with its own term weights and a length prior (see locate/locate.ts).
 */

export interface FileBm25Options {
  k1?: number;
  b?: number;
}

export interface FileScore {
  path: string;
  score: number;
}

interface Doc {
  path: string;
  hash: string;
  length: number;
  terms: Map<string, number>;
}

export class FileBm25 {
  private readonly k1: number;
  private readonly b: number;
  private readonly ids = new Map<string, number>();
  private readonly docs: Array<Doc | undefined> = [];
  private readonly free: number[] = [];
  /** term → (doc id → term frequency) */
  private readonly postings = new Map<string, Map<number, number>>();
  private totalLength = 0;
  private live = 0;

  constructor(opts: FileBm25Options = {}) {
    this.k1 = opts.k1 ?? 1.2;
    this.b = opts.b ?? 0.75;
  }

  get size(): number {
    return this.live;
  }

  get averageLength(): number {
    return this.live === 0 ? 0 : this.totalLength / this.live;
  }

  /** The content hash the file was indexed with, or undefined when it is not held. */
  hashOf(path: string): string | undefined {
    const id = this.ids.get(path);
    return id === undefined ? undefined : this.docs[id]?.hash;
  }

  paths(): IterableIterator<string> {
    return this.ids.keys();
  }

  /** Token count of a held file. */
  lengthOf(path: string): number | undefined {
    const id = this.ids.get(path);
    return id === undefined ? undefined : this.docs[id]?.length;
  }

  /** Adds or replaces a file. A file held with the same hash is left as it is. */
  set(path: string, hash: string, tokens: readonly string[]): void {
    const prev = this.ids.get(path);
    if (prev !== undefined) {
      if (this.docs[prev]?.hash === hash) return;
      this.delete(path);
    }
    const terms = new Map<string, number>();
    for (const t of tokens) terms.set(t, (terms.get(t) ?? 0) + 1);
    const id = this.free.pop() ?? this.docs.length;
    this.docs[id] = { path, hash, length: tokens.length, terms };
    this.ids.set(path, id);
    for (const [t, tf] of terms) {
      let list = this.postings.get(t);
      if (!list) this.postings.set(t, (list = new Map()));
      list.set(id, tf);
    }
    this.totalLength += tokens.length;
    this.live++;
  }

  delete(path: string): void {
    const id = this.ids.get(path);
    if (id === undefined) return;
    const doc = this.docs[id]!;
    for (const t of doc.terms.keys()) {
      const list = this.postings.get(t);
      if (!list) continue;
      list.delete(id);
      if (list.size === 0) this.postings.delete(t);
    }
    this.totalLength -= doc.length;
    this.live--;
    this.docs[id] = undefined;
    this.ids.delete(path);
    this.free.push(id);
  }

  /** Files that hold the term. */
  docFrequency(term: string): number {
    return this.postings.get(term)?.size ?? 0;
  }

  /** Robertson–Spärck Jones IDF with the +1 that keeps it positive. */
  idf(term: string): number {
    const df = this.docFrequency(term);
    return Math.log(1 + (this.live - df + 0.5) / (df + 0.5));
  }

  /**
   * The BM25 score of every file that holds a query term. A term repeated in the query counts
   * once per occurrence (a report that says "timezone" five times is about time zones);
   * `weights` scales a term's share.
   */
  scores(queryTerms: readonly string[], weights?: ReadonlyMap<string, number>): Map<string, number> {
    const qtf = new Map<string, number>();
    for (const t of queryTerms) qtf.set(t, (qtf.get(t) ?? 0) + 1);
    const avg = this.averageLength || 1;
    const acc = new Map<number, number>();
    for (const [t, count] of qtf) {
      const list = this.postings.get(t);
      if (!list) continue;
      const w = this.idf(t) * count * (weights?.get(t) ?? 1);
      if (w <= 0) continue;
      for (const [id, tf] of list) {
        const len = this.docs[id]!.length;
        const s = (w * tf * (this.k1 + 1)) / (tf + this.k1 * (1 - this.b + (this.b * len) / avg));
        acc.set(id, (acc.get(id) ?? 0) + s);
      }
    }
    const out = new Map<string, number>();
    for (const [id, s] of acc) out.set(this.docs[id]!.path, s);
    return out;
  }

  /** The k best files, ties by path. */
  search(queryTerms: readonly string[], k: number, weights?: ReadonlyMap<string, number>): FileScore[] {
    return topFiles(this.scores(queryTerms, weights), k);
  }
}

/** The k highest-scoring paths of a score map, ties broken by path. */
export function topFiles(scores: ReadonlyMap<string, number>, k: number): FileScore[] {
  return [...scores]
    .map(([path, score]) => ({ path, score }))
    .sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .slice(0, k);
}
