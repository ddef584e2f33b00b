import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  EmbeddingService,
  MemoryEmbeddingCache,
  OpenAIEmbeddingProvider,
  embeddingCacheKey,
  type EmbedItem,
  type OpenAIEmbeddingProviderOptions,
} from '../../src/core/embeddings';
import { VltError } from '../../src/core/errors';
import type { EmbeddingProvider } from '../../src/core/ports';
import { fakeEmbedding, startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';

let fake: FakeOpenAI;

beforeAll(async () => {
  fake = await startFakeOpenAI();
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.reset();
  fake.delayMs = 0;
  fake.requireKey = undefined;
});

function provider(extra: Partial<OpenAIEmbeddingProviderOptions> = {}): OpenAIEmbeddingProvider {
  return new OpenAIEmbeddingProvider({ baseUrl: fake.baseURL, model: 'fake-embedding', ...extra });
}

function items(n: number, prefix = 'text'): EmbedItem[] {
  return Array.from({ length: n }, (_, i) => ({ hash: `h-${prefix}-${i}`, text: `${prefix} number ${i}` }));
}

/** Inputs of every embeddings request the fake received, in order. */
function sentInputs(): string[][] {
  return fake.calls.filter((c) => c.endpoint === 'embeddings').map((c) => (c.body as { input: string[] }).input);
}

async function rejection(p: Promise<unknown>): Promise<VltError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(VltError);
    return e as VltError;
  }
  throw new Error('expected the promise to reject');
}

function expectVector(actual: Float32Array | undefined, text: string, dims = 32): void {
  expect(actual).toBeInstanceOf(Float32Array);
  expect(Array.from(actual ?? [])).toEqual(Array.from(Float32Array.from(fakeEmbedding(text, dims))));
}

