/**
 * Worker-thread entry of the parse pool, bundled to `dist/parse-worker.js`. It initialises
 * one parser and answers `parse` (a file's text) and `prepare` (a file's bytes or path, see prepare.ts)
 * messages with `{id, result}` or `{id, error, code}`, one at a time in arrival order (parsing is
 * synchronous).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isVltError, errorMessage } from '../errors';
import type { LanguageId, ParsedFile } from '../types';
import { createCodeParser, type CodeParser, type CodeParserOptions } from './parser';
import { prepareFile, type FileSource, type PreparedFile, type PrepareRequest } from './prepare';

export type ParseRequest =
  | { op: 'parse'; id: number; path: string; language: LanguageId; source: string }
  | { op: 'prepare'; id: number; path: string; req: PrepareRequest; source: FileSource };

export type ParseResponse = { id: number; result: ParsedFile | PreparedFile } | { id: number; error: string; code?: string };

/** What the pool passes as `workerData`. */
export interface ParseWorkerData {
  parserOptions?: CodeParserOptions;
}

function describe(e: unknown): { error: string; code?: string } {
  if (isVltError(e)) return { error: e.message, code: e.code };
  return { error: errorMessage(e) };
}

if (parentPort) {
  const port = parentPort;
  const data = (workerData ?? {}) as ParseWorkerData;
  const ready: Promise<CodeParser> = createCodeParser(data.parserOptions ?? {});
  // An initialisation failure is reported per request rather than crashing the worker, so
  // that the pool does not restart it in a loop.
  ready.catch(() => undefined);

  const handle = async (msg: ParseRequest): Promise<void> => {
    let reply: ParseResponse;
    try {
      const parser = await ready;
      reply = { id: msg.id, result: msg.op === 'prepare' ? prepareFile(parser, msg.req, msg.source) : parser.parse(msg.path, msg.language, msg.source) };
    } catch (e) {
      reply = { id: msg.id, ...describe(e) };
    }
    port.postMessage(reply);
  };

  port.on('message', (msg: ParseRequest) => {
    void handle(msg);
  });
}
