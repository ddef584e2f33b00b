/**
 * A compact inverted index for code chunks, scored with BM25F (per-field BM25 summed with
 * field boosts). It is plugged into Orama as its full-text index component (see
 * orama-index.ts), replacing Orama's radix-tree index for the text fields.
 *
 * Why not Orama's default index: on the Go standard library (42K chunks) it inserts at
 * ~3K chunks/s, answers common-term queries in 50-80 ms, and its snapshot takes ~6 s and
 * 2.3 GB to load. Here postings are flat `(slot, tf)` integer pairs.
 *
 * The index is log-structured, so that its memory does not grow with the repository: new
 * documents go to an in-memory tail; when the tail outgrows its budget, or a commit saves the
 * index, the tail is written as an immutable segment (text-segment.ts) and read by range from
 * then on (its head when opened, a term's lists when a query asks for them, through a bounded
 * cache). Commits merge segments by tiers (a few of about the same size become one), and
 * rewrite a segment whose documents are mostly deleted; a merge streams, one term at a time.
 * Deleted documents are a set until the merge that drops them; scoring skips them and counts
 * only live documents, so a churned index scores exactly as a fresh build of the same
 * documents, however its segments lie.
 */
import {
  blockList,
  FIELD_COUNT,
  MemorySegmentDir,
  Segment,
  SEGMENT_MAGIC,
  TEXT_FIELDS,
  unionVocabulary,
  writeSegment,
  writeSegmentAsync,
  type SegmentDir,
  type SegmentRef,
  type SegmentSource,
  type TextField,
} from './text-segment';
import type { ByteSource } from '../store/byte-source';

export { TEXT_FIELDS, type TextField } from './text-segment';
import { countTerms, isCounted, type FieldTerms } from './tokenizer';
export type { FieldTerms } from './tokenizer';

/** A posting list: interleaved slot and term-frequency pairs, slots ascending. */
type Postings = ArrayLike<number>;

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

/** What a committed text index is: its segments, the documents deleted in them, and its slot counters. */
export interface TextManifest {
  segments: SegmentRef[];
  deleted: number[];
  slots: number;
  added: number;
  lastAdded: number;
}

const K1 = 1.2;
const B = 0.75;
/** The tail is written as a segment once it holds about this many bytes (see {@link CodeTextIndex.tailBytes}). */
export const DEFAULT_TAIL_BYTES = 64 * 2 ** 20;
/** Posting blocks read from segments are kept up to this many bytes, the least recently used dropped first. */
const BLOCK_CACHE_BYTES = 16 * 2 ** 20;
/**
 * Segments merge by tiers: this many adjacent segments of about the same size (the largest less
 * than this many times the smallest) become one. Each posting is then rewritten about once each
 * time the index grows this many times, and at most this many less one segments of each size
 * stand. (Merging a segment into the one before it once it held half that one's postings, as
 * this index did first, rewrote the oldest segment at almost every commit of a long build: 40 s
 * of a 3.5-minute build of half the Linux kernel.)
 */
const MERGE_FANOUT = 4;
/** A segment whose deleted documents are this share of its documents (and at least {@link COMPACT_MIN}) is rewritten without them. */
const COMPACT_RATIO = 0.25;
const COMPACT_MIN = 256;
/** Estimated heap bytes per tail posting number (a JS array of small integers, with its slack) and per new term. */
const BYTES_PER_POSTING_WORD = 12;
const BYTES_PER_TERM = 120;

/** Blocks read from segments, least recently used dropped first. */
class BlockCache {
  private readonly blocks = new Map<string, Uint32Array>();
  private bytes = 0;
  constructor(private readonly budget: number) {}
  get(key: string): Uint32Array | undefined {
    const b = this.blocks.get(key);
    if (b) {
      this.blocks.delete(key);
      this.blocks.set(key, b);
    }
    return b;
  }
  set(key: string, block: Uint32Array): void {
    if (block.byteLength > this.budget / 4) return;
    this.blocks.set(key, block);
    this.bytes += block.byteLength;
    for (const [k, b] of this.blocks) {
      if (this.bytes <= this.budget) break;
      this.blocks.delete(k);
      this.bytes -= b.byteLength;
    }
  }
  clear(): void {
    this.blocks.clear();
    this.bytes = 0;
  }
}