describe('EmbeddingService over the real openai client', () => {
  it('splits misses into batches of batchSize and returns a vector per hash', async () => {
    const svc = new EmbeddingService(provider(), new MemoryEmbeddingCache(), { batchSize: 8, concurrency: 2 });
    const input = items(20);
    const out = await svc.embedAll(input);
    expect(fake.counts.embeddings).toBe(Math.ceil(20 / 8));
    expect(sentInputs().map((b) => b.length).sort()).toEqual([4, 8, 8]);
    expect(out.size).toBe(20);
    for (const it of input) expectVector(out.get(it.hash), it.text);
    const body = fake.calls[0]?.body as Record<string, unknown>;
    expect(body.encoding_format).toBe('float');
    expect(body.model).toBe('fake-embedding');
    expect('dimensions' in body).toBe(false);
  });

  it('sends each distinct hash once', async () => {
    const svc = new EmbeddingService(provider(), new MemoryEmbeddingCache(), { batchSize: 8, concurrency: 1 });
    const out = await svc.embedAll([
      { hash: 'a', text: 'alpha' },
      { hash: 'b', text: 'beta' },
      { hash: 'a', text: 'alpha' },
    ]);
    expect(sentInputs()).toEqual([['alpha', 'beta']]);
    expect([...out.keys()].sort()).toEqual(['a', 'b']);
  });

  it('never runs more than `concurrency` batches at once', async () => {
    fake.delayMs = 40;
    const svc = new EmbeddingService(provider(), new MemoryEmbeddingCache(), { batchSize: 2, concurrency: 3 });
    const out = await svc.embedAll(items(20));
    expect(out.size).toBe(20);
    expect(fake.counts.embeddings).toBe(10);
    expect(fake.maxInFlight.embeddings).toBe(3);
  });

  it('reports progress over the texts that need embedding', async () => {
    const cache = new MemoryEmbeddingCache();
    const p = provider();
    cache.putMany(embeddingCacheKey(p), [['h-text-0', new Float32Array(32)]]);
    const progress: Array<[number, number]> = [];
    const svc = new EmbeddingService(p, cache, {
      batchSize: 4,
      concurrency: 1,
      onProgress: (done, total) => progress.push([done, total]),
    });
    await svc.embedAll(items(10));
    expect(progress).toEqual([
      [0, 9],
      [4, 9],
      [8, 9],
      [9, 9],
    ]);
  });

  it('makes no request when everything is cached', async () => {
    const cache = new MemoryEmbeddingCache();
    const svc = new EmbeddingService(provider(), cache, { batchSize: 8, concurrency: 2 });
    const first = await svc.embedAll(items(12));
    expect(fake.counts.embeddings).toBe(2);
    fake.reset();
    const second = await svc.embedAll(items(12));
    expect(fake.counts.embeddings).toBe(0);
    for (const [h, v] of first) expect(second.get(h)).toEqual(v);
  });

  it('sends only the new hashes after some texts change', async () => {
    const cache = new MemoryEmbeddingCache();
    const svc = new EmbeddingService(provider(), cache, { batchSize: 8, concurrency: 2 });
    const before = items(10);
    await svc.embedAll(before);
    fake.reset();
    const after = before.map((it, i) => (i === 3 || i === 7 ? { hash: `${it.hash}-v2`, text: `${it.text} (edited)` } : it));
    const out = await svc.embedAll(after);
    expect(svc.stats).toEqual({ requested: 10, cacheHits: 8, embedded: 2, batches: 1 });
    expect(sentInputs()).toEqual([['text number 3 (edited)', 'text number 7 (edited)']]);
    expect(out.size).toBe(10);
    expectVector(out.get('h-text-3-v2'), 'text number 3 (edited)');
  });

  it('keys the cache by model and dimensions', async () => {
    const cache = new MemoryEmbeddingCache();
    await new EmbeddingService(provider(), cache, { batchSize: 8, concurrency: 1 }).embedAll(items(3));
    fake.reset();
    const p16 = provider({ dimensions: 16 });
    const out = await new EmbeddingService(p16, cache, { batchSize: 8, concurrency: 1 }).embedAll(items(3));
    expect(fake.counts.embeddings).toBe(1);
    expect(embeddingCacheKey(p16)).toBe('fake-embedding#16');
    expect(out.get('h-text-0')?.length).toBe(16);
  });

  it('cuts over-long texts and replaces empty ones before sending', async () => {
    const svc = new EmbeddingService(provider(), new MemoryEmbeddingCache(), { batchSize: 8, concurrency: 1, maxChars: 100 });
    const long = 'x'.repeat(99) + '😀' + 'y'.repeat(400);
    await svc.embedAll([
      { hash: 'long', text: long },
      { hash: 'empty', text: '' },
    ]);
    const [batch] = sentInputs();
    expect(batch?.[0]).toBe('x'.repeat(99));
    expect(batch?.[1]).toBe(' ');
  });

  it('stops after a batch fails for good, lets in-flight batches finish and keeps them cached', async () => {
    // A stub provider makes the interleaving exact: batch 1 is slow and succeeds, batch 2
    // fails at once, batch 3 must never start.
    const started: string[][] = [];
    const stub: EmbeddingProvider = {
      model: 'stub',
      dimensions: undefined,
      async embed(texts) {
        started.push(texts);
        if (texts.includes('bad')) throw new Error('boom');
        await new Promise((r) => setTimeout(r, 50));
        return texts.map(() => [1, 2, 3]);
      },
    };
    const cache = new MemoryEmbeddingCache();
    const svc = new EmbeddingService(stub, cache, { batchSize: 2, concurrency: 2 });
    const err = await rejection(
      svc.embedAll([
        { hash: 'a', text: 'a' },
        { hash: 'b', text: 'b' },
        { hash: 'c', text: 'bad' },
        { hash: 'd', text: 'd' },
        { hash: 'e', text: 'e' },
      ]),
    );
    expect(err.code).toBe('EMBEDDING_FAILED');
    expect(started).toEqual([
      ['a', 'b'],
      ['bad', 'd'],
    ]);
    expect(cache.size('stub')).toBe(2);
    expect([...cache.getMany('stub', ['a', 'b', 'c']).keys()]).toEqual(['a', 'b']);
  });

  it('fails with EMBEDDING_FAILED on persistent 500 and keeps earlier batches cached', async () => {
    const cache = new MemoryEmbeddingCache();
    const p = provider({ maxRetries: 2 });
    let broken = false;
    const svc = new EmbeddingService(p, cache, {
      batchSize: 2,
      concurrency: 1,
      // Once the first batch is in, the endpoint breaks for good; Retry-After: 0 keeps the
      // retries instant.
      onProgress: (done) => {
        if (done === 2 && !broken) {
          broken = true;
          fake.fail('embeddings', '500', 100, { retryAfter: '0' });
        }
      },
    });
    const err = await rejection(svc.embedAll(items(6)));
    expect(err.code).toBe('EMBEDDING_FAILED');
    expect(err.message).toMatch(/failed with 500 after 3 attempts/);
    expect(fake.counts.embeddings).toBe(1 + 3);
    expect(cache.size(embeddingCacheKey(p))).toBe(2);
    expect(svc.stats).toEqual({ requested: 6, cacheHits: 0, embedded: 2, batches: 1 });

    fake.reset();
    const out = await svc.embedAll(items(6));
    expect(out.size).toBe(6);
    expect(sentInputs().flat()).toEqual(['text number 2', 'text number 3', 'text number 4', 'text number 5']);
  });
});

