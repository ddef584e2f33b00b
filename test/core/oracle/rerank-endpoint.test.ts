import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VltError } from '../../../src/core/errors';
import { HttpReranker, type HttpRerankerOptions } from '../../../src/core/oracle/rerank-endpoint';
import { fakeRerankScore, startFakeOpenAI, type FakeOpenAI } from '../../helpers/fake-openai';

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

function reranker(extra: Partial<HttpRerankerOptions> = {}): HttpReranker {
  return new HttpReranker({ baseUrl: fake.baseURL, model: 'fake-rerank', maxRetries: 2, ...extra });
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

const QUERY = 'token refresh exponential backoff';
const DOCS = [
  'README: how to build the project',
  'refreshToken retries with exponential backoff',
  'token refresh uses exponential backoff with jitter',
  'the token cache',
];

describe('HttpReranker', () => {
  it('orders the documents by the endpoint scores, and sends the common request shape', async () => {
    const out = await reranker({ apiKey: 'sk-test' }).rerank(QUERY, DOCS);
    expect(out.map((r) => r.index)).toEqual([2, 1, 3, 0]);
    expect(out.map((r) => r.score)).toEqual([2, 1, 3, 0].map((i) => fakeRerankScore(QUERY, DOCS[i]!)));
    expect(out[0]!.score).toBe(1);
    const call = fake.calls.find((c) => c.endpoint === 'rerank')!;
    expect(call.path).toBe('/v1/rerank');
    expect(call.body).toMatchObject({ model: 'fake-rerank', query: QUERY, documents: DOCS, top_n: 4 });
    expect(call.headers.authorization).toBe('Bearer sk-test');
  });

  it('returns at most topN, and makes no request for no documents', async () => {
    const out = await reranker().rerank(QUERY, DOCS, { topN: 2 });
    expect(out.map((r) => r.index)).toEqual([2, 1]);
    expect(await reranker().rerank(QUERY, [])).toEqual([]);
    expect(fake.counts.rerank).toBe(1);
  });

  it('sorts a server answer that is not sorted', async () => {
    fake.respond('rerank', { status: 200, body: JSON.stringify({ results: [{ index: 0, relevance_score: 0.1 }, { index: 1, relevance_score: 0.9 }] }) });
    expect(await reranker().rerank('q', ['a', 'b'])).toEqual([
      { index: 1, score: 0.9 },
      { index: 0, score: 0.1 },
    ]);
  });

  it('retries a 429 and then succeeds', async () => {
    fake.fail('rerank', '429', 1);
    const out = await reranker().rerank(QUERY, DOCS);
    expect(out[0]!.index).toBe(2);
    expect(fake.counts.rerank).toBe(2);
  });

  it('backs off by itself when a 5xx names no Retry-After', async () => {
    fake.fail('rerank', '500', 1);
    const t0 = Date.now();
    const out = await reranker({ maxRetries: 1 }).rerank(QUERY, DOCS);
    expect(out[0]!.index).toBe(2);
    // 0.5 s less up to 25 % jitter.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(370);
    expect(fake.counts.rerank).toBe(2);
  });

  it('gives up on a 500 after the retries, with LLM_FAILED naming the URL and the status', async () => {
    fake.fail('rerank', '500', 3, { retryAfter: '0' });
    const e = await rejection(reranker({ maxRetries: 2 }).rerank(QUERY, DOCS));
    expect(e.code).toBe('LLM_FAILED');
    expect(e.message).toBe(`rerank endpoint ${fake.baseURL}/rerank failed with 500 after 3 attempts: The server had an error.`);
    expect(fake.counts.rerank).toBe(3);
  });

  it('never retries other 4xx', async () => {
    fake.fail('rerank', '400', 1);
    const e = await rejection(reranker().rerank(QUERY, DOCS));
    expect(e.code).toBe('LLM_FAILED');
    expect(e.message).toMatch(/rejected the request for model "fake-rerank" \(400\)/);
    expect(fake.counts.rerank).toBe(1);

    fake.requireKey = 'right-key';
    const auth = await rejection(reranker({ apiKey: 'wrong-key' }).rerank(QUERY, DOCS));
    expect(auth.message).toMatch(/rejected the API key \(401\)/);
    expect(fake.counts.rerank).toBe(2);
  });

  it('a body that is not JSON is LLM_FAILED', async () => {
    fake.fail('rerank', 'garbage', 1);
    const e = await rejection(reranker().rerank(QUERY, DOCS));
    expect(e.code).toBe('LLM_FAILED');
    expect(e.message).toMatch(/rerank endpoint .*\/v1\/rerank returned a response that is not valid JSON/);
    expect(fake.counts.rerank).toBe(1);
  });

  it('an index out of range, a missing score or a wrong shape is LLM_FAILED', async () => {
    fake.fail('rerank', 'bad-shape', 1);
    const e = await rejection(reranker().rerank(QUERY, DOCS));
    expect(e.code).toBe('LLM_FAILED');
    expect(e.message).toMatch(/invalid response: results\[0\]\.index is 4, but 4 documents were sent/);

    fake.respond('rerank', { status: 200, body: JSON.stringify({ results: [{ index: 0, relevance_score: 'high' }] }) });
    expect((await rejection(reranker().rerank('q', ['a']))).message).toMatch(/relevance_score is not a finite number/);
    fake.respond('rerank', { status: 200, body: JSON.stringify({ data: 'nope' }) });
    expect((await rejection(reranker().rerank('q', ['a']))).message).toMatch(/missing "results" array/);
    fake.respond('rerank', { status: 200, body: JSON.stringify({ results: [{ index: 0, score: 1 }, { index: 0, score: 2 }] }) });
    expect((await rejection(reranker().rerank('q', ['a', 'b']))).message).toMatch(/document 0 is scored twice/);
  });

  it('abort: before the call, during a request and during the back-off, CANCELLED at once', async () => {
    const ctl = new AbortController();
    ctl.abort();
    expect((await rejection(reranker().rerank(QUERY, DOCS, { signal: ctl.signal }))).code).toBe('CANCELLED');
    expect(fake.counts.rerank).toBe(0);

    fake.fail('rerank', 'timeout', 1);
    const during = new AbortController();
    const t0 = Date.now();
    const pending = reranker({ timeoutMs: 20_000 }).rerank(QUERY, DOCS, { signal: during.signal });
    setTimeout(() => during.abort(), 100);
    expect((await rejection(pending)).code).toBe('CANCELLED');
    expect(Date.now() - t0).toBeLessThan(5000);

    fake.fail('rerank', '429', 1, { retryAfter: '30' });
    const backoff = new AbortController();
    const t1 = Date.now();
    const waiting = reranker().rerank(QUERY, DOCS, { signal: backoff.signal });
    setTimeout(() => backoff.abort(), 200);
    expect((await rejection(waiting)).code).toBe('CANCELLED');
    expect(Date.now() - t1).toBeLessThan(5000);
  });

  it('a request that never answers times out per attempt and is retried', async () => {
    fake.fail('rerank', 'timeout', 1);
    const out = await reranker({ timeoutMs: 200, maxRetries: 1 }).rerank(QUERY, DOCS);
    expect(out[0]!.index).toBe(2);
    fake.fail('rerank', 'timeout', 2);
    const e = await rejection(reranker({ timeoutMs: 200, maxRetries: 1 }).rerank(QUERY, DOCS));
    expect(e.message).toMatch(/did not answer within 200 ms \(2 attempts\)/);
  });

  it('a server that is not there: could not connect, after the retries', async () => {
    // A port that was just free: nothing listens on it.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const e = await rejection(new HttpReranker({ baseUrl: `http://127.0.0.1:${port}/v1/`, model: 'm', maxRetries: 0 }).rerank('q', ['a', 'b']));
    expect(e.code).toBe('LLM_FAILED');
    expect(e.message).toMatch(new RegExp(`could not connect to rerank endpoint http://127\\.0\\.0\\.1:${port}/v1/rerank \\(1 attempt\\)`));
  });
});
