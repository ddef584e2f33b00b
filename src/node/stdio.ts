/**
 * This process's own terminal as a command's I/O, and direct writes to its stdout and stderr
 * (the thin front prints a forwarded command's output with them).
 */
import * as fs from 'node:fs';
import type { CliIo } from '../protocol/cli';

/** This process's own terminal. */
export function processIo(signal: AbortSignal = new AbortController().signal): CliIo {
  return {
    stdout: { write: (t) => void process.stdout.write(t), isTTY: Boolean(process.stdout.isTTY) },
    stderr: { write: (t) => void process.stderr.write(t), isTTY: Boolean(process.stderr.isTTY) },
    cwd: process.cwd(),
    term: process.env.TERM,
    readStdin: async () => {
      if (process.stdin.isTTY) return undefined;
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
      return Buffer.concat(chunks).toString('utf8');
    },
    signal,
  };
}

/** Descriptors whose output went to the stream after a direct write could not go through. */
const streamed = new Set<1 | 2>();

/**
 * Writes `text` to this process's stdout (1) or stderr (2) with a direct, synchronous write,
 * not through `process.stdout`: making that stream loads and sets up Node's stream machinery,
 * about 4 ms of a forwarded command's whole ~100. A descriptor that would block (a non-blocking
 * pipe) or fails otherwise goes to the stream from then on, so the order holds. `vlt … | head`:
 * the reader left (EPIPE), and the program exits 0 as a shell pipeline expects.
 */
export function writeDirect(fd: 1 | 2, text: string): void {
  if (!streamed.has(fd)) {
    const bytes = Buffer.from(text, 'utf8');
    let done = 0;
    try {
      while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done);
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EPIPE') process.exit(0);
      toStream(fd).write(bytes.subarray(done));
      return;
    }
  }
  toStream(fd).write(text);
}

function toStream(fd: 1 | 2): NodeJS.WriteStream {
  if (fd === 1 && !streamed.has(1)) {
    process.stdout.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(0);
      throw e;
    });
  }
  streamed.add(fd);
  return fd === 1 ? process.stdout : process.stderr;
}

/** Calls `then` once what {@link writeDirect} handed to a stream is flushed (at once when nothing was). */
export function afterDirectWrites(then: () => void): void {
  if (streamed.size === 0) return then();
  let left = streamed.size;
  for (const fd of streamed) (fd === 1 ? process.stdout : process.stderr).write('', () => --left === 0 && then());
}