describe('OpenAIEmbeddingProvider retries', () => {
  it('retries a 429 and honours Retry-After', async () => {
    fake.fail('embeddings', '429', 1, { retryAfter: '0.3' });
    const t0 = Date.now();
    const out = await provider().embed(['hello']);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    expect(fake.counts.embeddings).toBe(2);
    expect(out[0]).toEqual(fakeEmbedding('hello'));
  });

  it('retries 500 twice with exponential back-off, then succeeds', async () => {
    fake.fail('embeddings', '500', 2);
    const t0 = Date.now();
    const out = await provider().embed(['hello']);
    // The client waits 0.5 s then 1 s, each less up to 25 % jitter: at least 1.125 s.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(fake.counts.embeddings).toBe(3);
    expect(out).toHaveLength(1);
  });

  it('retries after a timeout, then succeeds', async () => {
    fake.fail('embeddings', 'timeout', 1);
    const out = await provider({ timeoutMs: 200 }).embed(['hello']);
    expect(fake.counts.embeddings).toBe(2);
    expect(out[0]).toEqual(fakeEmbedding('hello'));
  });

  it('reports a timeout clearly when retries run out', async () => {
    fake.fail('embeddings', 'timeout', 1);
    const err = await rejection(provider({ timeoutMs: 100, maxRetries: 0 }).embed(['hello']));
    expect(err.code).toBe('EMBEDDING_FAILED');
    expect(err.message).toMatch(/did not answer within 100 ms/);
  });

  it('does not retry a 401 and says the key was rejected', async () => {
    fake.requireKey = 'right-key';
    const err = await rejection(provider({ apiKey: 'wrong-key' }).embed(['hello']));
    expect(err.code).toBe('EMBEDDING_FAILED');
    expect(err.message).toMatch(/rejected the API key \(401\)/);
    expect(err.message).not.toContain('wrong-key');
    expect(err.details?.status).toBe(401);
    expect(fake.counts.embeddings).toBe(1);
  });

  it('masks the key when the server quotes it back', async () => {
    fake.respond('embeddings', {
      status: 401,
      body: '{"error":{"message":"Incorrect API key provided: sk-secret-123","type":"invalid_request_error"}}',
      headers: { 'content-type': 'application/json' },
    });
    const err = await rejection(provider({ apiKey: 'sk-secret-123' }).embed(['hello']));
    expect(err.message).toMatch(/rejected the API key \(401\): Incorrect API key provided: \*\*\*/);
    expect(err.message).not.toContain('sk-secret-123');
    expect(err.cause).toBeUndefined();
  });

  it('says when a 401 comes from a missing key', async () => {
    fake.requireKey = 'right-key';
    const err = await rejection(provider().embed(['hello']));
    expect(err.message).toMatch(/requires an API key \(401\) but none is configured/);
  });

  it('sends the configured key as a bearer token', async () => {
    fake.requireKey = 'right-key';
    await provider({ apiKey: 'right-key' }).embed(['hello']);
    expect(fake.calls[0]?.headers.authorization).toBe('Bearer right-key');
  });

  it('does not retry a 400', async () => {
    fake.fail('embeddings', '400', 1);
    const err = await rejection(provider().embed(['hello']));
    expect(err.code).toBe('EMBEDDING_FAILED');
    expect(err.message).toMatch(/rejected the request .*\(400\): Invalid request/);
    expect(fake.counts.embeddings).toBe(1);
  });
});

