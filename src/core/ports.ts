/**
 * Narrow interfaces through which the engine reaches the outside world. Each host
 * (CLI, MCP server, VS Code extension) supplies implementations; tests supply fakes.
 */

export interface Logger {
  debug(msg: string, ...args: unknown[]): void;
  info(msg: string, ...args: unknown[]): void;
  warn(msg: string, ...args: unknown[]): void;
  error(msg: string, ...args: unknown[]): void;
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

/** Progress of a long operation: `done` out of `total` units of `phase`. */
export interface ProgressEvent {
  phase: 'discover' | 'parse' | 'index' | 'embed' | 'persist' | 'eval';
  done: number;
  total: number;
  message?: string;
}

export type ProgressSink = (ev: ProgressEvent) => void;

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Directory entry kinds the discovery walker cares about. */
export type EntryKind = 'file' | 'dir' | 'symlink' | 'other';

export interface DirEntry {
  name: string;
  kind: EntryKind;
}

export interface FileStat {
  size: number;
  mtimeMs: number;
  kind: EntryKind;
}

/**
 * Read-only access to workspace files. Paths are absolute. Implementations throw
 * NodeJS-style errors (with `code` such as ENOENT or EACCES) which callers turn into
 * skip reasons.
 */
export interface WorkspaceFs {
  readDir(absPath: string): Promise<DirEntry[]>;
  stat(absPath: string): Promise<FileStat>;
  /** Follows symlinks. */
  realpath(absPath: string): Promise<string>;
  readFile(absPath: string): Promise<Uint8Array>;
  /**
   * Optional synchronous metadata calls, for hosts on a local disk. A stat the kernel answers
   * from its cache takes microseconds, while the asynchronous call also waits for a thread of
   * the I/O pool and a turn of the event loop: on two cores that wait is most of a tool call's
   * overhead. Callers that check a handful of files per call (search hits' freshness) use
   * these when present; they throw like their asynchronous twins.
   */
  statSync?(absPath: string): FileStat;
  realpathSync?(absPath: string): string;
  /**
   * Optional synchronous read, for hosts on a local disk. An index run reads thousands of
   * files: the asynchronous read is four calls through the I/O pool each (open, stat, read,
   * close), about 0.3 ms of the run's main thread per file, against tens of microseconds.
   */
  readFileSync?(absPath: string): Uint8Array;
  /**
   * Whether the absolute paths this host hands out are files of the local disk that another
   * thread of this process can read with Node's fs: an index run's parse workers then read the
   * files themselves, and the run's main thread neither waits for a cold disk nor copies the
   * bytes to them (on half the Linux kernel, 14 s of reads on a cold cache).
   */
  readonly localDisk?: boolean;
}

/** Turns texts into vectors. Implemented over an OpenAI-compatible endpoint. */
export interface EmbeddingProvider {
  readonly model: string;
  readonly dimensions: number | undefined;
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}
