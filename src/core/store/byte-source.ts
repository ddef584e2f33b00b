/**
 * Bytes read by range: a large blob that a reader needs only parts of (the search snapshot's
 * posting lists, of which a query reads a few) is read where it lies instead of whole. A
 * source is a file held open (a sidecar: it stays readable after a writer prunes it, until it
 * is closed) or bytes already in memory (a blob from the `blobs` table, one not yet written).
 */
import * as fs from 'node:fs';

export interface ByteSource {
  readonly byteLength: number;
  /** Fills `target` with the bytes at `position`; throws when the source has fewer. */
  readInto(target: Uint8Array, position: number): void;
  /** Releases the file, if any. Reading after this throws. */
  close(): void;
}

export function memorySource(bytes: Uint8Array): ByteSource {
  return {
    byteLength: bytes.byteLength,
    readInto(target, position) {
      if (position < 0 || position + target.byteLength > bytes.byteLength) throw new RangeError(`read of ${target.byteLength} bytes at ${position} is past the end (${bytes.byteLength})`);
      target.set(bytes.subarray(position, position + target.byteLength));
    },
    close() {},
  };
}

/** The file at `file`, held open; undefined when it is missing or not `expectedSize` bytes. */
export function fileSource(file: string, expectedSize: number): ByteSource | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  let open = true;
  try {
    if (fs.fstatSync(fd).size !== expectedSize) {
      fs.closeSync(fd);
      return undefined;
    }
  } catch {
    fs.closeSync(fd);
    return undefined;
  }
  const source: ByteSource = {
    byteLength: expectedSize,
    readInto(target, position) {
      if (!open) throw new Error(`${file} is closed`);
      if (position < 0 || position + target.byteLength > expectedSize) throw new RangeError(`read of ${target.byteLength} bytes at ${position} is past the end of ${file}`);
      let done = 0;
      while (done < target.byteLength) {
        const n = fs.readSync(fd, target, done, target.byteLength - done, position + done);
        if (n === 0) throw new Error(`${file} ended after ${position + done} bytes; ${expectedSize} were expected`);
        done += n;
      }
    },
    close() {
      if (!open) return;
      open = false;
      closing.unregister(source);
      try {
        fs.closeSync(fd);
      } catch {
        // Already closed by the system (the process is exiting): nothing to release.
      }
    },
  };
  // A source dropped without close (an index replaced while a query still held it) releases
  // its file when it is collected.
  closing.register(source, fd, source);
  return source;
}

const closing = new FinalizationRegistry<number>((fd) => {
  try {
    fs.closeSync(fd);
  } catch {
    // Closed already.
  }
});

/** Reads `length` bytes at `position` into a new array. */
export function readRange(source: ByteSource, position: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  source.readInto(out, position);
  return out;
}

/** Bytes per block a {@link BlockReader} reads and caches. */
const BLOCK_BYTES = 4096;

/**
 * Random reads of small pieces of a large source (a table read in place: a binary search
 * touches a few words here and there), through a cache of aligned 4 KB blocks, the least
 * recently used dropped past `maxBlocks`.
 */
export class BlockReader {
  private readonly blocks = new Map<number, Uint8Array>();

  constructor(
    readonly source: ByteSource,
    private readonly maxBlocks = 4096,
  ) {}

  get byteLength(): number {
    return this.source.byteLength;
  }

  /** The block read last: runs of reads within one block skip the cache's bookkeeping. */
  private lastN = -1;
  private last: Uint8Array | undefined;

  private block(n: number): Uint8Array {
    if (n === this.lastN && this.last) return this.last;
    let b = this.blocks.get(n);
    if (b) {
      this.blocks.delete(n);
      this.blocks.set(n, b);
      this.lastN = n;
      this.last = b;
      return b;
    }
    const at = n * BLOCK_BYTES;
    b = readRange(this.source, at, Math.min(BLOCK_BYTES, this.source.byteLength - at));
    this.blocks.set(n, b);
    if (this.blocks.size > this.maxBlocks) this.blocks.delete(this.blocks.keys().next().value!);
    this.lastN = n;
    this.last = b;
    return b;
  }

  /** `count` little-endian u32 words from byte `at` (4-aligned), as one array. */
  u32s(at: number, count: number): Uint32Array {
    const bytes = this.bytes(at, count * 4);
    // A view when the bytes are aligned (a copy of them, or a block's), else a copy.
    if (bytes.byteOffset % 4 === 0) return new Uint32Array(bytes.buffer, bytes.byteOffset, count);
    return new Uint32Array(bytes.slice().buffer, 0, count);
  }

  /** The little-endian u32 at byte `at` (4-aligned: it never straddles a block). */
  u32(at: number): number {
    this.check(at, 4);
    const b = this.block(Math.floor(at / BLOCK_BYTES));
    const o = at % BLOCK_BYTES;
    return (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
  }

  /** `length` bytes at `at`, copied out of the blocks they lie in. */
  bytes(at: number, length: number): Uint8Array {
    this.check(at, length);
    const first = Math.floor(at / BLOCK_BYTES);
    if (Math.floor((at + length - 1) / BLOCK_BYTES) === first || length === 0) {
      const o = at % BLOCK_BYTES;
      return this.block(first).subarray(o, o + length);
    }
    if (length > BLOCK_BYTES * 16) return readRange(this.source, at, length);
    const out = new Uint8Array(length);
    for (let done = 0; done < length; ) {
      const pos = at + done;
      const o = pos % BLOCK_BYTES;
      const piece = this.block(Math.floor(pos / BLOCK_BYTES)).subarray(o, o + Math.min(BLOCK_BYTES - o, length - done));
      out.set(piece, done);
      done += piece.length;
    }
    return out;
  }

  private check(at: number, length: number): void {
    if (at < 0 || length < 0 || at + length > this.source.byteLength) throw new RangeError(`read of ${length} bytes at ${at} is past the end (${this.source.byteLength})`);
  }

  close(): void {
    this.blocks.clear();
    this.last = undefined;
    this.source.close();
  }
}
