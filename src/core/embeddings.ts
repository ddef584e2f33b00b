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
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from 'openai';
import { cancelledError, raceAbort } from './abort';
import { VltError, toVltError, errorMessage } from './errors';
import { silentLogger, type EmbeddingProvider, type Logger } from './ports';

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

/** Placeholder bearer token for endpoints that need none; see {@link OpenAIEmbeddingProviderOptions.apiKey}. */
const NO_API_KEY = 'no-api-key';

export class OpenAIEmbeddingProvider implements EmbeddingProvider {
  readonly model: string;
  readonly dimensions: number | undefined;
  private readonly client: OpenAI;
  private readonly baseUrl: string;
  private readonly hasApiKey: boolean;
  /** Kept only to mask it out of server error messages. */
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  /**
   * Vector length of the first successful response. Every later response must agree,
   * because vectors of different lengths cannot share one index.
   */
  private seenLength: number | undefined;

  constructor(opts: OpenAIEmbeddingProviderOptions) {
    this.model = opts.model;
    this.dimensions = opts.dimensions;
    this.baseUrl = opts.baseUrl;
    this.hasApiKey = opts.apiKey !== undefined && opts.apiKey !== '';
    this.apiKey = this.hasApiKey ? opts.apiKey : undefined;
    this.timeoutMs = Math.max(1, Math.round(opts.timeoutMs ?? DEFAULT_EMBEDDING_TIMEOUT_MS));
    this.maxRetries = Math.max(0, Math.floor(opts.maxRetries ?? DEFAULT_EMBEDDING_MAX_RETRIES));
    const logger = opts.logger;
    this.client = new OpenAI({
      baseURL: opts.baseUrl,
      apiKey: this.hasApiKey ? opts.apiKey : NO_API_KEY,
      // The client would otherwise pick these up from the environment and send them to
      // whatever endpoint is configured, which may not be OpenAI at all.
      adminAPIKey: null,
      organization: null,
      project: null,
      maxRetries: this.maxRetries,
      timeout: this.timeoutMs,
      // The client reports each retry at info level; that is diagnostic detail for us.
      logLevel: logger ? 'info' : 'off',
      logger: logger
        ? {
            debug: (msg, ...args) => logger.debug(`openai: ${msg}`, ...args),
            info: (msg, ...args) => logger.debug(`openai: ${msg}`, ...args),
            warn: (msg, ...args) => logger.warn(`openai: ${msg}`, ...args),
            error: (msg, ...args) => logger.error(`openai: ${msg}`, ...args),
          }
        : silentLogger,
    });
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
        { signal, timeout: this.timeoutMs, maxRetries: this.maxRetries },
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
      new VltError('EMBEDDING_FAILED', `embedding endpoint ${this.baseUrl} returned an invalid response: ${why}`, {
        model: this.model,
        baseUrl: this.baseUrl,
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

  /** Turns whatever the client threw into one VltError with an actionable message. */
  private translateError(e: unknown, signal: AbortSignal | undefined): VltError {
    if (e instanceof VltError) return e;
    if (e instanceof APIUserAbortError || signal?.aborted) return cancelled(e);
    const details = { model: this.model, baseUrl: this.baseUrl };
    const where = `embedding endpoint ${this.baseUrl}`;
    const attempts = `${this.maxRetries + 1} attempt${this.maxRetries === 0 ? '' : 's'}`;
    // An auth failure's raw error may quote the key back, so it is not kept as the cause.
    const authFailure = e instanceof APIError && (e.status === 401 || e.status === 403);
    const make = (message: string, extra: Record<string, unknown> = {}): VltError =>
      new VltError('EMBEDDING_FAILED', message, { ...details, ...extra }, authFailure ? undefined : { cause: e });

    // The timeout class extends the connection class, so it is tested first.
    if (e instanceof APIConnectionTimeoutError) {
      return make(`${where} did not answer within ${this.timeoutMs} ms (${attempts})`);
    }
    if (e instanceof APIConnectionError) {
      const cause = e.cause instanceof Error ? `: ${e.cause.message}` : '';
      return make(`could not connect to ${where} (${attempts})${cause}`);
    }
    if (e instanceof APIError) {
      const status = e.status;
      const said = this.serverMessage(e);
      const extra = { status };
      switch (status) {
        case 401:
          return make(
            this.hasApiKey
              ? `${where} rejected the API key (401)${said}`
              : `${where} requires an API key (401) but none is configured${said}`,
            extra,
          );
        case 403:
          return make(`${where} refused access (403)${said}`, extra);
        case 404:
          return make(`${where} or model "${this.model}" was not found (404)${said}`, extra);
        case 400:
        case 422:
          return make(`${where} rejected the request for model "${this.model}" (${status})${said}`, extra);
        case 429:
          return make(`${where} is still rate-limiting (429) after ${attempts}${said}`, extra);
        default:
          if (status !== undefined && status >= 500) {
            return make(`${where} failed with ${status} after ${attempts}${said}`, extra);
          }
          return make(`${where} answered ${status ?? 'with an error'}${said}`, extra);
      }
    }
    if (e instanceof SyntaxError) {
      return make(`${where} returned a response that is not valid JSON`);
    }
    return make(`${where} failed: ${errorMessage(e)}`);
  }

  /**
   * The `error.message` an OpenAI-style error body carries, formatted as a suffix. Some
   * servers quote the key they rejected, so the configured key is masked out of it.
   */
  private serverMessage(e: APIError): string {
    const body = e.error as { message?: unknown } | undefined;
    let msg = typeof body?.message === 'string' ? body.message : undefined;
    if (!msg) return '';
    if (this.apiKey) msg = msg.split(this.apiKey).join('***');
    return `: ${msg}`;
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