describe('OpenAIEmbeddingProvider response validation', () => {
  it('rejects a body that is not JSON', async () => {
    fake.fail('embeddings', 'garbage', 1);
    const err = await rejection(provider().embed(['a', 'b']));
    expect(err.code).toBe('EMBEDDING_FAILED');
    expect(err.message).toMatch(/not valid JSON/);
  });

  it('rejects a response with the wrong number of vectors', async () => {
    fake.fail('embeddings', 'bad-shape', 1);
    const err = await rejection(provider().embed(['a', 'b', 'c']));
    expect(err.code).toBe('EMBEDDING_FAILED');
    expect(err.message).toMatch(/expected 3 embeddings, got 2/);
  });

  it.each([
    ['a non-object', '"hello"', /expected a JSON object/],
    ['no data array', '{"object":"list"}', /missing "data" array/],
    [
      'vectors of different lengths',
      '{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2,3]}]}',
      /different lengths/,
    ],
    ['a null component', '{"data":[{"index":0,"embedding":[1,null]},{"index":1,"embedding":[1,2]}]}', /non-finite/],
    ['a duplicate index', '{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}', /appears twice/],
  ])('rejects %s', async (_name, body, message) => {
    fake.respond('embeddings', { status: 200, body, headers: { 'content-type': 'application/json' } });
    const err = await rejection(provider().embed(['a', 'b']));
    expect(err.code).toBe('EMBEDDING_FAILED');
    expect(err.message).toMatch(message);
  });

  it('puts vectors back in input order by index', async () => {
    fake.respond('embeddings', {
      status: 200,
      body: '{"data":[{"index":1,"embedding":[0,1]},{"index":0,"embedding":[1,0]}]}',
      headers: { 'content-type': 'application/json' },
    });
    expect(await provider().embed(['a', 'b'])).toEqual([
      [1, 0],
      [0, 1],
    ]);
  });

  it('forwards dimensions and checks the answer has that many', async () => {
    const out = await provider({ dimensions: 8 }).embed(['hello']);
    expect((fake.calls[0]?.body as { dimensions?: number }).dimensions).toBe(8);
    expect(out[0]).toHaveLength(8);

    fake.respond('embeddings', {
      status: 200,
      body: '{"data":[{"index":0,"embedding":[1,2,3]}]}',
      headers: { 'content-type': 'application/json' },
    });
    const err = await rejection(provider({ dimensions: 8 }).embed(['hello']));
    expect(err.message).toMatch(/asked for 8 dimensions, got 3/);
  });
});

