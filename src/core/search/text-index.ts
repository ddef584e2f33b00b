/**
 * A compact inverted index for code chunks, scored with BM25F (per-field BM25 summed with
 * field boosts). It is plugged into Orama as its full-text index component (see
 * orama-index.ts), replacing Orama's radix-tree index for the text fields.
 *
 * Why not Orama's default index: on the Go standard library (42K chunks) it inserts at
 * ~3K chunks/s, answers common-term queries in 50-80 ms, and its snapshot takes ~6 s and
 * 2.3 GB to load. Here postings are flat `(slot, tf)` integer pairs; a snapshot is one
 * Uint32Array whose posting lists are used in place (zero-copy), each taken from it the first
 * time its term is asked for, so reopening costs O(vocabulary), not O(postings).
 */

export const TEXT_FIELDS = ['name', 'path', 'sig', 'body'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];

/** A posting list: interleaved slot and term-frequency pairs, slots ascending. */
type Postings = number[] | Uint32Array;

export interface TextSearchOptions {
  boost?: Partial<Record<TextField, number>>;
  /** Only slots for which this returns true are scored. */
  accept?: (slot: number) => boolean;
  limit?: number;
  /** Terms present in more than this share of documents are skipped as noise (0..1). */
  maxDocFrequency?: number;
}

export interface TextHit {
  slot: number;
  score: number;
  /** How many distinct query terms matched in any field. */
  matchedTerms: number;
}

const K1 = 1.2;
const B = 0.75;
/** Snapshot layouts: "VTI1" kept every slot (dead ones too); "VTI2" is written compacted, lengths of live slots only. */
const MAGIC_V1 = 0x56544932;
const MAGIC_V2 = 0x56544933;
/** "VTI3": the VTI2 layout with the vocabulary in sorted order. */
const MAGIC = 0x56544934;
/** Compact in place once dead documents are this share of all documents held (and at least {@link COMPACT_MIN}). */
const COMPACT_RATIO = 0.25;
const COMPACT_MIN = 256;

export class CodeTextIndex {
  private readonly termIds = new Map<string, number>();
  /**
   * Loaded from a snapshot whose vocabulary is sorted, and no term added since: a term's id is
   * found by binary search, and {@link termIds} is filled only when a document is added.
   */
  private sortedVocabulary = false;
  private terms: string[] = [];
  /** postings[field][termId] */
  private readonly postings: Postings[][] = TEXT_FIELDS.map(() => []);
  /** fieldLengths[field][slot]; undefined for a slot never added or compacted away. */
  private readonly fieldLengths: Array<Array<number | undefined>> = TEXT_FIELDS.map(() => []);
  private readonly totalLength: number[] = TEXT_FIELDS.map(() => 0);
  private readonly deleted: Set<number> = new Set();
  private slots = 0;
  /** Number of distinct slots ever added (slots need not start at 0 or be dense). */
  private added = 0;
  private lastAdded = -1;
  private scores = new Float64Array(0);
  private matched = new Uint16Array(0);
  /** Per-slot stamp of the last query term that matched it, to count distinct matched terms. */
  private stamp = new Uint32Array(0);
  private stampCounter = 0;
  /**
   * The snapshot this index was loaded from, while its posting lists have not all been read:
   * a term's list is taken from it (a view, no copy) the first time the term is asked for, so
   * that opening costs the vocabulary, not one object per term and field.
   */
  private snap: { buf: Uint32Array; termCount: number; offsets: Uint32Array } | undefined;

  get size(): number {
    return this.added - this.deleted.size;
  }

  get slotCount(): number {
    return this.slots;
  }

  get deletedCount(): number {
    return this.deleted.size;
  }

  get vocabularySize(): number {
    return this.terms.length;
  }

  /**
   * Adds the given fields of the document at `slot`. Slots only grow: a new document takes
   * a slot above every earlier one, and the fields of one document may arrive in several
   * calls (Orama indexes one property at a time).
   */
  add(slot: number, fields: Partial<Record<TextField, string[]>>): void {
    if (slot < this.slots - 1) throw new Error(`slot ${slot} added out of order (next is ${this.slots})`);
    this.slots = Math.max(this.slots, slot + 1);
    if (slot !== this.lastAdded) {
      this.added++;
      this.lastAdded = slot;
    }
    for (let f = 0; f < TEXT_FIELDS.length; f++) {
      const tokens = fields[TEXT_FIELDS[f]!];
      if (tokens === undefined) continue;
      this.fieldLengths[f]![slot] = tokens.length;
      this.totalLength[f]! += tokens.length;
      if (tokens.length === 0) continue;
      const tf = new Map<string, number>();
      for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
      const fieldPostings = this.postings[f]!;
      this.ensureTermIds();
      for (const [term, freq] of tf) {
        let id = this.termIds.get(term);
        if (id === undefined) {
          id = this.terms.length;
          this.terms.push(term);
          this.termIds.set(term, id);
        }
        let list = this.list(f, id);
        if (list === undefined) {
          list = [];
          fieldPostings[id] = list;
        } else if (!Array.isArray(list)) {
          // A list loaded from a snapshot is a read-only view; copy it on first write.
          list = Array.from(list);
          fieldPostings[id] = list;
        }
        list.push(slot, freq);
      }
    }
  }

