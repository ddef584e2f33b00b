/**
 * The text index's segments: immutable runs of posting lists on disk, each covering an
 * ascending range of document slots, written when the index's in-memory tail outgrows its
 * budget or a commit saves it, and merged in the background of commits so that their number
 * stays small. A segment is read by range: its head (vocabulary, the lengths of its documents,
 * where each term's block lies) when it is opened, a term's block when a query asks for it.
 *
 * Layout "VTI4" (little-endian u32 words), a head and a body. The head: magic, slots (one past
 * the last slot), termCount, liveCount, termBytesLength, liveCount again ("added"), last slot
 * + 1, headWords; the UTF-8 terms, sorted, joined by "\n" (padded to 4 bytes); the live slots
 * ascending; per field, the total length (two u32 halves) and the lengths of the live slots in
 * that order; then termCount + 1 word offsets into the body, where each term's block starts
 * (and the body ends). The body: per term, each field's list length, then the lists, each a run
 * of (slot, term frequency) pairs, slots ascending. The head's size depends only on the
 * vocabulary and the slots, so a merge writes the body first, streaming, and the head last.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileSource, memorySource, type ByteSource } from '../store/byte-source';
import { removeFilesWhere } from '../store/sidecar';

/** Fields of a chunk the text index holds, in their order in a block. */
export const TEXT_FIELDS = ['name', 'path', 'sig', 'body'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];
export const FIELD_COUNT = TEXT_FIELDS.length;

export const SEGMENT_MAGIC = 0x56544935;
const HEADER_WORDS = 8;

/** A segment file as a manifest names it. */
export interface SegmentRef {
  name: string;
  size: number;
}

/** Where a segment's bytes go while it is written (positional writes, then `finish`). */
export interface SegmentOut {
  write(bytes: Uint8Array, position: number): void;
  /** Makes the segment durable and returns its reference; `abort` instead throws it away. */
  finish(): SegmentRef;
  abort(): void;
}

/**
 * Where segments live: the index's folder for a writer, memory for a reader that rebuilt its
 * index from the stored chunks (a reader writes nothing) and for tests.
 */
export interface SegmentDir {
  create(): SegmentOut;
  /** The segment, held open; undefined when it is gone or not the size its reference says. */
  open(ref: SegmentRef): ByteSource | undefined;
  /**
   * A segment merged away: removed at once unless a committed index may name it (then the
   * writer's cleanup after a later commit removes it).
   */
  retire(ref: SegmentRef): void;
}

/** Segments kept in memory, by name. */
export class MemorySegmentDir implements SegmentDir {
  private readonly files = new Map<string, Uint8Array>();
  private next = 0;
  create(): SegmentOut {
    let buf = new Uint8Array(1 << 16);
    let end = 0;
    return {
      write: (bytes, position) => {
        if (position + bytes.byteLength > buf.byteLength) {
          const grown = new Uint8Array(Math.max(buf.byteLength * 2, position + bytes.byteLength));
          grown.set(buf.subarray(0, end));
          buf = grown;
        }
        buf.set(bytes, position);
        end = Math.max(end, position + bytes.byteLength);
      },
      finish: () => {
        const name = `textseg-${this.next++}-m.bin`;
        this.files.set(name, buf.slice(0, end));
        return { name, size: end };
      },
      abort: () => undefined,
    };
  }
  open(ref: SegmentRef): ByteSource | undefined {
    const bytes = this.files.get(ref.name);
    return bytes && bytes.byteLength === ref.size ? memorySource(bytes) : undefined;
  }
  retire(ref: SegmentRef): void {
    this.files.delete(ref.name);
  }
  /** The size of a segment held, or undefined. */
  sizeOf(name: string): number | undefined {
    return this.files.get(name)?.byteLength;
  }
}

/**
 * Segment files named `textseg-<n>-<random>.bin` in a folder. A reader's (not `writable`) are
 * opened from the folder, and the segments it writes itself (an index it rebuilt from the
 * stored chunks) stay in memory: a reader never writes the index's folder.
 */
