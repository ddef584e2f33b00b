/**
 * An optional cross-encoder reranker behind an HTTP endpoint, for the head of the oracle's
 * ranking. The {@link Reranker} port is what the oracle uses; {@link HttpReranker} speaks
 * the `/rerank` shape that Cohere, Jina, Voyage, vLLM and compatible servers share:
 *
 *   POST <baseUrl>/rerank  {model, query, documents, top_n}  →  {results: [{index, relevance_score}]}
 *
 * Retries follow `llm/openai-chat.ts` (and so `embeddings.ts`) on purpose, so that every
 * client of a model endpoint behaves alike: 408, 409, 429, 5xx, connection failures and
 * per-attempt timeouts are retried, honouring `Retry-After`/`retry-after-ms` and otherwise
 * backing off exponentially (0.5 s doubling to 8 s, with jitter); other 4xx are never
 * retried. Unlike those clients this one uses the global `fetch` (no SDK covers the
 * shape), so the loop lives here. Every failure is a VltError `LLM_FAILED` with a message
 * naming the URL and the status, or `CANCELLED`.
 */
import { VltError, errorMessage } from '../errors';
import { silentLogger, type Logger } from '../ports';

/** One document's relevance: `index` into the documents given, higher `score` is better. */
export interface RerankScore {
  index: number;
  score: number;
}

/** Reorders documents by their relevance to a query. */
export interface Reranker {
  /** Shown in logs and `--explain` (the model). */
  readonly name: string;
  /**
   * Scores for (at most `topN` of) the documents, best first. Indices are into `documents`;
   * a document left out is one the reranker ranked below the `topN`.
   */
  rerank(query: string, documents: string[], opts?: { topN?: number; signal?: AbortSignal }): Promise<RerankScore[]>;
}

/** Per-attempt timeout: a cross-encoder over twenty short passages answers in well under a second; a cold model needs more. */
export const DEFAULT_RERANK_TIMEOUT_MS = 15_000;
/**
 * Retries after the first attempt. Fewer than for completions: the reranker only refines a
 * ranking the oracle already has, so waiting long for it is worse than doing without.
 */
export const DEFAULT_RERANK_MAX_RETRIES = 3;

/** Back-off before retry n (0-based): 0.5 s doubling, capped at 8 s, less up to 25 % jitter. */
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 8000;
/** A server's `Retry-After` is honoured up to this; a longer one is treated as absent. */
const MAX_RETRY_AFTER_MS = 60_000;
/** Characters of a server's error message quoted in ours. */
const MAX_SERVER_MESSAGE = 300;

