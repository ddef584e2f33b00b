/**
 * Embeddings: an {@link EmbeddingProvider} over any OpenAI-compatible `/embeddings`
 * endpoint, and an {@link EmbeddingService} that turns a set of content-addressed texts
 * into vectors with caching, batching, bounded concurrency and progress reporting.
 *
 * Retry policy. Retries live in the official `openai` client, not here. Its
 * `makeRequest`/`retryRequest` (node_modules/openai/client.js, v6) retries 408, 409, 429,
 * every 5xx, connection failures and per-attempt timeouts; it honours `retry-after-ms`
 * and `Retry-After` (seconds or HTTP date) when the server sends them, and otherwise
 * backs off exponentially from 0.5 s, doubling up to 8 s, with up to 25 % jitter. It never
 * retries 400, 401, 403, 404 or 422. Hand-rolling the same loop would only duplicate that
 * code, so the provider just sets `maxRetries` and `timeout` on the client. Two gaps of
 * the client are closed here: its back-off sleep ignores the abort signal, so
 * {@link OpenAIEmbeddingProvider.embed} races the request against the signal and returns
 * at once on abort; and its errors are technical, so they are translated into
 * {@link VltError}s with the code `EMBEDDING_FAILED` and a message a user can act on.
 */
import type OpenAI from 'openai';
import { cancelledError, raceAbort } from './abort';
import { errorMessage, VltError, toVltError } from './errors';
import { createOpenAIClient, openAIEndpoint, translateOpenAIError, type OpenAIEndpoint } from './openai-client';
import { silentLogger, type EmbeddingProvider, type Logger } from './ports';
import { estimateTokens } from './tokens';

/** An amount in the endpoint's currency, as a person reads it. */
export function formatMoney(amount: number): string {
  return amount >= 1 ? amount.toFixed(2) : amount.toPrecision(2);
}

/** Default per-attempt timeout of one embeddings request. */
export const DEFAULT_EMBEDDING_TIMEOUT_MS = 60_000;

/**
 * Default number of retries after the first attempt. With the client's back-off schedule
 * (0.5, 1, 2, 4, 8 s) this waits about 15 s in all before giving up on a struggling
 * endpoint, which rides out a short rate-limit window without stalling an index run for
 * minutes.
 */
export const DEFAULT_EMBEDDING_MAX_RETRIES = 5;

/**
 * Texts longer than this are cut before they are sent. 24,000 characters is about
 * 6,000 tokens, under the 8,192-token input limit of common embedding models, so one
 * oversized chunk cannot make a whole batch fail with a 400.
 */
export const DEFAULT_EMBEDDING_MAX_CHARS = 24_000;

export interface OpenAIEmbeddingProviderOptions {
  /** Base URL of the OpenAI-compatible API, including its `/v1` (or equivalent) prefix. */
  baseUrl: string;
  model: string;
  /** Requested vector size; sent only when set, because many models reject the field. */
  dimensions?: number | undefined;
  /**
   * The API key. When missing, a placeholder is sent so that keyless local servers
   * (Ollama, LM Studio, llama.cpp) work; the client is never allowed to fall back to
   * `OPENAI_API_KEY` by itself, because the key chain is resolved by the configuration.
   */
  apiKey?: string | undefined;
  /** Timeout of one attempt in milliseconds; retries get a fresh timeout each. */
  timeoutMs?: number | undefined;
  /** Retries after the first attempt, for 429, 5xx and timeouts. */
  maxRetries?: number | undefined;
  /** Receives the client's retry notices at debug level. */
  logger?: Logger | undefined;
}

export class OpenAIEmbeddingProvider implements EmbeddingProvider {
  readonly model: string;
  readonly dimensions: number | undefined;
  private readonly client: OpenAI;
  private readonly endpoint: OpenAIEndpoint;
  /**
   * Vector length of the first successful response. Every later response must agree,
   * because vectors of different lengths cannot share one index.
   */
  private seenLength: number | undefined;

