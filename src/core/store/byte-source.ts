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