let segmentIds = 0;

export class CodeTextIndex {
  // The tail: documents added since it was last written as a segment.
  private readonly termIds = new Map<string, number>();
  private terms: string[] = [];
  /** postings[field][termId] */
  private postings: number[][][] = TEXT_FIELDS.map(() => []);
  /** The tail's slots, ascending. */
  private tailSlots: number[] = [];
  private tailWords = 0;
  private tailTermBytes = 0;

  /** Segments in slot order, each with an id for the block cache. */
  private segments: Array<{ seg: Segment; id: number }> = [];
  private readonly cache = new BlockCache(BLOCK_CACHE_BYTES);
  private merging: Promise<number> | undefined;

  /** fieldLengths[field][slot]; undefined for a slot never added or dropped by a merge. */
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
  /** Bumped by every add and remove (what the norms depend on). */
  private changes = 0;
  private readonly deleted: Set<number> = new Set();
  private slots = 0;
  /** Number of distinct slots held (added, less those a merge or tail write dropped). */
  private added = 0;
  private lastAdded = -1;
  private scores = new Float64Array(0);
  private matched = new Uint16Array(0);
  /** Per-slot stamp of the last query term that matched it, to count distinct matched terms. */
  private stamp = new Uint32Array(0);
  private stampCounter = 0;

  /**
   * @param dir where segments are written and opened
   * @param tailBudget the tail is written as a segment when it holds about this many bytes
   *   (checked by {@link maybeSpill}, after a whole document)
   */
  constructor(
    private readonly dir: SegmentDir = new MemorySegmentDir(),
    private readonly tailBudget = DEFAULT_TAIL_BYTES,
  ) {}

  get size(): number {
    return this.added - this.deleted.size;
  }

  get slotCount(): number {
    return this.slots;
  }

  get deletedCount(): number {
    return this.deleted.size;
  }

  /** Terms held, counted once per segment and in the tail. */
  get vocabularySize(): number {
    let n = this.terms.length;
    for (const { seg } of this.segments) n += seg.terms.length;
    return n;
  }

  get segmentCount(): number {
    return this.segments.length;
  }

  /** Estimated heap bytes of the tail's postings and terms. */
  get tailBytes(): number {
    return this.tailWords * BYTES_PER_POSTING_WORD + this.tailTermBytes;
  }

  /**
   * Adds the given fields of the document at `slot`. Slots only grow: a new document takes
   * a slot above every earlier one, and the fields of one document may arrive in several
   * calls (Orama indexes one property at a time).
   */
  add(slot: number, fields: Partial<Record<TextField, FieldTerms>>): void {
    if (slot < this.slots - 1) throw new Error(`slot ${slot} added out of order (next is ${this.slots})`);
    this.slots = Math.max(this.slots, slot + 1);
    this.changes++;
    if (slot !== this.lastAdded) {
      this.added++;
      this.lastAdded = slot;
      this.tailSlots.push(slot);
    }
    for (let f = 0; f < FIELD_COUNT; f++) {
      const given = fields[TEXT_FIELDS[f]!];
      if (given === undefined) continue;
      const { terms, counts, length } = isCounted(given) ? given : countTerms(given);
      this.fieldLengths[f]![slot] = length;
      this.totalLength[f]! += length;
      const fieldPostings = this.postings[f]!;
      for (let i = 0; i < terms.length; i++) {
        const term = terms[i]!;
        const freq = counts[i]!;
        let id = this.termIds.get(term);
        if (id === undefined) {
          id = this.terms.length;
          this.terms.push(term);
          this.termIds.set(term, id);
          this.tailTermBytes += BYTES_PER_TERM + term.length * 2;
        }
        let list = fieldPostings[id];
        if (list === undefined) {
          list = [];
          fieldPostings[id] = list;
        }
        list.push(slot, freq);
        this.tailWords += 2;
      }
    }
  }