  constructor(opts: OpenAIEmbeddingProviderOptions) {
    this.model = opts.model;
    this.dimensions = opts.dimensions;
    this.endpoint = openAIEndpoint(opts, { timeoutMs: DEFAULT_EMBEDDING_TIMEOUT_MS, maxRetries: DEFAULT_EMBEDDING_MAX_RETRIES });
    this.client = createOpenAIClient(this.endpoint);
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    if (texts.length === 0) return [];
    if (signal?.aborted) throw cancelled();
    let raw: unknown;
    try {
      const request = this.client.embeddings.create(
        {
          model: this.model,
          input: texts,
          encoding_format: 'float',
          ...(this.dimensions !== undefined ? { dimensions: this.dimensions } : {}),
        },
        { signal, timeout: this.endpoint.timeoutMs, maxRetries: this.endpoint.maxRetries },
      );
      raw = await raceAbort(request, signal, 'embedding');
    } catch (e) {
      throw this.translateError(e, signal);
    }
    return this.validate(raw, texts.length);
  }

  /** Checks the response shape; the client does not, and a bad vector would poison the index. */
  private validate(raw: unknown, expected: number): number[][] {
    const fail = (why: string): VltError =>
      new VltError('EMBEDDING_FAILED', `embedding endpoint ${this.endpoint.baseUrl} returned an invalid response: ${why}`, {
        model: this.model,
        baseUrl: this.endpoint.baseUrl,
      });
    if (typeof raw !== 'object' || raw === null) throw fail('expected a JSON object');
    const data = (raw as { data?: unknown }).data;
    if (!Array.isArray(data)) throw fail('missing "data" array');
    if (data.length !== expected) throw fail(`expected ${expected} embeddings, got ${data.length}`);

    const out = new Array<number[] | undefined>(expected);
    for (let i = 0; i < data.length; i++) {
      const item: unknown = data[i];
      if (typeof item !== 'object' || item === null) throw fail(`data[${i}] is not an object`);
      const { index, embedding } = item as { index?: unknown; embedding?: unknown };
      // OpenAI returns items in input order with an explicit index; a server that omits
      // the index is taken to keep the order.
      const at = index === undefined ? i : index;
      if (typeof at !== 'number' || !Number.isInteger(at) || at < 0 || at >= expected) {
        throw fail(`data[${i}].index is out of range`);
      }
      if (out[at] !== undefined) throw fail(`index ${at} appears twice`);
      if (!Array.isArray(embedding)) throw fail(`data[${i}].embedding is not an array of numbers`);
      if (embedding.length === 0) throw fail(`data[${i}].embedding is empty`);
      for (const v of embedding as unknown[]) {
        if (typeof v !== 'number' || !Number.isFinite(v)) throw fail(`data[${i}].embedding holds a non-finite value`);
      }
      out[at] = embedding as number[];
    }

    const vectors = out as number[][];
    const length = vectors[0]?.length ?? 0;
    if (vectors.some((v) => v.length !== length)) throw fail('vectors of different lengths in one response');
    if (this.dimensions !== undefined && length !== this.dimensions) {
      throw fail(
        `asked for ${this.dimensions} dimensions, got ${length} (the model may not support the "dimensions" option)`,
      );
    }
    if (this.seenLength !== undefined && length !== this.seenLength) {
      throw fail(`vector length changed from ${this.seenLength} to ${length} between requests`);
    }
    this.seenLength = length;
    return vectors;
  }

  private translateError(e: unknown, signal: AbortSignal | undefined): VltError {
    return translateOpenAIError(e, signal, this.endpoint, { code: 'EMBEDDING_FAILED', endpoint: 'embedding endpoint', call: 'embedding' });
  }
}

function cancelled(cause?: unknown): VltError {
  return cancelledError('embedding', cause);
}


/**
 * Storage of vectors by content hash, namespaced by a model key (see
 * {@link embeddingCacheKey}). Either method may be synchronous or asynchronous so that
 * an in-memory map and a database both fit.
 */
export interface EmbeddingCache {
  /** Returns the cached vectors among `hashes`; missing hashes are simply absent. */
  getMany(
    model: string,
    hashes: string[],
  ): Map<string, Float32Array> | Promise<Map<string, Float32Array>>;
  putMany(model: string, entries: Array<[string, Float32Array]>): void | Promise<void>;
}

/** An {@link EmbeddingCache} in a Map, for tests and for runs that persist nothing. */
export class MemoryEmbeddingCache implements EmbeddingCache {
  private readonly byModel = new Map<string, Map<string, Float32Array>>();

  getMany(model: string, hashes: string[]): Map<string, Float32Array> {
    const store = this.byModel.get(model);
    const out = new Map<string, Float32Array>();
    if (!store) return out;
    for (const h of hashes) {
      const v = store.get(h);
      if (v) out.set(h, v);
    }
    return out;
  }