export interface HttpRerankerOptions {
  /** Base URL including its version prefix (`https://api.cohere.com/v1`, `http://localhost:8000/v1`); `/rerank` is appended. */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer …` when given; keyless local servers need none. */
  apiKey?: string | undefined;
  timeoutMs?: number | undefined;
  maxRetries?: number | undefined;
  logger?: Logger | undefined;
  /** The fetch to use; the global one by default (tests pass their own). */
  fetch?: typeof fetch | undefined;
}

/** Why one attempt failed, and whether another may succeed. */
interface AttemptFailure {
  retry: boolean;
  /** Builds the final error, given how many attempts were made. */
  error: (attempts: string) => VltError;
  retryAfterMs?: number;
  reason: string;
}

/** {@link Reranker} over a `/rerank` HTTP endpoint. */
export class HttpReranker implements Reranker {
  readonly name: string;
  private readonly url: string;
  private readonly model: string;
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly logger: Logger;
  private readonly fetchFn: typeof fetch;

  constructor(opts: HttpRerankerOptions) {
    this.model = opts.model;
    this.name = opts.model;
    this.url = `${opts.baseUrl.trim().replace(/\/+$/, '')}/rerank`;
    this.apiKey = opts.apiKey ? opts.apiKey : undefined;
    this.timeoutMs = Math.max(1, Math.round(opts.timeoutMs ?? DEFAULT_RERANK_TIMEOUT_MS));
    this.maxRetries = Math.max(0, Math.floor(opts.maxRetries ?? DEFAULT_RERANK_MAX_RETRIES));
    this.logger = opts.logger ?? silentLogger;
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init));
  }

  async rerank(query: string, documents: string[], opts: { topN?: number; signal?: AbortSignal } = {}): Promise<RerankScore[]> {
    const { signal } = opts;
    if (signal?.aborted) throw cancelled(signal.reason);
    if (documents.length === 0) return [];
    const topN = Math.min(documents.length, Math.max(1, Math.floor(opts.topN ?? documents.length)));
    const body = JSON.stringify({ model: this.model, query, documents, top_n: topN, return_documents: false });
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt(body, signal);
      if (!('retry' in outcome)) return this.validate(outcome.json, documents.length, topN);
      const made = attempt + 1;
      if (!outcome.retry || attempt >= this.maxRetries) throw outcome.error(`${made} attempt${made === 1 ? '' : 's'}`);
      const delay = outcome.retryAfterMs ?? backoff(attempt);
      this.logger.debug(`rerank: ${this.url}: ${outcome.reason}; retrying in ${Math.round(delay)} ms`);
      await sleep(delay, signal);
    }
  }

  /** One request: the parsed JSON body, or why it failed. Throws only on cancellation. */
  private async attempt(body: string, signal: AbortSignal | undefined): Promise<{ json: unknown } | AttemptFailure> {
    const ctl = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctl.abort();
    }, this.timeoutMs);
    const onAbort = (): void => ctl.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const where = `rerank endpoint ${this.url}`;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    let status: number;
    let text: string;
    let retryAfterMs: number | undefined;
    try {
      const res = await this.fetchFn(this.url, { method: 'POST', headers, body, signal: ctl.signal });
      status = res.status;
      retryAfterMs = retryAfter(res.headers);
      // Under the same timeout: a server may send headers and then stall.
      text = await res.text();
    } catch (e) {
      if (signal?.aborted) throw cancelled(signal.reason);
      if (timedOut) {
        return { retry: true, reason: 'timeout', error: (n) => this.fail(`${where} did not answer within ${this.timeoutMs} ms (${n})`) };
      }
      const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : errorMessage(e);
      return { retry: true, reason: cause, error: (n) => this.fail(`could not connect to ${where} (${n}): ${cause}`, {}, e) };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }

    if (status >= 200 && status < 300) {
      try {
        return { json: JSON.parse(text) as unknown };
      } catch {
        return { retry: false, reason: 'invalid JSON', error: () => this.fail(`${where} returned a response that is not valid JSON`, { status }) };
      }
    }
    const said = this.serverMessage(text);
    const extra = { status };
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const failure = (make: (n: string) => string): AttemptFailure => ({
      retry: retryable,
      reason: `status ${status}`,
      error: (n) => this.fail(make(n), extra),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
    switch (status) {
      case 401:
        return failure(() => (this.apiKey ? `${where} rejected the API key (401)${said}` : `${where} requires an API key (401) but none is configured${said}`));
      case 403:
        return failure(() => `${where} refused access (403)${said}`);
      case 404:
        return failure(() => `${where} was not found (404): check that the base URL points at a server with a /rerank route and that model "${this.model}" exists${said}`);
      case 400:
      case 422:
        return failure(() => `${where} rejected the request for model "${this.model}" (${status})${said}`);
      case 429:
        return failure((n) => `${where} is still rate-limiting (429) after ${n}${said}`);
      default:
        if (status >= 500) return failure((n) => `${where} failed with ${status} after ${n}${said}`);
        if (retryable) return failure((n) => `${where} answered ${status} after ${n}${said}`);
        return failure(() => `${where} answered ${status}${said}`);
    }
  }

  /** Checks the response shape: a proxy or a local server may answer with anything. */
  private validate(raw: unknown, count: number, topN: number): RerankScore[] {
    const invalid = (why: string): VltError => this.fail(`rerank endpoint ${this.url} returned an invalid response: ${why}`);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid('expected a JSON object');
    // Cohere, Jina and vLLM answer `results`; Voyage answers `data`.
    const list = (raw as { results?: unknown }).results ?? (raw as { data?: unknown }).data;
    if (!Array.isArray(list)) throw invalid('missing "results" array');
    const seen = new Set<number>();
    const out: RerankScore[] = [];
    list.forEach((item: unknown, i) => {
      if (typeof item !== 'object' || item === null) throw invalid(`results[${i}] is not an object`);
      const { index, relevance_score: relevance, score: plain } = item as { index?: unknown; relevance_score?: unknown; score?: unknown };
      const score = relevance ?? plain;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count) {
        throw invalid(`results[${i}].index is ${JSON.stringify(index)}, but ${count} document${count === 1 ? ' was' : 's were'} sent`);
      }
      if (typeof score !== 'number' || !Number.isFinite(score)) throw invalid(`results[${i}].relevance_score is not a finite number`);
      if (seen.has(index)) throw invalid(`document ${index} is scored twice`);
      seen.add(index);
      out.push({ index, score });
    });
    // Servers sort already, but nothing requires them to.
    return out.sort((a, b) => b.score - a.score || a.index - b.index).slice(0, topN);
  }

  private fail(message: string, extra: Record<string, unknown> = {}, cause?: unknown): VltError {
    return new VltError('LLM_FAILED', message, { model: this.model, url: this.url, ...extra }, cause === undefined ? undefined : { cause });
  }

  /** The server's error message as a suffix, with the configured key masked out. */
  private serverMessage(text: string): string {
    let msg: string | undefined;
    try {
      const body = JSON.parse(text) as { error?: unknown; message?: unknown; detail?: unknown };
      const err = body.error;
      const candidate = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : (err ?? body.message ?? body.detail);
      if (typeof candidate === 'string') msg = candidate;
    } catch {
      msg = text.trim() || undefined;
    }
    if (!msg) return '';
    if (this.apiKey) msg = msg.split(this.apiKey).join('***');
    if (msg.length > MAX_SERVER_MESSAGE) msg = `${msg.slice(0, MAX_SERVER_MESSAGE)}…`;
    return `: ${msg}`;
  }
}

/** `retry-after-ms`, else `Retry-After` in seconds or as an HTTP date; undefined when absent or out of bounds. */
function retryAfter(headers: Headers): number | undefined {
  const ms = headers.get('retry-after-ms');
  let value: number | undefined;
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) value = Number(ms);
  else {
    const ra = headers.get('retry-after');
    if (ra !== null && ra.trim() !== '') {
      const seconds = Number(ra);
      value = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(ra) - Date.now();
    }
  }
  if (value === undefined || !Number.isFinite(value) || value < 0 || value > MAX_RETRY_AFTER_MS) return undefined;
  return value;
}

function backoff(attempt: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** attempt, BACKOFF_MAX_MS) * (1 - Math.random() * 0.25);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(cancelled(signal.reason));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(cancelled(signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function cancelled(cause?: unknown): VltError {
  return new VltError('CANCELLED', 'rerank call cancelled', undefined, cause === undefined ? undefined : { cause });
}
