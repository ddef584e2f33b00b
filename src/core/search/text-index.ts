/**
 * A compact inverted index for code chunks, scored with BM25F (per-field BM25 summed with
 * field boosts). It is plugged into Orama as its full-text index component (see
 * orama-index.ts), replacing Orama's radix-tree index for the text fields.
 *
 * Why not Orama's default index: on the Go standard library (42K chunks) it inserts at
 * ~3K chunks/s, answers common-term queries in 50-80 ms, and its snapshot takes ~6 s and
 * 2.3 GB to load. Here postings are flat `(slot, tf)` integer pairs. A snapshot is read by
 * range (a {@link ByteSource}: the sidecar file, held open): its head (the vocabulary, field
 * lengths, and where each term's lists lie) when it is opened, and a term's posting lists the
 * first time the term is asked for, so reopening costs the vocabulary, not the postings (25 of
 * the 28 MB on the Go standard library, of which a query reads a few terms).
 */
import { memorySource, type ByteSource } from '../store/byte-source';

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
  /** A weight per query term (default 1): expansions of the query count less than its own words. */
  weights?: ReadonlyMap<string, number>;
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
const MAGIC_V3 = 0x56544934;
/** "VTI4": a head read at open, and a body of posting lists read by range, one term at a time. */
const MAGIC = 0x56544935;
/** Words before the vocabulary in a VTI4 snapshot. */
const HEADER_WORDS = 8;
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
  /**
   * Per field, BM25's length normalisation of each slot (`K1 * (1 - B + B * len / avgLen)`),
   * computed on first search after a change: a query then reads one typed array per posting
   * instead of a sparse length array and the division. `normsAt` is the {@link changes} count
   * they were computed at.
   */
  private norms: Array<Float64Array | undefined> = TEXT_FIELDS.map(() => undefined);
  private normsAt = -1;
  /** Bumped by every add, remove and compaction (what the norms depend on). */
  private changes = 0;
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
   * a term's lists are taken from it the first time the term is asked for, so that opening
   * costs the vocabulary, not one object per term and field.
   */
  private snap: SnapshotLists | undefined;

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
    this.changes++;
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
    this.changes++;
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
    this.changes++;
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
    const deleted = this.deleted.size > 0 ? this.deleted : undefined;

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
        // Evaluated as (boost * idf * tf * (K1 + 1)) / (tf + norm), in the same order as ever,
        // so scores are bit for bit what they were.
        const weight = boost * idf * (opts.weights?.get(term) ?? 1);
        const norm = this.normsOf(f, live);
        for (let i = 0; i < list.length; i += 2) {
          const slot = list[i]!;
          if (deleted !== undefined && deleted.has(slot)) continue;
          if (accept && !accept(slot)) continue;
          const tf = list[i + 1]!;
          const s = (weight * tf * (K1 + 1)) / (tf + norm[slot]!);
          if (scores[slot] === 0) touched.push(slot);
          scores[slot]! += s;
          if (stamp[slot] !== termStamp) {
            stamp[slot] = termStamp;
            matched[slot]!++;
          }
        }
      }
    }

    // Best first (ties by slot). With a limit, only the hits that can make it are sorted: those
    // at or above the limit-th best score.
    let keep = touched;
    const limit = opts.limit;
    if (limit !== undefined && limit < touched.length) {
      const sorted = new Float64Array(touched.length);
      for (let i = 0; i < touched.length; i++) sorted[i] = scores[touched[i]!]!;
      sorted.sort();
      const floor = limit > 0 ? sorted[sorted.length - limit]! : Infinity;
      keep = touched.filter((slot) => scores[slot]! >= floor);
    }
    const hits: TextHit[] = keep.map((slot) => ({ slot, score: scores[slot]!, matchedTerms: matched[slot]! }));
    for (const slot of touched) {
      scores[slot] = 0;
      matched[slot] = 0;
    }
    hits.sort((a, b) => b.score - a.score || a.slot - b.slot);
    return limit !== undefined ? hits.slice(0, limit) : hits;
  }

  /** Field `f`'s length normalisation per slot, for `live` documents (see {@link norms}). */
  private normsOf(f: number, live: number): Float64Array {
    if (this.normsAt !== this.changes) {
      this.norms = TEXT_FIELDS.map(() => undefined);
      this.normsAt = this.changes;
    }
    let norm = this.norms[f];
    if (norm === undefined || norm.length < this.slots) {
      norm = new Float64Array(this.slots);
      const avgLen = this.totalLength[f]! / live || 1;
      const lengths = this.fieldLengths[f]!;
      for (let slot = 0; slot < this.slots; slot++) norm[slot] = K1 * (1 - B + (B * (lengths[slot] ?? 0)) / avgLen);
      this.norms[f] = norm;
    }
    return norm;
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
  /** Whether any live or dead document holds `term` (a cheap vocabulary check). */
  hasTerm(term: string): boolean {
    return this.idOf(term) !== undefined;
  }

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
    if (snap.kind === 'ranged') {
      if (snap.taken[id]) return undefined;
      const first = snap.blocks[id]!;
      const words = new Uint32Array(snap.blocks[id + 1]! - first);
      snap.source.readInto(new Uint8Array(words.buffer), snap.bodyAt + first * 4);
      this.takeBlock(snap, id, words, 0);
      return this.postings[f]![id];
    }
    const at = snap.offsets[f * snap.termCount + id]!;
    const n = snap.buf[at]!;
    if (n === 0) return undefined;
    const list = snap.buf.subarray(at + 1, at + 1 + n);
    this.postings[f]![id] = list;
    return list;
  }

  /** Takes term `id`'s lists from its block (per field: the list's length, then after them the lists) at `at` in `words`. */
  private takeBlock(snap: RangedLists, id: number, words: Uint32Array, at: number): void {
    let o = at + TEXT_FIELDS.length;
    for (let f = 0; f < TEXT_FIELDS.length; f++) {
      const n = words[at + f]!;
      if (n > 0 && this.postings[f]![id] === undefined) this.postings[f]![id] = words.subarray(o, o + n);
      o += n;
    }
    snap.taken[id] = 1;
  }

  /** Takes every posting list still in the snapshot (before a rewrite of them all), and lets the snapshot go. */
  private readAll(): void {
    const snap = this.snap;
    if (!snap) return;
    if (snap.kind === 'ranged') {
      // One read of the whole body rather than one per term.
      const body = new Uint32Array(snap.blocks[snap.termCount]!);
      snap.source.readInto(new Uint8Array(body.buffer), snap.bodyAt);
      for (let t = 0; t < snap.termCount; t++) if (!snap.taken[t]) this.takeBlock(snap, t, body, snap.blocks[t]!);
      snap.source.close();
    } else {
      for (let f = 0; f < TEXT_FIELDS.length; f++) for (let t = 0; t < snap.termCount; t++) this.list(f, t);
    }
    this.snap = undefined;
  }

  /** Releases the snapshot's file, for an index that is done with: its unread lists can no longer be read. */
  close(): void {
    if (this.snap?.kind === 'ranged') this.snap.source.close();
  }

  /** The live documents of a posting list: deleted slots do not count toward a term's rarity. */
  private liveDf(list: Postings): number {
    if (this.deleted.size === 0) return list.length / 2;
    let n = 0;
    for (let i = 0; i < list.length; i += 2) if (!this.deleted.has(list[i]!)) n++;
    return n;
  }

  /**
   * Snapshot layout "VTI4" (little-endian u32 words), a head and a body. The head: magic, slots,
   * termCount, liveCount, termBytesLength, added, lastAdded + 1, headWords; the UTF-8 terms,
   * sorted, joined by "\n" (padded to 4 bytes); the live slots ascending; per field, totalLength
   * (as two u32 halves) and the lengths of the live slots in that order; then termCount + 1 word
   * offsets into the body, where each term's block starts (and the body ends). The body: per
   * term, its block: each field's list length, then the lists. The index is compacted first, so
   * the snapshot of a churned index is the size of a fresh one's.
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
    const headWords = HEADER_WORDS + termWords + live.length + TEXT_FIELDS.length * (2 + live.length) + this.terms.length + 1;
    let bodyWords = this.terms.length * TEXT_FIELDS.length;
    for (let f = 0; f < TEXT_FIELDS.length; f++) for (const list of this.postings[f]!) bodyWords += list ? list.length : 0;
    const buf = new Uint32Array(headWords + bodyWords);
    let o = 0;
    buf[o++] = MAGIC;
    buf[o++] = this.slots;
    buf[o++] = this.terms.length;
    buf[o++] = live.length;
    buf[o++] = termBytes.length;
    buf[o++] = this.added;
    buf[o++] = this.lastAdded + 1;
    buf[o++] = headWords;
    new Uint8Array(buf.buffer, o * 4, termBytes.length).set(termBytes);
    o += termWords;
    for (const slot of live) buf[o++] = slot;
    for (let f = 0; f < TEXT_FIELDS.length; f++) {
      const total = this.totalLength[f]!;
      buf[o++] = total % 0x100000000;
      buf[o++] = Math.floor(total / 0x100000000);
      const lengths = this.fieldLengths[f]!;
      for (const slot of live) buf[o++] = lengths[slot] ?? 0;
    }
    const blocks = o;
    let b = headWords;
    order.forEach((t, i) => {
      buf[blocks + i] = b - headWords;
      for (let f = 0; f < TEXT_FIELDS.length; f++) buf[b++] = this.postings[f]![t]?.length ?? 0;
      for (let f = 0; f < TEXT_FIELDS.length; f++) {
        const list = this.postings[f]![t];
        if (list) {
          buf.set(list, b);
          b += list.length;
        }
      }
    });
    buf[blocks + order.length] = b - headWords;
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  /**
   * Opens a "VTI4" snapshot that starts at `at` in `source`: reads its head now and each term's
   * lists when first asked for, so `source` must stay open while the index is used (the index
   * closes it once it has read everything, and in {@link close}). Other layouts are read whole.
   */
  static open(source: ByteSource, at = 0): CodeTextIndex {
    if (source.byteLength - at < HEADER_WORDS * 4) throw new Error('text index snapshot is truncated');
    const header = new Uint32Array(HEADER_WORDS);
    source.readInto(new Uint8Array(header.buffer), at);
    if (header[0] !== MAGIC) {
      const bytes = new Uint8Array(source.byteLength - at);
      source.readInto(bytes, at);
      source.close();
      return CodeTextIndex.deserialize(bytes);
    }
    const [, slots, termCount, liveCount, termByteLength, added, lastAdded, headWords] = header as unknown as number[];
    const termWords = Math.ceil(termByteLength! / 4);
    const expected = HEADER_WORDS + termWords + liveCount! + TEXT_FIELDS.length * (2 + liveCount!) + termCount! + 1;
    if (headWords !== expected || at + headWords * 4 > source.byteLength) throw new Error('text index snapshot is truncated or damaged');
    const head = new Uint32Array(headWords);
    source.readInto(new Uint8Array(head.buffer), at);
    const idx = new CodeTextIndex();
    idx.slots = slots!;
    idx.added = added!;
    idx.lastAdded = lastAdded! - 1;
    let o = HEADER_WORDS;
    const text = new TextDecoder().decode(new Uint8Array(head.buffer, o * 4, termByteLength));
    o += termWords;
    idx.terms = termCount === 0 ? [] : text.split('\n');
    if (idx.terms.length !== termCount) throw new Error('text index snapshot has a damaged vocabulary');
    idx.sortedVocabulary = true;
    const live = head.subarray(o, o + liveCount!);
    o += liveCount!;
    for (let f = 0; f < TEXT_FIELDS.length; f++) {
      idx.totalLength[f] = head[o]! + head[o + 1]! * 0x100000000;
      o += 2;
      const lengths: Array<number | undefined> = [];
      for (let i = 0; i < live.length; i++) lengths[live[i]!] = head[o++]!;
      idx.fieldLengths[f] = lengths;
    }
    const blocks = head.subarray(o, o + termCount! + 1);
    const bodyAt = at + headWords * 4;
    if (bodyAt + blocks[termCount!]! * 4 > source.byteLength) throw new Error('text index snapshot is truncated');
    idx.snap = { kind: 'ranged', termCount: termCount!, source, bodyAt, blocks, taken: new Uint8Array(termCount!) };
    return idx;
  }

  /** Reads a snapshot of any layout ("VTI4", and "VTI1" to "VTI3" from earlier versions). */
  static deserialize(bytes: Uint8Array): CodeTextIndex {
    if (bytes.byteLength >= 4 && new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true) === MAGIC) return CodeTextIndex.open(memorySource(bytes));
    // Copy into an aligned buffer we own: sql.js hands out views into its heap.
    const aligned = new Uint32Array(Math.floor(bytes.byteLength / 4));
    new Uint8Array(aligned.buffer).set(bytes.subarray(0, aligned.byteLength));
    const buf = aligned;
    let o = 0;
    const magic = buf[o++];
    if (magic !== MAGIC_V3 && magic !== MAGIC_V2 && magic !== MAGIC_V1) throw new Error('not a text index snapshot');
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
    if (magic === MAGIC_V3) idx.sortedVocabulary = true;
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
    idx.snap = { kind: 'inline', buf, termCount, offsets };
    return idx;
  }
}

/** Term ids in the order of their terms (UTF-16 code units, as `<` compares them). */
function sortedOrder(terms: readonly string[]): number[] {
  return terms.map((_, t) => t).sort((a, b) => (terms[a]! < terms[b]! ? -1 : terms[a]! > terms[b]! ? 1 : 0));
}

/** Posting lists of a snapshot in memory (layouts "VTI2", "VTI3"): each term and field's list in place. */
interface InlineLists {
  kind: 'inline';
  buf: Uint32Array;
  termCount: number;
  /** Where the list of field f and term t starts in `buf`: index f * termCount + t. */
  offsets: Uint32Array;
}

/** Posting lists of a "VTI4" snapshot, read by range: one term's block (all fields) at a time. */
interface RangedLists {
  kind: 'ranged';
  termCount: number;
  source: ByteSource;
  /** Byte position of the body in `source`. */
  bodyAt: number;
  /** Word offset of each term's block in the body, and the body's end. */
  blocks: Uint32Array;
  /** Per term: 1 once its lists are taken. */
  taken: Uint8Array;
}

type SnapshotLists = InlineLists | RangedLists;
