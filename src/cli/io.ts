/**
 * Where a CLI command reads and writes: the terminal of this process, or, for a command the
 * workspace daemon runs for a client, that client's terminal at the other end of a socket.
 * Commands never touch `process.stdout`, `process.stderr`, `process.stdin` or `process.cwd()`
 * themselves, so that one command behaves the same in either place.
 */

/** One output stream: stdout (results) or stderr (logs and progress). */
export interface CliOutput {
  write(text: string): void;
  /** A terminal: progress bars are drawn in place; otherwise plain lines. */
  readonly isTTY: boolean;
}

export interface CliIo {
  readonly stdout: CliOutput;
  readonly stderr: CliOutput;
  /** The directory relative paths resolve against (the client's, not the daemon's). */
  readonly cwd: string;
  /** TERM=dumb turns off redrawn progress. */
  readonly term: string | undefined;
  /** All of stdin as text; undefined when stdin is a terminal (nothing was piped in). */
  readStdin(): Promise<string | undefined>;
  /** Aborted when the user pressed Ctrl-C (the client went away, for the daemon). */
  readonly signal: AbortSignal;
}

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

/** `text` on stdout, with a final newline. */
export function writeLine(o: CliOutput, text: string): void {
  o.write(text.endsWith('\n') ? text : `${text}\n`);
}
