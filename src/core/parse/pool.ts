/**
 * A pool of parse workers. Bundled builds ship `parse-worker.js` next to the main bundle and
 * parse on up to four worker threads; when no worker script exists (vitest running the
 * sources) the pool parses in the calling thread with the same parser.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { VltError, type ErrorCode, ERROR_CODES } from '../errors';
import type { LanguageId, ParsedFile } from '../types';
import { createCodeParser, type CodeParser, type CodeParserOptions } from './parser';
import { prepareFile, type FileSource, type PreparedFile, type PrepareRequest } from './prepare';
import type { ParseRequest, ParseResponse, ParseWorkerData } from './worker';

export type ParsePoolMode = 'workers' | 'in-thread';

export interface ParsePool {
  /** `workers` when parsing on worker threads, `in-thread` when in the calling thread. */
  readonly mode: ParsePoolMode;
  /** Number of worker threads (1 for the in-thread pool). */
  readonly size: number;
  parse(path: string, language: LanguageId, source: string): Promise<ParsedFile>;
  /**
   * Prepares a file for the index from its bytes, or its path on the local disk (see
   * prepare.ts): read, classified, hashed, parsed and tokenized off the calling thread.
   */
  prepare(req: PrepareRequest, source: FileSource): Promise<PreparedFile>;
  /** Stops the workers; requests still pending are rejected with code CANCELLED. */
  close(): Promise<void>;
}

export interface ParsePoolOptions {
  /** Worker threads; defaults to the available parallelism, at most 4. */
  workers?: number;
  /** Parse in the calling thread (a few files at a time: no workers to start or to keep). */
  inThread?: boolean;
  /** The worker entry; defaults to `parse-worker.js` next to this bundle, when it exists. */
  workerScript?: string;
  /** Where the parser finds grammars and queries (passed on to each worker). */
  parserOptions?: CodeParserOptions;
}

const MAX_WORKERS = 4;

function defaultWorkerScript(): string | undefined {
  if (typeof __dirname !== 'string') return undefined;
  const p = path.join(__dirname, 'parse-worker.js');
  return fs.existsSync(p) ? p : undefined;
}

function toCode(code: string | undefined): ErrorCode {
  return code !== undefined && code in ERROR_CODES ? (code as ErrorCode) : 'INTERNAL';
}

/** Parses in the calling thread; used where no worker script is available. */
class InThreadPool implements ParsePool {
  readonly mode = 'in-thread' as const;
  readonly size = 1;
  private parser: Promise<CodeParser> | undefined;
  private closed = false;

  constructor(private readonly parserOptions: CodeParserOptions | undefined) {}

  async parse(filePath: string, language: LanguageId, source: string): Promise<ParsedFile> {
    if (this.closed) throw new VltError('CANCELLED', 'the parse pool is closed');
    this.parser ??= createCodeParser(this.parserOptions);
    const parser = await this.parser;
    return parser.parse(filePath, language, source);
  }

  async prepare(req: PrepareRequest, source: FileSource): Promise<PreparedFile> {
    if (this.closed) throw new VltError('CANCELLED', 'the parse pool is closed');
    this.parser ??= createCodeParser(this.parserOptions);
    return prepareFile(await this.parser, req, source);
  }

  async close(): Promise<void> {
    this.closed = true;
    const parser = this.parser;
    this.parser = undefined;
    if (parser) (await parser.catch(() => undefined))?.dispose();
  }
}

interface Pending {
  req: ParseRequest;
  resolve: (r: ParsedFile | PreparedFile) => void;
  reject: (e: Error) => void;
}

interface Slot {
  /** The worker thread; undefined after a crash until a request needs it again. */
  worker: Worker | undefined;
  /** Requests sent to this worker, oldest first; the oldest is the one being parsed. */
  inflight: Map<number, Pending>;
}

class WorkerPool implements ParsePool {
  readonly mode = 'workers' as const;
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private nextSlot = 0;
  private closed = false;

  constructor(
    private readonly script: string,
    readonly size: number,
    private readonly parserOptions: CodeParserOptions | undefined,
  ) {
    for (let i = 0; i < size; i++) {
      const slot: Slot = { worker: undefined, inflight: new Map() };
      this.start(slot);
      this.slots.push(slot);
    }
  }