  /**
   * Marks a slot deleted. Its postings stay until {@link needsCompaction} suggests a
   * rebuild; scoring skips it, so results are exact and deletion is O(1).
   */
  remove(slot: number): void {
    if (slot >= this.slots || this.deleted.has(slot)) return;
    this.deleted.add(slot);
    for (let f = 0; f < TEXT_FIELDS.length; f++) this.totalLength[f]! -= this.fieldLengths[f]![slot] ?? 0;
    if (this.needsCompaction()) this.compact();
  }

  /** Whether dead postings are enough of the index that dropping them pays (they cost memory and scan time, never correctness). */
  needsCompaction(): boolean {
    return this.deleted.size >= COMPACT_MIN && this.deleted.size > this.added * COMPACT_RATIO;
  }

  /**
   * Drops the postings and lengths of deleted slots, and the terms no live document holds.
   * Slots keep their numbers (the documents store refers to them), so this changes no result.
   */
  compact(): void {
    if (this.deleted.size === 0) return;
    this.readAll();
    const dead = this.deleted;
    const kept: number[] = [];
    const filtered = this.postings.map((fieldPostings) =>
      fieldPostings.map((list) => {
        if (!list) return undefined;
        const out: number[] = [];
        for (let i = 0; i < list.length; i += 2) if (!dead.has(list[i]!)) out.push(list[i]!, list[i + 1]!);
        return out.length > 0 ? out : undefined;
      }),
    );
    for (let t = 0; t < this.terms.length; t++) if (filtered.some((fp) => fp[t] !== undefined)) kept.push(t);
    const terms = kept.map((t) => this.terms[t]!);
    this.termIds.clear();
    this.sortedVocabulary = false;
    terms.forEach((term, id) => this.termIds.set(term, id));
    this.terms = terms;
    for (let f = 0; f < TEXT_FIELDS.length; f++) {
      const fieldPostings: Postings[] = [];
      kept.forEach((t, id) => {
        const list = filtered[f]![t];
        if (list) fieldPostings[id] = list;
      });
      this.postings[f] = fieldPostings;
      const lengths = this.fieldLengths[f]!;
      for (const slot of dead) if (slot < lengths.length) lengths[slot] = undefined;
    }
    this.added -= dead.size;
    dead.clear();
  }

  isLive(slot: number): boolean {
    return slot < this.slots && !this.deleted.has(slot);
  }