describe('cancellation', () => {
  it('cancels a request in flight', async () => {
    fake.delayMs = 5_000;
    const ac = new AbortController();
    const svc = new EmbeddingService(provider(), new MemoryEmbeddingCache(), { batchSize: 2, concurrency: 2 });
    setTimeout(() => ac.abort(), 50);
    const t0 = Date.now();
    const err = await rejection(svc.embedAll(items(6), ac.signal));
    expect(err.code).toBe('CANCELLED');
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(fake.counts.embeddings).toBe(2);
  });

  it('cancels during a retry back-off without waiting it out', async () => {
    fake.fail('embeddings', '429', 1, { retryAfter: '3' });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const t0 = Date.now();
    const err = await rejection(provider().embed(['hello'], ac.signal));
    expect(err.code).toBe('CANCELLED');
    expect(Date.now() - t0).toBeLessThan(1_500);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    const svc = new EmbeddingService(provider(), new MemoryEmbeddingCache(), { batchSize: 2, concurrency: 2 });
    const err = await rejection(svc.embedAll(items(4), ac.signal));
    expect(err.code).toBe('CANCELLED');
    expect(fake.counts.embeddings).toBe(0);
  });
});

describe('fake OpenAI server: chat and models through the real client', () => {
  function client(): OpenAI {
    return new OpenAI({ baseURL: fake.baseURL, apiKey: 'k', maxRetries: 0 });
  }

  it('echoes the last user message by default', async () => {
    const res = await client().chat.completions.create({
      model: 'fake-chat',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'ping' },
      ],
    });
    expect(res.choices[0]?.message.content).toBe('ping');
    expect(res.choices[0]?.finish_reason).toBe('stop');
  });

  it('returns scripted tool calls without streaming', async () => {
    fake.script.chat.push({ tool_calls: [{ function: { name: 'search', arguments: { query: 'foo' } } }] });
    const res = await client().chat.completions.create({
      model: 'fake-chat',
      messages: [{ role: 'user', content: 'find foo' }],
      tools: [{ type: 'function', function: { name: 'search', parameters: { type: 'object' } } }],
    });
    const call = res.choices[0]?.message.tool_calls?.[0];
    expect(res.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type).toBe('function');
    expect(call?.type === 'function' ? JSON.parse(call.function.arguments) : undefined).toEqual({ query: 'foo' });
  });

  it('streams content in several chunks', async () => {
    fake.script.chat.push({ content: 'the answer is forty two' });
    const stream = await client().chat.completions.create({
      model: 'fake-chat',
      messages: [{ role: 'user', content: 'q' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const pieces: string[] = [];
    let usage: unknown;
    for await (const chunk of stream) {
      const d = chunk.choices[0]?.delta.content;
      if (d) pieces.push(d);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe('the answer is forty two');
    expect(usage).toBeDefined();
  });

  it('streams tool calls that the client helper reassembles', async () => {
    fake.script.chat.push({
      tool_calls: [
        { id: 'call_1', function: { name: 'read_file', arguments: '{"path":"src/a.ts"}' } },
        { function: { name: 'search', arguments: { query: 'bar' } } },
      ],
    });
    const runner = client().chat.completions.stream({
      model: 'fake-chat',
      messages: [{ role: 'user', content: 'go' }],
      tools: [
        { type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'search', parameters: { type: 'object' } } },
      ],
    });
    const final = await runner.finalChatCompletion();
    const calls = final.choices[0]?.message.tool_calls ?? [];
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
    expect(calls.map((c) => (c.type === 'function' ? [c.id, c.function.name, c.function.arguments] : []))).toEqual([
      ['call_1', 'read_file', '{"path":"src/a.ts"}'],
      [expect.stringMatching(/^call_/), 'search', '{"query":"bar"}'],
    ]);
    const body = fake.calls[0]?.body as { stream?: boolean };
    expect(body.stream).toBe(true);
  });

  it('lists models and enforces the key when asked', async () => {
    const ids: string[] = [];
    for await (const m of client().models.list()) ids.push(m.id);
    expect(ids).toEqual(['fake-embedding', 'fake-chat']);
    fake.requireKey = 'other';
    await expect(client().models.list()).rejects.toMatchObject({ status: 401 });
    expect(fake.counts.models).toBe(2);
  });
});