  /**
   * Marks a slot deleted. Its postings stay until the tail is written or a merge rewrites its
   * segment; scoring skips it, so results are exact and deletion is O(1).
   */
  remove(slot: number): void {
    if (slot >= this.slots || this.deleted.has(slot) || this.fieldLengths.every((l) => l[slot] === undefined)) return;
    this.deleted.add(slot);
    this.changes++;
    for (let f = 0; f < FIELD_COUNT; f++) this.totalLength[f]! -= this.fieldLengths[f]![slot] ?? 0;
  }

  /** Writes the tail as a segment once it is over its budget. Call between documents, never inside one. */
  maybeSpill(): void {
    if (this.tailBytes > this.tailBudget) this.flush();
  }

  /** Writes the tail, if it holds anything, as a segment (its deleted documents left out). */
  flush(): void {
    if (this.tailSlots.length === 0 && this.terms.length === 0) return;
    const dead = this.deleted;
    const live = this.tailSlots.filter((s) => !dead.has(s));
    const alive = (list: number[]): number[] => {
      if (dead.size === 0) return list;
      const out: number[] = [];
      for (let i = 0; i < list.length; i += 2) if (!dead.has(list[i]!)) out.push(list[i]!, list[i + 1]!);
      return out;
    };
    // Terms that only dead documents held go with them.
    const order = sortedOrder(this.terms).filter((t) => this.postings.some((fp) => fp[t] !== undefined && (dead.size === 0 || alive(fp[t]!).length > 0)));
    if (live.length > 0 || order.length > 0) {
      const src: SegmentSource = {
        terms: order.map((t) => this.terms[t]!),
        live,
        lengths: this.fieldLengths.map((l) => live.map((s) => l[s] ?? 0)),
        lists: (t, emit) => {
          const id = order[t]!;
          for (let f = 0; f < FIELD_COUNT; f++) emit(f, alive(this.postings[f]![id] ?? []));
        },
      };
      const ref = writeSegment(this.dir.create(), src);
      this.attach(ref);
    }
    for (const slot of this.tailSlots) if (dead.has(slot)) this.drop(slot);
    this.termIds.clear();
    this.terms = [];
    this.postings = TEXT_FIELDS.map(() => []);
    this.tailSlots = [];
    this.tailWords = 0;
    this.tailTermBytes = 0;
  }

  /** Opens a segment just written and appends it. */
  private attach(ref: SegmentRef): void {
    const source = this.dir.open(ref);
    if (!source) throw new Error(`text index segment ${ref.name} could not be opened after it was written`);
    this.segments.push({ seg: Segment.open(ref, source), id: segmentIds++ });
  }

  /** Forgets a deleted slot whose postings are gone. */
  private drop(slot: number): void {
    this.deleted.delete(slot);
    this.added--;
    for (let f = 0; f < FIELD_COUNT; f++) this.fieldLengths[f]![slot] = undefined;
  }

  /** Deleted documents among a segment's. */
  private deadIn(seg: Segment): number {
    if (this.deleted.size === 0) return 0;
    let n = 0;
    for (const slot of this.deleted) if (slot >= seg.firstSlot && slot <= seg.lastSlot) n++;
    return n;
  }