export class FileSegmentDir implements SegmentDir {
  static readonly NAME = /^textseg-\d+-[0-9a-z]+\.bin$/;
  private counter = Date.now();
  /** Segments a committed index names (the last commit's and the one before): never removed by {@link retire}. */
  private committed: ReadonlySet<string> = new Set();
  /**
   * Segments written by this process and not retired, with when (a sequence number): an index
   * in memory may read them before any commit names them.
   */
  private readonly created = new Map<string, number>();
  private sequence = 0;
  private readonly memory = new MemorySegmentDir();
  constructor(
    readonly dir: string,
    private readonly writable: boolean,
  ) {}
  create(): SegmentOut {
    if (!this.writable) return this.memory.create();
    const name = `textseg-${this.counter++}-${Math.random().toString(36).slice(2, 8) || '0'}.bin`;
    const file = path.join(this.dir, name);
    const fd = fs.openSync(file, 'w', 0o644);
    this.created.set(name, this.sequence++);
    let size = 0;
    let closed = false;
    const close = () => {
      if (!closed) fs.closeSync(fd);
      closed = true;
    };
    return {
      write: (bytes, position) => {
        let done = 0;
        while (done < bytes.byteLength) done += fs.writeSync(fd, bytes, done, bytes.byteLength - done, position + done);
        size = Math.max(size, position + bytes.byteLength);
      },
      finish: () => {
        fs.fsyncSync(fd);
        close();
        return { name, size };
      },
      abort: () => {
        close();
        this.created.delete(name);
        fs.rmSync(file, { force: true });
      },
    };
  }
  open(ref: SegmentRef): ByteSource | undefined {
    if (!FileSegmentDir.NAME.test(ref.name)) return undefined;
    return this.memory.open(ref) ?? fileSource(path.join(this.dir, ref.name), ref.size);
  }
  retire(ref: SegmentRef): void {
    this.memory.retire(ref);
    if (!this.writable || !this.created.has(ref.name)) return;
    this.created.delete(ref.name);
    if (this.committed.has(ref.name)) return;
    try {
      fs.rmSync(path.join(this.dir, ref.name), { force: true });
    } catch {
      // The cleanup after the next commit.
    }
  }
  /** Where the sequence of written segments stands (see {@link committedNow}). */
  mark(): number {
    return this.sequence;
  }

  /**
   * After a commit that names `current`, with `previous` named by the commit before (a reader
   * of it may still be about to open them): removes every other segment file, except those this
   * process wrote after `mark` (taken when the commit's snapshot was made), which an index in
   * memory may be reading; those it wrote before and the commit does not name are no index's.
   */
  committedNow(current: readonly string[], previous: readonly string[], mark: number): void {
    this.committed = new Set([...current, ...previous]);
    if (!this.writable) return;
    for (const [name, seq] of this.created) if (seq < mark && !this.committed.has(name)) this.created.delete(name);
    removeFilesWhere(this.dir, (name) => FileSegmentDir.NAME.test(name) && !this.committed.has(name) && !this.created.has(name));
  }
}

/** An open segment: its head in memory, its blocks read by range. */
export class Segment {
  private constructor(
    readonly ref: SegmentRef,
    private readonly source: ByteSource,
    /** Sorted. */
    readonly terms: readonly string[],
    private readonly blocks: Uint32Array,
    private readonly bodyAt: number,
    /** The slots this segment holds documents of, ascending, with their lengths per field. */
    readonly live: Uint32Array,
    readonly lengths: readonly Uint32Array[],
  ) {}

  get firstSlot(): number {
    return this.live.length > 0 ? this.live[0]! : 0;
  }

  get lastSlot(): number {
    return this.live.length > 0 ? this.live[this.live.length - 1]! : -1;
  }

  /** Bytes of posting lists. */
  get bodyBytes(): number {
    return this.blocks[this.terms.length]! * 4;
  }