  putMany(model: string, entries: Array<[string, Float32Array]>): void {
    let store = this.byModel.get(model);
    if (!store) {
      store = new Map();
      this.byModel.set(model, store);
    }
    for (const [h, v] of entries) store.set(h, v);
  }

  /** Number of vectors stored for `model`. */
  size(model: string): number {
    return this.byModel.get(model)?.size ?? 0;
  }
}

/**
 * The cache namespace of a provider: the model name, plus the requested dimensions when
 * set, because the same model shortened to another size yields incompatible vectors.
 */
export function embeddingCacheKey(provider: Pick<EmbeddingProvider, 'model' | 'dimensions'>): string {
  return provider.dimensions === undefined ? provider.model : `${provider.model}#${provider.dimensions}`;
}

export interface EmbeddingServiceOptions {
  /** Texts per request. */
  batchSize: number;
  /** Requests in flight at once. */
  concurrency: number;
  logger?: Logger | undefined;
  /**
   * Called after each finished batch with the number of texts embedded so far and the
   * number that needed embedding (cache hits are in neither), and once with `done = 0`
   * before the first request. Not called when everything was cached.
   */
  onProgress?: ((done: number, total: number) => void) | undefined;
  /** Texts are cut to this many characters before they are sent. */
  maxChars?: number | undefined;
  /**
   * The most tokens one call of embedAll may send (estimated as tokens.ts does), and the setting
   * that says so; over it, nothing is sent and EMBEDDING_BUDGET is thrown. `price`: what a
   * million tokens cost, for the message.
   */
  cap?: { tokens: number; setting: string; price?: number | undefined } | undefined;
}

export interface EmbedItem {
  /** Content hash of `text`; the cache key. */
  hash: string;
  text: string;
}

/** Counts of the most recent {@link EmbeddingService.embedAll} call, kept current while it runs. */
export interface EmbedStats {
  /** Distinct hashes requested. */
  requested: number;
  /** Hashes answered from the cache. */
  cacheHits: number;
  /** Hashes embedded by the provider (and cached) so far. */
  embedded: number;
  /** Batches that completed. */
  batches: number;
}

export class EmbeddingService {
  /** Counts of the latest run; also meaningful after a failed or cancelled run. */
  stats: EmbedStats = { requested: 0, cacheHits: 0, embedded: 0, batches: 0 };
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly maxChars: number;
  private readonly logger: Logger;
  private readonly onProgress: ((done: number, total: number) => void) | undefined;
  private readonly cap: EmbeddingServiceOptions['cap'];

  constructor(
    private readonly provider: EmbeddingProvider,
    private readonly cache: EmbeddingCache,
    opts: EmbeddingServiceOptions,
  ) {
    this.batchSize = Math.max(1, Math.floor(opts.batchSize));
    this.concurrency = Math.max(1, Math.floor(opts.concurrency));
    this.maxChars = Math.max(1, Math.floor(opts.maxChars ?? DEFAULT_EMBEDDING_MAX_CHARS));
    this.logger = opts.logger ?? silentLogger;
    this.onProgress = opts.onProgress;
    this.cap = opts.cap;
  }

  /** Throws EMBEDDING_BUDGET, before anything is sent, when these texts would pass the cap. */
  private checkCap(texts: readonly string[]): void {
    if (!this.cap) return;
    const tokens = texts.reduce((n, t) => n + estimateTokens(t.slice(0, this.maxChars)), 0);
    if (tokens <= this.cap.tokens) return;
    const price = this.cap.price;
    const cost = price === undefined ? '' : ` (about ${formatMoney((tokens / 1_000_000) * price)})`;
    throw new VltError(
      'EMBEDDING_BUDGET',
      `embedding ${texts.length} new chunks would send about ${tokens.toLocaleString('en-US')} tokens${cost}, over ${this.cap.setting} (${this.cap.tokens.toLocaleString('en-US')} tokens); nothing was sent. Raise the cap, or leave folders out with [index] exclude (vlt coderag init --dry-run suggests some)`,
    );
  }