  /**
   * Merges segments until no tier holds {@link MERGE_FANOUT} of about the same size,
   * and rewrites a segment mostly deleted, streaming a term at a time. `pause` is awaited now
   * and then, so that a long merge lets other work run; queries meanwhile read the segments
   * being merged, which stay until the merged one replaces them.
   */
  merge(pause: () => Promise<void> = () => new Promise((r) => setImmediate(r))): Promise<number> {
    // One merge at a time: a second caller waits for the first's.
    this.merging ??= (async () => {
      let merges = 0;
      for (;;) {
        const run = this.nextMerge();
        if (!run) return merges;
        await this.mergeRun(run[0], run[1], pause);
        merges++;
      }
    })().finally(() => {
      this.merging = undefined;
    });
    return this.merging;
  }

  /** The next run of segments to merge, [first, last] inclusive, or undefined. */
  private nextMerge(): [number, number] | undefined {
    const segs = this.segments;
    const dead = segs.map((s) => this.deadIn(s.seg));
    for (let i = 0; i < segs.length; i++) {
      const seg = segs[i]!.seg;
      // A snapshot of the earlier layout, read in place: rewritten as a segment file of its own.
      if (seg.ref.name === '') return [i, i];
      if (dead[i]! >= COMPACT_MIN && dead[i]! >= seg.live.length * COMPACT_RATIO) return [i, i];
    }
    // A segment's size for the tiers counts its live documents only, so that one whose
    // documents were mostly replaced merges early, below the threshold for rewriting it alone.
    const bytes = segs.map((s, i) => Math.max(1, s.seg.bodyBytes * (s.seg.live.length === 0 ? 0 : 1 - dead[i]! / s.seg.live.length)));
    // A segment much smaller than the one after it (a commit's short tail before the next
    // full one) joins it, so that sizes fall from the oldest and tiers stay contiguous.
    for (let i = 0; i + 1 < bytes.length; i++) if (bytes[i]! * MERGE_FANOUT <= bytes[i + 1]!) return [i, i + 1];
    for (let i = 0; i < bytes.length; i++) {
      let lo = bytes[i]!;
      let hi = lo;
      let j = i;
      while (j + 1 < bytes.length) {
        const next = bytes[j + 1]!;
        if (Math.max(hi, next) >= Math.min(lo, next) * MERGE_FANOUT) break;
        lo = Math.min(lo, next);
        hi = Math.max(hi, next);
        j++;
      }
      if (j - i + 1 >= MERGE_FANOUT) return [i, j];
    }
    return undefined;
  }

  private async mergeRun(first: number, last: number, pause: () => Promise<void>): Promise<void> {
    const run = this.segments.slice(first, last + 1);
    const segs = run.map((r) => r.seg);
    const lo = segs[0]!.firstSlot;
    const hi = segs[segs.length - 1]!.lastSlot;
    const dead = new Set([...this.deleted].filter((s) => s >= lo && s <= hi));
    const live: number[] = [];
    const lengths: number[][] = TEXT_FIELDS.map(() => []);
    for (const seg of segs) {
      for (let i = 0; i < seg.live.length; i++) {
        const slot = seg.live[i]!;
        if (dead.has(slot)) continue;
        live.push(slot);
        for (let f = 0; f < FIELD_COUNT; f++) lengths[f]!.push(seg.lengths[f]![i]!);
      }
    }
    const terms = unionVocabulary(segs.map((s) => s.terms));
    const at = segs.map(() => 0);
    const readers = segs.map((seg) => seg.sequentialBlocks());
    const alive = (list: Uint32Array): ArrayLike<number> => {
      if (dead.size === 0) return list;
      let keep = 0;
      for (let i = 0; i < list.length; i += 2) if (!dead.has(list[i]!)) keep += 2;
      if (keep === list.length) return list;
      const out = new Uint32Array(keep);
      let o = 0;
      for (let i = 0; i < list.length; i += 2) {
        if (dead.has(list[i]!)) continue;
        out[o++] = list[i]!;
        out[o++] = list[i + 1]!;
      }
      return out;
    };
    const src: SegmentSource = {
      terms,
      live,
      lengths,
      lists: (t, emit) => {
        const term = terms[t]!;
        const blocks: Uint32Array[] = [];
        segs.forEach((seg, i) => {
          if (seg.terms[at[i]!] !== term) return;
          blocks.push(readers[i]!(at[i]!));
          at[i]!++;
        });
        for (let f = 0; f < FIELD_COUNT; f++) for (const b of blocks) emit(f, alive(blockList(b, f) ?? new Uint32Array(0)));
      },
    };
    const ref = await writeSegmentAsync(this.dir.create(), src, pause);
    const source = this.dir.open(ref);
    if (!source) throw new Error(`text index segment ${ref.name} could not be opened after it was written`);
    const merged = { seg: Segment.open(ref, source), id: segmentIds++ };
    // The segments may have moved while the merge paused (another merge never runs meanwhile,
    // but the tail may have been written): find the run again.
    const from = this.segments.indexOf(run[0]!);
    this.segments.splice(from, run.length, merged);
    for (const slot of dead) this.drop(slot);
    this.cache.clear();
    for (const r of run) {
      r.seg.close();
      this.dir.retire(r.seg.ref);
    }
  }