  /** Opens the segment that starts at `at` in `source` (the source stays open: see {@link close}). */
  static open(ref: SegmentRef, source: ByteSource, at = 0): Segment {
    if (source.byteLength - at < HEADER_WORDS * 4) throw new Error('text index segment is truncated');
    const header = new Uint32Array(HEADER_WORDS);
    source.readInto(new Uint8Array(header.buffer), at);
    if (header[0] !== SEGMENT_MAGIC) throw new Error('not a text index segment');
    const termCount = header[2]!;
    const liveCount = header[3]!;
    const termByteLength = header[4]!;
    const headWords = header[7]!;
    const termWords = Math.ceil(termByteLength / 4);
    const expected = HEADER_WORDS + termWords + liveCount + FIELD_COUNT * (2 + liveCount) + termCount + 1;
    if (headWords !== expected || at + headWords * 4 > source.byteLength) throw new Error('text index segment is truncated or damaged');
    const head = new Uint32Array(headWords);
    source.readInto(new Uint8Array(head.buffer), at);
    let o = HEADER_WORDS;
    const text = new TextDecoder().decode(new Uint8Array(head.buffer, o * 4, termByteLength));
    o += termWords;
    const terms = termCount === 0 ? [] : text.split('\n');
    if (terms.length !== termCount) throw new Error('text index segment has a damaged vocabulary');
    const live = head.slice(o, o + liveCount);
    o += liveCount;
    const lengths: Uint32Array[] = [];
    for (let f = 0; f < FIELD_COUNT; f++) {
      o += 2;
      lengths.push(head.slice(o, o + liveCount));
      o += liveCount;
    }
    const blocks = head.slice(o, o + termCount + 1);
    const bodyAt = at + headWords * 4;
    if (bodyAt + blocks[termCount]! * 4 > source.byteLength) throw new Error('text index segment is truncated');
    return new Segment(ref, source, terms, blocks, bodyAt, live, lengths);
  }

  /** The index of `term` in the vocabulary, or -1. */
  termIndex(term: string): number {
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
    return -1;
  }

  /** Term `t`'s block: per field the list's length, then the lists. */
  block(t: number): Uint32Array {
    const first = this.blocks[t]!;
    const words = new Uint32Array(this.blocks[t + 1]! - first);
    this.source.readInto(new Uint8Array(words.buffer), this.bodyAt + first * 4);
    return words;
  }

  /**
   * Reads blocks in vocabulary order through a read-ahead buffer of about `bufferBytes`: one
   * read per buffer instead of one per term (a merge reads every block of a segment in order;
   * one read per block made reading the kernel's segments most of a merge's time). The blocks
   * returned are views into the buffer, valid until the next call; `t` must not decrease.
   */
  sequentialBlocks(bufferBytes = 4 * 2 ** 20): (t: number) => Uint32Array {
    let buf = new Uint32Array(Math.max(1, bufferBytes >>> 2));
    /** The word range of the body the buffer holds. */
    let from = 0;
    let to = 0;
    return (t) => {
      const first = this.blocks[t]!;
      const end = this.blocks[t + 1]!;
      if (first < from) throw new Error('blocks must be read in vocabulary order');
      if (end > to) {
        if (end - first > buf.length) buf = new Uint32Array(end - first);
        const upto = Math.min(this.blocks[this.terms.length]!, first + buf.length);
        this.source.readInto(new Uint8Array(buf.buffer, 0, (upto - first) * 4), this.bodyAt + first * 4);
        from = first;
        to = upto;
      }
      return buf.subarray(first - from, end - from);
    };
  }

  close(): void {
    this.source.close();
  }
}

/** Field `f`'s list in a block. */
export function blockList(block: Uint32Array, f: number): Uint32Array | undefined {
  let o = FIELD_COUNT;
  for (let g = 0; g < f; g++) o += block[g]!;
  const n = block[f]!;
  return n === 0 ? undefined : block.subarray(o, o + n);
}

/** What a segment is written from: sorted terms with their lists, the live slots and their lengths. */
export interface SegmentSource {
  /** Sorted, as `<` compares strings. */
  terms: readonly string[];
  live: ArrayLike<number>;
  /** Per field, the length of each live slot, in the order of `live`. */
  lengths: ReadonlyArray<ArrayLike<number>>;
  /**
   * Writes term `t`'s lists (dead slots left out) through `emit`, one field at a time in
   * order; a field without postings emits an empty list.
   */
  lists(t: number, emit: (f: number, list: ArrayLike<number>) => void): void;
}