  /**
   * Returns a vector for every distinct hash in `items`. Cached hashes are never sent
   * again; the rest go out in batches, at most `concurrency` at a time, and each batch is
   * written to the cache as soon as it returns, so an interrupted or failed run keeps
   * what it paid for. When a batch fails for good, no new batches start, the ones in
   * flight are allowed to finish (and are cached), and then the first error is thrown:
   * `EMBEDDING_FAILED` from the provider, `CANCELLED` on abort, or `INTERNAL` when the
   * cache cannot store a batch.
   */
  // eslint-disable-next-line max-lines-per-function -- one bounded-concurrency loop whose batches share the cache, the first error and the abort; split, that state would pass through every piece
  async embedAll(items: EmbedItem[], signal?: AbortSignal): Promise<Map<string, Float32Array>> {
    if (signal?.aborted) throw cancelled();
    const texts = new Map<string, string>();
    for (const { hash, text } of items) {
      if (!texts.has(hash)) texts.set(hash, text);
    }
    const key = embeddingCacheKey(this.provider);
    const hashes = [...texts.keys()];
    const result = new Map<string, Float32Array>();
    const stats: EmbedStats = { requested: hashes.length, cacheHits: 0, embedded: 0, batches: 0 };
    this.stats = stats;
    if (hashes.length === 0) return result;

    const cached = await this.cache.getMany(key, hashes);
    for (const h of hashes) {
      const v = cached.get(h);
      if (v) result.set(h, v);
    }
    stats.cacheHits = result.size;
    const misses = hashes.filter((h) => !result.has(h));
    this.logger.debug(`embeddings: ${hashes.length} distinct texts, ${result.size} cached, ${misses.length} to embed`);
    if (misses.length === 0) return result;
    this.checkCap(misses.map((h) => texts.get(h)!));

    const batches: string[][] = [];
    for (let i = 0; i < misses.length; i += this.batchSize) {
      batches.push(misses.slice(i, i + this.batchSize));
    }

    const total = misses.length;
    let done = 0;
    this.report(done, total);

    let next = 0;
    let failure: unknown;
    const runBatch = async (batch: string[]): Promise<void> => {
      const input = batch.map((h) => this.prepare(texts.get(h) ?? ''));
      let vectors: number[][];
      try {
        vectors = await this.provider.embed(input, signal);
      } catch (e) {
        throw toVltError(e, 'EMBEDDING_FAILED');
      }
      // The provider interface is open to other implementations, so the count is checked
      // here as well rather than trusted.
      if (vectors.length !== batch.length) {
        throw new VltError(
          'EMBEDDING_FAILED',
          `embedding provider returned ${vectors.length} vectors for ${batch.length} texts`,
          { model: this.provider.model },
        );
      }
      const entries: Array<[string, Float32Array]> = batch.map((h, i) => [h, Float32Array.from(vectors[i] ?? [])]);
      try {
        await this.cache.putMany(key, entries);
      } catch (e) {
        // A cache that cannot store is not the provider's fault; the code says so.
        throw toVltError(e, 'INTERNAL');
      }
      for (const [h, v] of entries) result.set(h, v);
      done += batch.length;
      stats.embedded = done;
      stats.batches++;
      this.report(done, total);
    };

    // A fixed pool of workers pulling from a shared cursor bounds concurrency without a
    // dependency; JavaScript's single thread makes `next++` race-free.
    const worker = async (): Promise<void> => {
      while (failure === undefined && next < batches.length) {
        if (signal?.aborted) {
          failure ??= cancelled();
          return;
        }
        const batch = batches[next++];
        if (!batch) return;
        try {
          await runBatch(batch);
        } catch (e) {
          failure ??= e;
        }
      }
    };
    const workers: Promise<void>[] = [];
    for (let i = 0; i < Math.min(this.concurrency, batches.length); i++) workers.push(worker());
    await Promise.all(workers);

    if (failure !== undefined) {
      const err = toVltError(failure, 'EMBEDDING_FAILED');
      const log = err.code === 'CANCELLED' ? this.logger.info : this.logger.warn;
      log.call(this.logger, `embeddings: stopped after ${done}/${total} texts: ${err.message}`);
      throw err;
    }
    return result;
  }

  /**
   * Cuts over-long texts, never inside a surrogate pair, and replaces empty texts with a
   * space because OpenAI rejects empty input with a 400 that would sink the whole batch.
   */
  private prepare(text: string): string {
    if (text.length === 0) return ' ';
    if (text.length <= this.maxChars) return text;
    let end = this.maxChars;
    const last = text.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end--;
    return text.slice(0, end);
  }

  private report(done: number, total: number): void {
    if (!this.onProgress) return;
    try {
      this.onProgress(done, total);
    } catch (e) {
      // A faulty progress sink must not abort an index run that is otherwise fine.
      this.logger.warn(`embeddings: progress callback threw: ${errorMessage(e)}`);
    }
  }
}
