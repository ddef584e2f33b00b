/**
 * A scripted, in-process fake of the OpenAI HTTP API for tests. It listens on 127.0.0.1
 * on a random port, so the real `openai` client (and anything built on it) can be
 * exercised end to end without network access.
 *
 * Endpoints:
 * - `POST /v1/embeddings`: deterministic unit vectors derived from a hash of each input
 *   (see {@link fakeEmbedding}); honours `dimensions` and `encoding_format: "base64"`.
 * - `POST /v1/chat/completions`: replies taken from `script.chat` in order, or an echo of
 *   the last user message when the script is empty; streams SSE chunks when
 *   `stream: true`, including tool calls in OpenAI's incremental shape.
 * - `GET /v1/models`: the configured model ids.
 * - `POST /v1/rerank`: the common cross-encoder shape (Cohere, Jina, vLLM): `{model, query,
 *   documents, top_n}` → `{results: [{index, relevance_score}]}`, scored deterministically
 *   by term overlap (see {@link fakeRerankScore}), best first.
 *
 * Faults are queued per endpoint with {@link FakeOpenAI.fail} or
 * {@link FakeOpenAI.respond} and consumed one per request, before the normal reply.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeEndpoint = 'embeddings' | 'chat' | 'models' | 'rerank';

/**
 * - `429`: rate limited, with `Retry-After: 0` unless another value is given;
 * - `500`: internal error (no Retry-After unless given, so the client's own back-off runs);
 * - `400`, `401`: client errors that must not be retried;
 * - `timeout`: the request is held, unanswered, until the client gives up;
 * - `garbage`: status 200 with a body that is not valid JSON;
 * - `bad-shape`: status 200 with valid JSON of the wrong shape (for embeddings: one
 *   vector fewer than inputs; for rerank: a result whose index is past the last document).
 */
export type FaultKind = '429' | '500' | '400' | '401' | 'timeout' | 'garbage' | 'bad-shape';