  search(queryTerms: string[], opts: TextSearchOptions = {}): TextHit[] {
    const live = this.size;
    if (live === 0 || queryTerms.length === 0) return [];
    if (this.scores.length < this.slots) {
      this.scores = new Float64Array(this.slots + 1024);
      this.matched = new Uint16Array(this.slots + 1024);
      this.stamp = new Uint32Array(this.slots + 1024);
    }
    const stamp = this.stamp;
    const scores = this.scores;
    const matched = this.matched;
    const touched: number[] = [];
    const maxDf = (opts.maxDocFrequency ?? 1) * live;
    const accept = opts.accept;

    for (const term of queryTerms) {
      const id = this.idOf(term);
      if (id === undefined) continue;
      const termStamp = ++this.stampCounter;
      for (let f = 0; f < TEXT_FIELDS.length; f++) {
        const boost = opts.boost?.[TEXT_FIELDS[f]!] ?? 1;
        if (boost <= 0) continue;
        const list = this.list(f, id);
        if (list === undefined) continue;
        const df = this.liveDf(list);
        if (df === 0 || df > maxDf) continue;
        const idf = Math.log(1 + (live - df + 0.5) / (df + 0.5));
        const avgLen = this.totalLength[f]! / live || 1;
        const lengths = this.fieldLengths[f]!;
        for (let i = 0; i < list.length; i += 2) {
          const slot = list[i]!;
          if (this.deleted.size > 0 && this.deleted.has(slot)) continue;
          if (accept && !accept(slot)) continue;
          const tf = list[i + 1]!;
          const len = lengths[slot] ?? 0;
          const s = (boost * idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * len) / avgLen));
          if (scores[slot] === 0) touched.push(slot);
          scores[slot]! += s;
          if (stamp[slot] !== termStamp) {
            stamp[slot] = termStamp;
            matched[slot]!++;
          }
        }
      }
    }

    const hits: TextHit[] = [];
    for (const slot of touched) {
      hits.push({ slot, score: scores[slot]!, matchedTerms: matched[slot]! });
      scores[slot] = 0;
      matched[slot] = 0;
    }
    hits.sort((a, b) => b.score - a.score || a.slot - b.slot);
    return opts.limit !== undefined ? hits.slice(0, opts.limit) : hits;
  }

  /**
   * Which groups of terms each live document holds: for every document with a term of at least
   * one group in any field, a bit mask whose bit i says it holds a term of `groups[i]`. At most
   * 32 groups. The oracle asks this to see whether a question's words occur together in one
   * chunk (see oracle/relevance.ts); it is one pass over the terms' postings.
   */
  groupMasks(groups: readonly (readonly string[])[]): Map<number, number> {
    if (groups.length > 32) throw new Error(`groupMasks: at most 32 groups (${groups.length} given)`);
    const masks = new Map<number, number>();
    groups.forEach((terms, g) => {
      const bit = 1 << g;
      for (const term of terms) {
        const id = this.idOf(term);
        if (id === undefined) continue;
        for (let f = 0; f < TEXT_FIELDS.length; f++) {
          const list = this.list(f, id);
          if (list === undefined) continue;
          for (let i = 0; i < list.length; i += 2) {
            const slot = list[i]!;
            if (this.deleted.size > 0 && this.deleted.has(slot)) continue;
            masks.set(slot, (masks.get(slot) ?? 0) | bit);
          }
        }
      }
    });
    return masks;
  }

  /** Document frequency of a term in a field: live documents only. */
  docFrequency(term: string, field: TextField): number {
    const id = this.idOf(term);
    if (id === undefined) return 0;
    const list = this.list(TEXT_FIELDS.indexOf(field), id);
    return list ? this.liveDf(list) : 0;
  }

  /** A term's id, or undefined when no document holds it. */
  private idOf(term: string): number | undefined {
    if (!this.sortedVocabulary) return this.termIds.get(term);
    const terms = this.terms;
    let lo = 0;
    let hi = terms.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const t = terms[mid]!;
      if (t === term) return mid;
      if (t < term) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /** The term map for adding documents (new terms go at the end, so the order is lost). */
  private ensureTermIds(): void {
    if (!this.sortedVocabulary) return;
    this.sortedVocabulary = false;
    for (let t = 0; t < this.terms.length; t++) this.termIds.set(this.terms[t]!, t);
  }

  /** A term's posting list in a field, read from the snapshot on first use. */
  private list(f: number, id: number): Postings | undefined {
    const held = this.postings[f]![id];
    const snap = this.snap;
    if (held !== undefined || snap === undefined || id >= snap.termCount) return held;
    const at = snap.offsets[f * snap.termCount + id]!;
    const n = snap.buf[at]!;
    if (n === 0) return undefined;
    const list = snap.buf.subarray(at + 1, at + 1 + n);
    this.postings[f]![id] = list;
    return list;
  }

  /** Takes every posting list still in the snapshot (before a rewrite of them all). */
  private readAll(): void {
    const snap = this.snap;
    if (!snap) return;
    for (let f = 0; f < TEXT_FIELDS.length; f++) for (let t = 0; t < snap.termCount; t++) this.list(f, t);
    this.snap = undefined;
  }

  /** The live documents of a posting list: deleted slots do not count toward a term's rarity. */
  private liveDf(list: Postings): number {
    if (this.deleted.size === 0) return list.length / 2;
    let n = 0;
    for (let i = 0; i < list.length; i += 2) if (!this.deleted.has(list[i]!)) n++;
    return n;
  }

  /**
   * Snapshot layout "VTI3" (little-endian u32 words; "VTI2" is the same with the terms in the
   * order they were first added): magic, slots, termCount, liveCount,
   * termBytesLength, added, lastAdded + 1, then the UTF-8 terms, sorted, joined by "\n" (padded to 4
   * bytes), then the live slots ascending, then per field: totalLength (as two u32 halves), the
   * lengths of the live slots in that order, and for each term: postings length followed by the
   * postings. The index is compacted first, so the snapshot of a churned index is the size of
   * a fresh one's (plus one word per slot number it skipped, none).
   */
  serialize(): Uint8Array {
    this.readAll();
    this.compact();
    // Terms are written in sorted order (their lists follow), so that a loaded snapshot finds
    // a term by binary search and builds no term map.
    const order = this.sortedVocabulary ? this.terms.map((_, t) => t) : sortedOrder(this.terms);
    const live: number[] = [];
    for (let slot = 0; slot < this.slots; slot++) if (this.fieldLengths.some((l) => l[slot] !== undefined)) live.push(slot);
    const termBytes = new TextEncoder().encode(order.map((t) => this.terms[t]!).join('\n'));
    const termWords = Math.ceil(termBytes.length / 4);
    let words = 7 + termWords + live.length;
    for (let f = 0; f < TEXT_FIELDS.length; f++) {
      words += 2 + live.length + this.terms.length;
      for (const list of this.postings[f]!) words += list ? list.length : 0;
    }
    const buf = new Uint32Array(words);
    let o = 0;
    buf[o++] = MAGIC;
    buf[o++] = this.slots;
    buf[o++] = this.terms.length;
    buf[o++] = live.length;
    buf[o++] = termBytes.length;
    buf[o++] = this.added;
    buf[o++] = this.lastAdded + 1;
    new Uint8Array(buf.buffer, o * 4, termBytes.length).set(termBytes);
    o += termWords;
    for (const slot of live) buf[o++] = slot;
    for (let f = 0; f < TEXT_FIELDS.length; f++) {
      const total = this.totalLength[f]!;
      buf[o++] = total % 0x100000000;
      buf[o++] = Math.floor(total / 0x100000000);
      const lengths = this.fieldLengths[f]!;
      for (const slot of live) buf[o++] = lengths[slot] ?? 0;
      const fieldPostings = this.postings[f]!;
      for (const t of order) {
        const list = fieldPostings[t];
        const n = list ? list.length : 0;
        buf[o++] = n;
        if (list) {
          buf.set(list, o);
          o += n;
        }
      }
    }
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  /** Reads a snapshot of any layout ("VTI1" and "VTI2" from earlier versions, "VTI3"). */
  static deserialize(bytes: Uint8Array): CodeTextIndex {
    // Copy into an aligned buffer we own: sql.js hands out views into its heap.
    const aligned = new Uint32Array(Math.floor(bytes.byteLength / 4));
    new Uint8Array(aligned.buffer).set(bytes.subarray(0, aligned.byteLength));
    const buf = aligned;
    let o = 0;
    const magic = buf[o++];
    if (magic !== MAGIC && magic !== MAGIC_V2 && magic !== MAGIC_V1) throw new Error('not a text index snapshot');
    const v1 = magic === MAGIC_V1;
    const idx = new CodeTextIndex();
    idx.slots = buf[o++]!;
    const termCount = buf[o++]!;
    // v1: the deleted slots' count; v2: the live slots' count.
    const listed = buf[o++]!;
    const termByteLength = buf[o++]!;
    idx.added = buf[o++]!;
    idx.lastAdded = buf[o++]! - 1;
    const text = new TextDecoder().decode(new Uint8Array(buf.buffer, o * 4, termByteLength));
    o += Math.ceil(termByteLength / 4);
    idx.terms = termCount === 0 ? [] : text.split('\n');
    if (idx.terms.length !== termCount) throw new Error('text index snapshot has a damaged vocabulary');
    if (magic === MAGIC) idx.sortedVocabulary = true;
    else for (let t = 0; t < termCount; t++) idx.termIds.set(idx.terms[t]!, t);
    const slotList = Array.from(buf.subarray(o, o + listed));
    o += listed;
    if (v1) for (const d of slotList) idx.deleted.add(d);
    const offsets = new Uint32Array(TEXT_FIELDS.length * termCount);
    for (let f = 0; f < TEXT_FIELDS.length; f++) {
      idx.totalLength[f] = buf[o]! + buf[o + 1]! * 0x100000000;
      o += 2;
      if (v1) {
        idx.fieldLengths[f] = Array.from(buf.subarray(o, o + idx.slots));
        o += idx.slots;
      } else {
        const lengths: Array<number | undefined> = [];
        for (const slot of slotList) lengths[slot] = buf[o++]!;
        idx.fieldLengths[f] = lengths;
      }
      // Where each term's list starts; the lists themselves are read when asked for.
      for (let t = 0; t < termCount; t++) {
        offsets[f * termCount + t] = o;
        o += 1 + buf[o]!;
        if (o > buf.length) throw new Error('text index snapshot is truncated');
      }
    }
    idx.snap = { buf, termCount, offsets };
    return idx;
  }
}

/** Term ids in the order of their terms (UTF-16 code units, as `<` compares them). */
function sortedOrder(terms: readonly string[]): number[] {
  return terms.map((_, t) => t).sort((a, b) => (terms[a]! < terms[b]! ? -1 : terms[a]! > terms[b]! ? 1 : 0));
}
