/**
 * Where a CLI command reads and writes: the terminal of the process that runs it, or, for a
 * command the workspace daemon runs for a client, that client's terminal at the other end of a
 * socket (the daemon's messages, `src/protocol/daemon.ts`, carry exactly this). Commands never
 * touch `process.stdout`, `process.stderr`, `process.stdin` or `process.cwd()` themselves, so
 * that one command behaves the same in either place.
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