export interface RawResponse {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

type Fault = { kind: FaultKind; retryAfter?: string | undefined } | { kind: 'raw'; response: RawResponse };

export interface FakeCall {
  method: string;
  /** Request path without the query string, e.g. `/v1/embeddings`. */
  path: string;
  endpoint: FakeEndpoint | 'other';
  /** Parsed JSON body, the raw text when it is not JSON, or undefined when empty. */
  body: unknown;
  headers: IncomingHttpHeaders;
}

/** A tool call in OpenAI's shape; `id` and `type` are filled in when omitted. */
export interface FakeToolCall {
  id?: string;
  type?: 'function';
  function: { name: string; arguments: string | Record<string, unknown> };
}

export type FakeChatReply =
  | { content: string; finish_reason?: string }
  | { tool_calls: FakeToolCall[]; content?: string | null };

export interface FakeChatRequest {
  model?: string;
  messages?: Array<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: unknown[];
  [key: string]: unknown;
}

export type FakeChatScriptEntry = FakeChatReply | ((req: FakeChatRequest) => FakeChatReply);

export interface FakeOpenAIOptions {
  /** Vector size when the request names no `dimensions`; default 32. */
  dimensions?: number;
  /** When set, requests must carry `Authorization: Bearer <requireKey>` or get a 401. */
  requireKey?: string;
  /** Delay before every reply, in milliseconds; default 0. */
  delayMs?: number;
  /** Ids listed by `GET /v1/models`. */
  models?: string[];
}

export interface FakeOpenAI {
  /** Base URL for the client, ending in `/v1`. */
  readonly baseURL: string;
  readonly port: number;
  /** Every request received, in arrival order. */
  readonly calls: FakeCall[];
  /** Requests received per endpoint, faulted ones included. */
  readonly counts: Record<FakeEndpoint, number>;
  /** Requests currently being handled per endpoint. */
  readonly inFlight: Record<FakeEndpoint, number>;
  /** Highest value {@link inFlight} has reached per endpoint. */
  readonly maxInFlight: Record<FakeEndpoint, number>;
  /** Delay before every reply, in milliseconds; may be changed between requests. */
  delayMs: number;
  /** Delay between the chunks of a streamed reply, in milliseconds (a slow model); default 0. */
  chunkDelayMs: number;
  /** When (Date.now()) the last streamed reply's first text chunk was written; for latency benchmarks. */
  readonly firstChunkAt: number | undefined;
  /** Required bearer token, or undefined for none; may be changed between requests. */
  requireKey: string | undefined;
  /** Scripted chat replies, consumed in order; an empty script echoes the last user message. */
  readonly script: { chat: FakeChatScriptEntry[] };
  /** Makes the next `times` requests to `endpoint` fail with `kind`. */
  fail(endpoint: FakeEndpoint, kind: FaultKind, times?: number, opts?: { retryAfter?: string }): void;
  /** Makes the next `times` requests to `endpoint` get exactly `response`. */
  respond(endpoint: FakeEndpoint, response: RawResponse, times?: number): void;
  /** Clears calls, counters, faults and the chat script; keeps the options. */
  reset(): void;
  close(): Promise<void>;
}

const DEFAULT_DIMENSIONS = 32;

/**
 * The vector the fake returns for `text`: SHA-256 in counter mode mapped to [-1, 1] and
 * normalised to unit length, so equal texts always give equal vectors and tests can
 * compute the expected value.
 */
export function fakeEmbedding(text: string, dimensions = DEFAULT_DIMENSIONS): number[] {
  const out: number[] = [];
  for (let block = 0; out.length < dimensions; block++) {
    const digest = createHash('sha256').update(`${block}\u0000${text}`).digest();
    for (let i = 0; i + 4 <= digest.length && out.length < dimensions; i += 4) {
      out.push(digest.readUInt32LE(i) / 0x7fffffff - 1);
    }
  }
  const norm = Math.hypot(...out) || 1;
  return out.map((v) => v / norm);
}

/**
 * The fake reranker's relevance of `document` to `query`: the share of the query's distinct
 * lower-cased words (letters and digits) that the document contains, in [0, 1].
 */
export function fakeRerankScore(query: string, document: string): number {
  const words = (t: string) => new Set(t.toLowerCase().match(/[a-z0-9]+/g) ?? []);
  const q = words(query);
  if (q.size === 0) return 0;
  const d = words(document);
  let hit = 0;
  for (const w of q) if (d.has(w)) hit++;
  return hit / q.size;
}

/** Rough token count for the fake's `usage` fields; the exact value does not matter. */
function fakeTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function emptyCounters(): Record<FakeEndpoint, number> {
  return { embeddings: 0, chat: 0, models: 0, rerank: 0 };
}

function endpointOf(method: string, path: string): FakeEndpoint | 'other' {
  if (method === 'POST' && path === '/v1/embeddings') return 'embeddings';
  if (method === 'POST' && path === '/v1/chat/completions') return 'chat';
  if (method === 'GET' && path === '/v1/models') return 'models';
  if (method === 'POST' && path === '/v1/rerank') return 'rerank';
  return 'other';
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function apiError(res: ServerResponse, status: number, message: string, type: string, headers?: Record<string, string>): void {
  sendJson(res, status, { error: { message, type, param: null, code: null } }, headers);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Text of a chat message's content, whether a string or an array of parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p: unknown) => (typeof p === 'object' && p !== null && 'text' in p ? String((p as { text: unknown }).text) : ''))
      .join('');
  }
  return '';
}

export async function startFakeOpenAI(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const defaultDims = opts.dimensions ?? DEFAULT_DIMENSIONS;
  const models = opts.models ?? ['fake-embedding', 'fake-chat'];
  const faults: Record<FakeEndpoint, Fault[]> = { embeddings: [], chat: [], models: [], rerank: [] };
  const held = new Set<ServerResponse>();
  let completionSeq = 0;
  let toolCallSeq = 0;
  let rerankSeq = 0;

  const state = {
    calls: [] as FakeCall[],
    counts: emptyCounters(),
    inFlight: emptyCounters(),
    maxInFlight: emptyCounters(),
    delayMs: opts.delayMs ?? 0,
    chunkDelayMs: 0,
    firstChunkAt: undefined as number | undefined,
    requireKey: opts.requireKey,
    script: { chat: [] as FakeChatScriptEntry[] },
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const endpoint = endpointOf(method, path);
    const text = await readBody(req);
    let body: unknown;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    state.calls.push({ method, path, endpoint, body, headers: req.headers });
    if (endpoint === 'other') {
      apiError(res, 404, `no route for ${method} ${path}`, 'invalid_request_error');
      return;
    }

    state.counts[endpoint]++;
    state.inFlight[endpoint]++;
    state.maxInFlight[endpoint] = Math.max(state.maxInFlight[endpoint], state.inFlight[endpoint]);
    let closed = false;
    res.on('close', () => {
      closed = true;
      state.inFlight[endpoint]--;
      held.delete(res);
    });

    if (state.requireKey !== undefined && req.headers.authorization !== `Bearer ${state.requireKey}`) {
      apiError(res, 401, 'Incorrect API key provided.', 'invalid_request_error');
      return;
    }
    if (state.delayMs > 0) await sleep(state.delayMs);
    if (closed) return;

    const fault = faults[endpoint].shift();
    if (fault) {
      switch (fault.kind) {
        case 'raw':
          res.writeHead(fault.response.status, fault.response.headers ?? { 'content-type': 'application/json' });
          res.end(fault.response.body);
          return;
        case '429':
          apiError(res, 429, 'Rate limit reached.', 'rate_limit_error', { 'retry-after': fault.retryAfter ?? '0' });
          return;
        case '500':
          apiError(res, 500, 'The server had an error.', 'server_error', fault.retryAfter !== undefined ? { 'retry-after': fault.retryAfter } : {});
          return;
        case '400':
          apiError(res, 400, 'Invalid request.', 'invalid_request_error');
          return;
        case '401':
          apiError(res, 401, 'Incorrect API key provided.', 'invalid_request_error');
          return;
        case 'timeout':
          // Never answered: the client's timeout (or abort) closes the socket, and close()
          // tears down whatever is still held.
          held.add(res);
          return;
        case 'garbage':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"data": [ this is not json');
          return;
        case 'bad-shape':
          sendJson(res, 200, badShape(endpoint, body));
          return;
      }
    }

    switch (endpoint) {
      case 'embeddings':
        embeddings(res, body);
        return;
      case 'chat':
        await chat(res, body as FakeChatRequest);
        return;
      case 'models':
        sendJson(res, 200, {
          object: 'list',
          data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' })),
        });
        return;
      case 'rerank':
        rerank(res, body);
        return;
    }
  };

  const badShape = (endpoint: FakeEndpoint, body: unknown): unknown => {
    if (endpoint === 'embeddings') {
      const inputs = inputsOf(body);
      return embeddingResponse(inputs.slice(0, Math.max(0, inputs.length - 1)), body);
    }
    if (endpoint === 'chat') return { id: 'x', object: 'chat.completion', choices: 'nope' };
    if (endpoint === 'rerank') {
      const n = Array.isArray((body as { documents?: unknown } | undefined)?.documents) ? (body as { documents: unknown[] }).documents.length : 0;
      return { id: 'x', results: [{ index: n, relevance_score: 1 }] };
    }
    return { object: 'list', data: 'nope' };
  };

  const inputsOf = (body: unknown): string[] => {
    const input = (body as { input?: unknown } | undefined)?.input;
    if (typeof input === 'string') return [input];
    if (Array.isArray(input)) return input.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
    return [];
  };

  const embeddingResponse = (inputs: string[], body: unknown): unknown => {
    const b = (body ?? {}) as { model?: unknown; dimensions?: unknown; encoding_format?: unknown };
    const dims = typeof b.dimensions === 'number' ? b.dimensions : defaultDims;
    const base64 = b.encoding_format === 'base64';
    return {
      object: 'list',
      model: typeof b.model === 'string' ? b.model : 'fake-embedding',
      data: inputs.map((text, index) => {
        const vec = fakeEmbedding(text, dims);
        return {
          object: 'embedding',
          index,
          embedding: base64 ? Buffer.from(new Float32Array(vec).buffer).toString('base64') : vec,
        };
      }),
      usage: {
        prompt_tokens: inputs.reduce((n, t) => n + fakeTokens(t), 0),
        total_tokens: inputs.reduce((n, t) => n + fakeTokens(t), 0),
      },
    };
  };

  const embeddings = (res: ServerResponse, body: unknown): void => {
    const inputs = inputsOf(body);
    if (inputs.length === 0) {
      apiError(res, 400, "'input' must be a non-empty string or array", 'invalid_request_error');
      return;
    }
    if (inputs.some((t) => t.length === 0)) {
      apiError(res, 400, "'input' must not contain empty strings", 'invalid_request_error');
      return;
    }
    sendJson(res, 200, embeddingResponse(inputs, body));
  };

  const rerank = (res: ServerResponse, body: unknown): void => {
    const b = (body ?? {}) as { model?: unknown; query?: unknown; documents?: unknown; top_n?: unknown };
    const documents = b.documents;
    if (typeof b.query !== 'string' || !Array.isArray(documents) || documents.some((d) => typeof d !== 'string')) {
      apiError(res, 400, "'query' must be a string and 'documents' an array of strings", 'invalid_request_error');
      return;
    }
    const docs = documents as string[];
    const query = b.query;
    const topN = typeof b.top_n === 'number' ? b.top_n : docs.length;
    const results = docs
      .map((d, index) => ({ index, relevance_score: fakeRerankScore(query, d) }))
      .sort((x, y) => y.relevance_score - x.relevance_score || x.index - y.index)
      .slice(0, Math.max(0, topN));
    sendJson(res, 200, {
      id: `rerank-fake-${++rerankSeq}`,
      model: typeof b.model === 'string' ? b.model : 'fake-rerank',
      results,
      usage: { total_tokens: fakeTokens(query) + docs.reduce((n, d) => n + fakeTokens(d), 0) },
    });
  };

  const nextReply = (req: FakeChatRequest): FakeChatReply => {
    const entry = state.script.chat.shift();
    if (typeof entry === 'function') return entry(req);
    if (entry) return entry;
    const lastUser = [...(req.messages ?? [])].reverse().find((m) => m.role === 'user');
    return { content: contentText(lastUser?.content) };
  };

  const chat = async (res: ServerResponse, req: FakeChatRequest): Promise<void> => {
    const reply = nextReply(req);
    const id = `chatcmpl-fake-${++completionSeq}`;
    const model = typeof req.model === 'string' ? req.model : 'fake-chat';
    const created = Math.floor(Date.now() / 1000);
    const toolCalls =
      'tool_calls' in reply
        ? reply.tool_calls.map((tc) => ({
            id: tc.id ?? `call_fake_${++toolCallSeq}`,
            type: 'function' as const,
            function: {
              name: tc.function.name,
              arguments: typeof tc.function.arguments === 'string' ? tc.function.arguments : JSON.stringify(tc.function.arguments),
            },
          }))
        : undefined;
    const content = 'tool_calls' in reply ? (reply.content ?? null) : reply.content;
    const finishReason = toolCalls ? 'tool_calls' : ('finish_reason' in reply && reply.finish_reason) || 'stop';
    const promptTokens = fakeTokens(JSON.stringify(req.messages ?? []));
    const completionTokens = fakeTokens((content ?? '') + JSON.stringify(toolCalls ?? []));
    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };

    if (!req.stream) {
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content, refusal: null, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
            finish_reason: finishReason,
            logprobs: null,
          },
        ],
        usage,
      });
      return;
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const chunk = (delta: Record<string, unknown>, finish: string | null = null): void => {
      const payload = { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] };
      res.write(`data: ${JSON.stringify(payload)}\n\n`);
    };
    chunk({ role: 'assistant', content: '' });
    // Content is streamed word by word so that clients must really reassemble deltas.
    let first = true;
    for (const piece of (content ?? '').match(/\s*\S+\s*/g) ?? []) {
      if (state.chunkDelayMs > 0) await sleep(state.chunkDelayMs);
      if (res.destroyed) return;
      if (first) state.firstChunkAt = Date.now();
      first = false;
      chunk({ content: piece });
    }
    toolCalls?.forEach((tc, index) => {
      chunk({ tool_calls: [{ index, id: tc.id, type: 'function', function: { name: tc.function.name, arguments: '' } }] });
      const args = tc.function.arguments;
      const half = Math.ceil(args.length / 2);
      for (const part of [args.slice(0, half), args.slice(half)]) {
        if (part) chunk({ tool_calls: [{ index, function: { arguments: part } }] });
      }
    });
    chunk({}, finishReason);
    if (req.stream_options?.include_usage) {
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`);
    }
    res.write('data: [DONE]\n\n');
    res.end();
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) apiError(res, 500, `fake server crashed: ${String(e)}`, 'server_error');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  const fake: FakeOpenAI = {
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    get calls() {
      return state.calls;
    },
    get counts() {
      return state.counts;
    },
    get inFlight() {
      return state.inFlight;
    },
    get maxInFlight() {
      return state.maxInFlight;
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms: number) {
      state.delayMs = ms;
    },
    get firstChunkAt() {
      return state.firstChunkAt;
    },
    get chunkDelayMs() {
      return state.chunkDelayMs;
    },
    set chunkDelayMs(ms: number) {
      state.chunkDelayMs = ms;
    },
    get requireKey() {
      return state.requireKey;
    },
    set requireKey(key: string | undefined) {
      state.requireKey = key;
    },
    get script() {
      return state.script;
    },
    fail(endpoint, kind, times = 1, o = {}) {
      for (let i = 0; i < times; i++) faults[endpoint].push({ kind, retryAfter: o.retryAfter });
    },
    respond(endpoint, response, times = 1) {
      for (let i = 0; i < times; i++) faults[endpoint].push({ kind: 'raw', response });
    },
    reset() {
      state.calls = [];
      state.counts = emptyCounters();
      state.maxInFlight = { ...state.inFlight };
      state.script.chat.length = 0;
      for (const k of Object.keys(faults) as FakeEndpoint[]) faults[k].length = 0;
    },
    async close() {
      for (const res of held) res.destroy();
      held.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
    },
  };
  return fake;
}