  private start(slot: Slot): Worker {
    const data: ParseWorkerData = { parserOptions: this.parserOptions };
    // A worker's stdout would otherwise be the process's stdout, which carries results or the
    // MCP protocol; anything a worker prints goes to stderr instead.
    const worker = new Worker(this.script, { workerData: data, stdout: true });
    worker.stdout.pipe(process.stderr, { end: false });
    // Idle workers must not keep the process alive; a slot holds a reference while busy.
    worker.unref();
    worker.on('message', (msg: ParseResponse) => this.onMessage(slot, msg));
    worker.on('error', (e: Error) => this.onCrash(slot, worker, e));
    worker.on('exit', (code: number) => {
      if (!this.closed) this.onCrash(slot, worker, new Error(`parse worker exited with code ${code}`));
    });
    slot.worker = worker;
    return worker;
  }

  private onMessage(slot: Slot, msg: ParseResponse): void {
    const p = slot.inflight.get(msg.id);
    if (!p) return;
    slot.inflight.delete(msg.id);
    if (slot.inflight.size === 0) slot.worker?.unref();
    if ('result' in msg) p.resolve(msg.result);
    else p.reject(new VltError(toCode(msg.code), msg.error, { path: p.req.path }));
  }

  /**
   * A crashed worker is replaced. Only the request it was parsing fails (a worker handles its
   * requests in order, so that is the oldest); the others go to a new worker. Without other
   * requests the replacement starts only when one arrives, so a worker that cannot start at
   * all costs one failed request each time instead of a restart loop.
   */
  private onCrash(slot: Slot, worker: Worker, e: Error): void {
    if (this.closed || slot.worker !== worker) return;
    const [culprit, ...rest] = [...slot.inflight.values()];
    slot.inflight.clear();
    slot.worker = undefined;
    worker.removeAllListeners();
    // The dead worker may still report errors; with no listener they would crash the process.
    worker.on('error', () => undefined);
    // Terminating an already dead worker is harmless; any error is irrelevant here.
    worker.terminate().catch(() => undefined);
    culprit?.reject(new VltError('INTERNAL', `parse worker crashed: ${e.message}`, { path: culprit.req.path }, { cause: e }));
    for (const p of rest) this.send(p);
  }

  private pick(): Slot {
    // Least busy first; ties go round-robin so that idle workers share the load.
    let best: Slot | undefined;
    const n = this.slots.length;
    for (let k = 0; k < n; k++) {
      const s = this.slots[(this.nextSlot + k) % n] as Slot;
      if (!best || s.inflight.size < best.inflight.size) best = s;
    }
    this.nextSlot = (this.nextSlot + 1) % n;
    return best as Slot;
  }

  private send(p: Pending): void {
    const slot = this.pick();
    const worker = slot.worker ?? this.start(slot);
    if (slot.inflight.size === 0) worker.ref();
    slot.inflight.set(p.req.id, p);
    worker.postMessage(p.req);
  }

  parse(filePath: string, language: LanguageId, source: string): Promise<ParsedFile> {
    if (this.closed) return Promise.reject(new VltError('CANCELLED', 'the parse pool is closed'));
    return new Promise<ParsedFile>((resolve, reject) => {
      this.send({ req: { op: 'parse', id: this.nextId++, path: filePath, language, source }, resolve: resolve as (r: ParsedFile | PreparedFile) => void, reject });
    });
  }

  prepare(req: PrepareRequest, source: FileSource): Promise<PreparedFile> {
    if (this.closed) return Promise.reject(new VltError('CANCELLED', 'the parse pool is closed'));
    // Bytes are copied to the worker, not handed over: a request that a crashed worker held is
    // sent again to another one.
    return new Promise<PreparedFile>((resolve, reject) => {
      this.send({ req: { op: 'prepare', id: this.nextId++, path: req.path, req, source }, resolve: resolve as (r: ParsedFile | PreparedFile) => void, reject });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const slots = this.slots.splice(0);
    for (const s of slots) {
      for (const p of s.inflight.values()) p.reject(new VltError('CANCELLED', 'the parse pool was closed', { path: p.req.path }));
      s.inflight.clear();
    }
    await Promise.all(slots.map((s) => s.worker?.terminate()));
  }
}

/**
 * Creates a parse pool: worker threads when a worker script exists (the bundled layout, or
 * `workerScript`), else an in-thread pool. Check `mode` to see which one you got.
 */
export function createParsePool(opts: ParsePoolOptions = {}): ParsePool {
  if (opts.inThread) return new InThreadPool(opts.parserOptions);
  const script = opts.workerScript ?? defaultWorkerScript();
  if (script && fs.existsSync(script)) {
    const n = Math.min(MAX_WORKERS, Math.max(1, Math.floor(opts.workers ?? os.availableParallelism())));
    return new WorkerPool(script, n, opts.parserOptions);
  }
  return new InThreadPool(opts.parserOptions);
}