  /** What a commit saves of this index; the tail must have been written ({@link flush}). */
  manifest(): TextManifest {
    if (this.tailSlots.length > 0 || this.terms.length > 0) throw new Error('the text index tail must be written before its manifest');
    if (this.segments.some((s) => s.seg.ref.name === '')) throw new Error('the text index must be merged before its manifest (it holds a snapshot of the earlier layout)');
    return {
      segments: this.segments.map((s) => s.seg.ref),
      deleted: [...this.deleted].sort((a, b) => a - b),
      slots: this.slots,
      added: this.added,
      lastAdded: this.lastAdded,
    };
  }

  /** The segment files the index reads. */
  segmentNames(): string[] {
    return this.segments.map((s) => s.seg.ref.name).filter((n) => n !== '');
  }

  /** Opens a committed index from its manifest; throws when a segment is missing or damaged. */
  static open(manifest: TextManifest, dir: SegmentDir, tailBudget?: number): CodeTextIndex {
    const idx = new CodeTextIndex(dir, tailBudget);
    try {
      for (const ref of manifest.segments) {
        const source = dir.open(ref);
        if (!source) throw new Error(`text index segment ${ref.name} is missing`);
        idx.segments.push({ seg: Segment.open(ref, source), id: segmentIds++ });
      }
    } catch (e) {
      idx.close();
      throw e;
    }
    for (const d of manifest.deleted) idx.deleted.add(d);
    idx.slots = manifest.slots;
    idx.added = manifest.added;
    idx.lastAdded = manifest.lastAdded;
    idx.loadLengths();
    return idx;
  }

  /**
   * Opens a snapshot of the earlier single-file layout (one "VTI4" run at `at` in `source`, the
   * search snapshot's file): it becomes the index's one segment, and the next merge that
   * rewrites it moves it into a segment file of its own.
   */
  static openSnapshot(source: ByteSource, at: number, dir: SegmentDir, tailBudget?: number): CodeTextIndex {
    const header = new Uint32Array(8);
    source.readInto(new Uint8Array(header.buffer), at);
    if (header[0] !== SEGMENT_MAGIC) throw new Error('not a text index snapshot');
    const idx = new CodeTextIndex(dir, tailBudget);
    idx.segments.push({ seg: Segment.open({ name: '', size: source.byteLength }, source, at), id: segmentIds++ });
    idx.slots = header[1]!;
    idx.added = header[5]!;
    idx.lastAdded = header[6]! - 1;
    idx.loadLengths();
    return idx;
  }

  /** The lengths of every segment's documents, and the totals over the live ones. */
  private loadLengths(): void {
    for (const { seg } of this.segments) {
      for (let i = 0; i < seg.live.length; i++) {
        const slot = seg.live[i]!;
        for (let f = 0; f < FIELD_COUNT; f++) {
          const n = seg.lengths[f]![i]!;
          this.fieldLengths[f]![slot] = n;
          if (!this.deleted.has(slot)) this.totalLength[f]! += n;
        }
      }
    }
  }