/** Writes a buffered run of u32 words at increasing positions. */
class WordWriter {
  private buf = new Uint32Array(1 << 18);
  private n = 0;
  constructor(
    private readonly out: SegmentOut,
    private position: number,
  ) {}
  /** Words written so far (flushed or not), from the start position. */
  written = 0;
  push(words: ArrayLike<number>): void {
    if (this.n + words.length > this.buf.length) this.flush();
    if (words.length > this.buf.length) {
      const big = Uint32Array.from(words);
      this.out.write(new Uint8Array(big.buffer), this.position);
      this.position += big.byteLength;
    } else {
      this.buf.set(words, this.n);
      this.n += words.length;
    }
    this.written += words.length;
  }
  word(w: number): void {
    if (this.n === this.buf.length) this.flush();
    this.buf[this.n++] = w;
    this.written++;
  }
  flush(): void {
    if (this.n === 0) return;
    this.out.write(new Uint8Array(this.buf.buffer, 0, this.n * 4), this.position);
    this.position += this.n * 4;
    this.n = 0;
  }
}

/**
 * Writes a segment through `out`, one step per million words of lists (a generator, so that a
 * long merge can let other work run between steps: see {@link writeSegmentAsync}); returns its
 * reference.
 */
export function* segmentWriter(out: SegmentOut, src: SegmentSource): Generator<void, SegmentRef, void> {
  try {
    const termBytes = new TextEncoder().encode(src.terms.join('\n'));
    const termWords = Math.ceil(termBytes.length / 4);
    const liveCount = src.live.length;
    const termCount = src.terms.length;
    const headWords = HEADER_WORDS + termWords + liveCount + FIELD_COUNT * (2 + liveCount) + termCount + 1;
    const blocks = new Uint32Array(termCount + 1);
    const body = new WordWriter(out, headWords * 4);
    const counts = new Uint32Array(FIELD_COUNT);
    const pending: Array<ArrayLike<number>> = [];
    let sinceStep = 0;
    for (let t = 0; t < termCount; t++) {
      blocks[t] = body.written;
      counts.fill(0);
      pending.length = 0;
      src.lists(t, (f, list) => {
        counts[f] = counts[f]! + list.length;
        pending.push(list);
      });
      body.push(counts);
      for (const list of pending) body.push(list);
      if (body.written - sinceStep > 1 << 20) {
        sinceStep = body.written;
        body.flush();
        yield;
      }
    }
    blocks[termCount] = body.written;
    body.flush();
    const head = new Uint32Array(headWords);
    let o = 0;
    const last = liveCount > 0 ? src.live[liveCount - 1]! : -1;
    head[o++] = SEGMENT_MAGIC;
    head[o++] = last + 1;
    head[o++] = termCount;
    head[o++] = liveCount;
    head[o++] = termBytes.length;
    head[o++] = liveCount;
    head[o++] = last + 1;
    head[o++] = headWords;
    new Uint8Array(head.buffer, o * 4, termBytes.length).set(termBytes);
    o += termWords;
    head.set(src.live, o);
    o += liveCount;
    for (let f = 0; f < FIELD_COUNT; f++) {
      const lengths = src.lengths[f]!;
      let total = 0;
      for (let i = 0; i < liveCount; i++) total += lengths[i]!;
      head[o++] = total % 0x100000000;
      head[o++] = Math.floor(total / 0x100000000);
      head.set(lengths, o);
      o += liveCount;
    }
    head.set(blocks, o);
    out.write(new Uint8Array(head.buffer), 0);
    return out.finish();
  } catch (e) {
    out.abort();
    throw e;
  }
}

/** Writes a segment at once. */
export function writeSegment(out: SegmentOut, src: SegmentSource): SegmentRef {
  const steps = segmentWriter(out, src);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Writes a segment, awaiting `pause` between steps. */
export async function writeSegmentAsync(out: SegmentOut, src: SegmentSource, pause: () => Promise<void>): Promise<SegmentRef> {
  const steps = segmentWriter(out, src);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await pause();
  }
}

/** The sorted union of sorted vocabularies. */
export function unionVocabulary(vocabularies: ReadonlyArray<readonly string[]>): string[] {
  const out: string[] = [];
  const at = vocabularies.map(() => 0);
  for (;;) {
    let min: string | undefined;
    for (let i = 0; i < vocabularies.length; i++) {
      const t = vocabularies[i]![at[i]!];
      if (t !== undefined && (min === undefined || t < min)) min = t;
    }
    if (min === undefined) return out;
    out.push(min);
    for (let i = 0; i < vocabularies.length; i++) if (vocabularies[i]![at[i]!] === min) at[i]!++;
  }
}
