/**
 * The one way the engine reaches an OpenAI-compatible endpoint (embeddings and the language
 * model): the official `openai` client set up so that it sends nothing the configuration did not
 * choose, and its failures translated into one {@link VltError} a user can act on.
 *
 * Retries live in the client (408, 409, 429, 5xx, connection failures and timeouts, honouring
 * `Retry-After`, exponential back-off with jitter); callers set `maxRetries` and `timeout` and
 * race each request against their abort signal, since the client's back-off ignores it.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { cancelledError } from './abort';
import { errorMessage, VltError, type ErrorCode } from './errors';
import { silentLogger, type Logger } from './ports';

/** Sent as the key to a keyless endpoint: the client refuses to start without one. */
const NO_API_KEY = 'no-api-key';

export interface OpenAIEndpoint {
  /** Base URL of the API, including its `/v1` (or equivalent) prefix. */
  baseUrl: string;
  /** The key, when one is configured; never read from the environment here. */
  apiKey: string | undefined;
  model: string;
  /** Per-attempt timeout. */
  timeoutMs: number;
  /** Retries after the first attempt. */
  maxRetries: number;
  logger?: Logger | undefined;
}

/** An endpoint from a caller's options, with its defaults for the timeout and the retries (clamped to sane values). */
export function openAIEndpoint(
  opts: { baseUrl: string; apiKey?: string | undefined; model: string; timeoutMs?: number | undefined; maxRetries?: number | undefined; logger?: Logger | undefined },
  defaults: { timeoutMs: number; maxRetries: number },
): OpenAIEndpoint {
  return {
    baseUrl: opts.baseUrl,
    apiKey: opts.apiKey ? opts.apiKey : undefined,
    model: opts.model,
    timeoutMs: Math.max(1, Math.round(opts.timeoutMs ?? defaults.timeoutMs)),
    maxRetries: Math.max(0, Math.floor(opts.maxRetries ?? defaults.maxRetries)),
    logger: opts.logger,
  };
}

export function createOpenAIClient(endpoint: OpenAIEndpoint): OpenAI {
  const { logger } = endpoint;
  return new OpenAI({
    baseURL: endpoint.baseUrl,
    apiKey: endpoint.apiKey ? endpoint.apiKey : NO_API_KEY,
    // The client would otherwise pick these up from the environment and send them to whatever
    // endpoint is configured, which may not be OpenAI at all.
    adminAPIKey: null,
    organization: null,
    project: null,
    maxRetries: endpoint.maxRetries,
    timeout: endpoint.timeoutMs,
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

/** What a failure is reported as: the error code, the endpoint's name in words, and the call's name when cancelled. */
export interface FailureKind {
  code: ErrorCode;
  /** "embedding endpoint", "language model endpoint". */
  endpoint: string;
  /** "embedding", "language model call": what a cancellation says was cancelled. */
  call: string;
}

/** Turns whatever the client threw into one VltError with an actionable message. */
export function translateOpenAIError(e: unknown, signal: AbortSignal | undefined, endpoint: OpenAIEndpoint, kind: FailureKind): VltError {
  if (e instanceof VltError) return e;
  if (e instanceof APIUserAbortError || signal?.aborted) return cancelledError(kind.call, e);
  const where = `${kind.endpoint} ${endpoint.baseUrl}`;
  const { model, maxRetries } = endpoint;
  const attempts = `${maxRetries + 1} attempt${maxRetries === 0 ? '' : 's'}`;
  // An auth failure's raw error may quote the key back, so it is not kept as the cause.
  const authFailure = e instanceof APIError && (e.status === 401 || e.status === 403);
  const make = (message: string, extra: Record<string, unknown> = {}): VltError =>
    new VltError(kind.code, message, { model, baseUrl: endpoint.baseUrl, ...extra }, authFailure ? undefined : { cause: e });
  // The timeout class extends the connection class, so it is tested first.
  if (e instanceof APIConnectionTimeoutError) return make(`${where} did not answer within ${endpoint.timeoutMs} ms (${attempts})`);
  if (e instanceof APIConnectionError) {
    const cause = e.cause instanceof Error ? `: ${e.cause.message}` : '';
    return make(`could not connect to ${where} (${attempts})${cause}`);
  }
  if (e instanceof APIError) {
    const status = e.status;
    const said = serverMessage(e, endpoint.apiKey);
    const extra = { status };
    switch (status) {
      case 401:
        return make(endpoint.apiKey ? `${where} rejected the API key (401)${said}` : `${where} requires an API key (401) but none is configured${said}`, extra);
      case 403:
        return make(`${where} refused access (403)${said}`, extra);
      case 404:
        return make(`${where} or model "${model}" was not found (404)${said}`, extra);
      case 400:
      case 422:
        return make(`${where} rejected the request for model "${model}" (${status})${said}`, extra);
      case 429:
        return make(`${where} is still rate-limiting (429) after ${attempts}${said}`, extra);
      default:
        if (status !== undefined && status >= 500) return make(`${where} failed with ${status} after ${attempts}${said}`, extra);
        return make(`${where} answered ${status ?? 'with an error'}${said}`, extra);
    }
  }
  if (e instanceof SyntaxError) return make(`${where} returned a response that is not valid JSON`);
  return make(`${where} failed: ${errorMessage(e)}`);
}

/**
 * The `error.message` an OpenAI-style error body carries, as a suffix. Some servers quote the
 * key they rejected, so the configured key is masked out of it.
 */
function serverMessage(e: APIError, apiKey: string | undefined): string {
  const body = e.error as { message?: unknown } | undefined;
  let msg = typeof body?.message === 'string' ? body.message : undefined;
  if (!msg) return '';
  if (apiKey) msg = msg.split(apiKey).join('***');
  return `: ${msg}`;
}