  /** A term's lists in field `f`: one per segment that holds it, then the tail's. */
  private listsOf(term: string): Postings[][] {
    const out: Postings[][] = TEXT_FIELDS.map(() => []);
    for (const { seg, id } of this.segments) {
      const t = seg.termIndex(term);
      if (t < 0) continue;
      const key = `${id}:${t}`;
      let block = this.cache.get(key);
      if (!block) {
        block = seg.block(t);
        this.cache.set(key, block);
      }
      for (let f = 0; f < FIELD_COUNT; f++) {
        const list = blockList(block, f);
        if (list) out[f]!.push(list);
      }
    }
    const id = this.termIds.get(term);
    if (id !== undefined) {
      for (let f = 0; f < FIELD_COUNT; f++) {
        const list = this.postings[f]![id];
        if (list) out[f]!.push(list);
      }
    }
    return out;
  }

  isLive(slot: number): boolean {
    return slot < this.slots && !this.deleted.has(slot) && this.fieldLengths.some((l) => l[slot] !== undefined);
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
      const fieldLists = this.listsOf(term);
      if (fieldLists.every((l) => l.length === 0)) continue;
      const termStamp = ++this.stampCounter;
      for (let f = 0; f < FIELD_COUNT; f++) {
        const boost = opts.boost?.[TEXT_FIELDS[f]!] ?? 1;
        if (boost <= 0) continue;
        const lists = fieldLists[f]!;
        if (lists.length === 0) continue;
        let df = 0;
        for (const list of lists) df += this.liveDf(list);
        if (df === 0 || df > maxDf) continue;
        const idf = Math.log(1 + (live - df + 0.5) / (df + 0.5));
        // Evaluated as (boost * idf * tf * (K1 + 1)) / (tf + norm), in the same order as ever,
        // so scores are bit for bit what they were.
        const weight = boost * idf * (opts.weights?.get(term) ?? 1);
        const norm = this.normsOf(f, live);
        for (const list of lists) {
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
        for (const lists of this.listsOf(term)) {
          for (const list of lists) {
            for (let i = 0; i < list.length; i += 2) {
              const slot = list[i]!;
              if (this.deleted.size > 0 && this.deleted.has(slot)) continue;
              masks.set(slot, (masks.get(slot) ?? 0) | bit);
            }
          }
        }
      }
    });
    return masks;
  }

  /** Document frequency of a term in a field: live documents only. */
  docFrequency(term: string, field: TextField): number {
    let n = 0;
    for (const list of this.listsOf(term)[TEXT_FIELDS.indexOf(field)]!) n += this.liveDf(list);
    return n;
  }

  /** Whether any live or dead document holds `term` (a cheap vocabulary check). */
  hasTerm(term: string): boolean {
    return this.termIds.has(term) || this.segments.some(({ seg }) => seg.termIndex(term) >= 0);
  }

  /** Releases the segments' files, for an index that is done with. */
  close(): void {
    for (const { seg } of this.segments) seg.close();
    this.cache.clear();
  }

  /** The live documents of a posting list: deleted slots do not count toward a term's rarity. */
  private liveDf(list: Postings): number {
    if (this.deleted.size === 0) return list.length / 2;
    let n = 0;
    for (let i = 0; i < list.length; i += 2) if (!this.deleted.has(list[i]!)) n++;
    return n;
  }
}

/** Term ids in the order of their terms (UTF-16 code units, as `<` compares them). */
function sortedOrder(terms: readonly string[]): number[] {
  return terms.map((_, t) => t).sort((a, b) => (terms[a]! < terms[b]! ? -1 : terms[a]! > terms[b]! ? 1 : 0));
}
