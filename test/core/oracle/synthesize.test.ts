import * as path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VltError } from '../../../src/core/errors';
import { OpenAIChatModel, type OpenAIChatModelOptions } from '../../../src/core/llm/openai-chat';
import { PromptLibrary } from '../../../src/core/llm/prompts';
import { DEFAULT_SYNTHESIS_MAX_TOKENS, noContextAnswer, synthesize, type SynthesisRequest } from '../../../src/core/oracle/synthesize';
import type { AssembledContext, ContextItem, ContextTier, OracleEvent, RetrievalResult } from '../../../src/core/oracle/types';
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fake-openai';

const prompts = new PromptLibrary(path.resolve(__dirname, '../../../prompts'));
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
});

function model(extra: Partial<OpenAIChatModelOptions> = {}): OpenAIChatModel {
  return new OpenAIChatModel({ baseUrl: fake.baseURL, model: 'fake-chat', maxRetries: 0, timeoutMs: 5000, ...extra });
}

function item(tier: ContextTier, r: Partial<RetrievalResult> & Pick<RetrievalResult, 'source' | 'path' | 'citation'>, text: string): ContextItem {
  const result: RetrievalResult = { key: r.citation, content: text, score: 1, method: 'test', metadata: {}, ...r };
  return { tier, citation: r.citation, text, tokens: 10, evidence: { result, fused: 1, score: 1, ranks: {}, features: {} } };
}

const context: AssembledContext = {
  items: [
    item('primary', { source: 'code', path: 'src/auth/token.ts', startLine: 10, endLine: 30, citation: '[src/auth/token.ts:10-30]' }, 'export function parseToken(raw: string): Token {\n  const [head, body] = raw.split(".");'),
    item('neighbour', { source: 'code', path: 'src/auth/middleware.ts', startLine: 40, endLine: 52, citation: '[src/auth/middleware.ts:40-52]' }, 'const token = parseToken(header);'),
    item('primary', { source: 'note', path: 'architecture/auth.md', citation: '[note:architecture/auth.md]' }, 'Tokens are JWTs signed with HS256.'),
  ],
  repoMap: 'src/auth/token.ts:\n  L10 export function parseToken(raw: string): Token\n',
  tokens: 60,
  budget: 4000,
  dropped: [],
};

const req: SynthesisRequest = {
  question: 'How is a token parsed?',
  analysis: { text: 'How is a token parsed?', type: 'conceptual', typeReason: 'no specific pattern', symbols: [], paths: [], languages: [], terms: ['token', 'parsed'], isLong: false },
  context,
  conversation: 'Earlier: the auth middleware.',
};

const ANSWER =
  'parseToken splits the raw token at the dots [src/auth/token.ts:12]. The middleware calls it on every request [src/auth/middleware.ts:45], and tokens are JWTs [note:architecture/auth.md]. It also caches them [src/cache/tokens.ts:3].';

type Body = { stream?: boolean; max_tokens?: number; temperature?: number; tools?: unknown; messages: Array<{ role: string; content: string }> };

describe('synthesize', () => {
  it('streams the answer as text events and checks its citations', async () => {
    fake.script.chat.push({ content: ANSWER });
    const events: OracleEvent[] = [];
    const res = await synthesize(req, { chat: model(), prompts, onEvent: (e) => events.push(e) });

    const texts = events.map((e) => (e.type === 'text' ? e.text : `<${e.type}>`));
    // The fake streams word by word: many deltas, in order, making up the answer exactly.
    expect(texts.length).toBeGreaterThan(10);
    expect(texts.join('')).toBe(ANSWER);
    expect(res.text).toBe(texts.join(''));
    expect(res.citations.map((c) => c.citation)).toEqual(['[src/auth/token.ts:12]', '[src/auth/middleware.ts:45]', '[note:architecture/auth.md]']);
    expect(res.unknownCitations).toEqual(['[src/cache/tokens.ts:3]']);
    expect(res.model).toBe('fake-chat');
    expect(res.finishReason).toBe('stop');
    expect(res.usage?.totalTokens).toBeGreaterThan(0);
    expect(res.ms).toBeGreaterThanOrEqual(0);

    expect(fake.counts.chat).toBe(1);
    const body = fake.calls[0]!.body as Body;
    expect(body.stream).toBe(true);
    expect(body.temperature).toBe(0);
    expect(body.max_tokens).toBe(DEFAULT_SYNTHESIS_MAX_TOKENS);
    expect(body.tools).toBeUndefined();
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(body.messages[0]!.content).toContain('not found in the provided context');
    expect(body.messages[0]!.content).toContain('At most 250 words');
    const user = body.messages[1]!.content;
    expect(user).toContain('### [src/auth/token.ts:10-30] (primary)\nexport function parseToken(raw: string): Token {');
    expect(user).toContain('### [src/auth/middleware.ts:40-52] (neighbour)\nconst token = parseToken(header);');
    expect(user).toContain('### [note:architecture/auth.md] (primary)');
    expect(user).toContain('L10 export function parseToken(raw: string): Token');
    expect(user).toContain('Question type: conceptual');
    expect(user).toContain('Earlier in this conversation: Earlier: the auth middleware.');
    expect(user).toMatch(/Question: How is a token parsed\?\n/);
  });

  it('returns an answer that cites nothing from the context, flagged', async () => {
    fake.script.chat.push({ content: 'It is parsed by magic [src/magic.ts:1] [note:nowhere.md].' });
    const res = await synthesize(req, { chat: model(), prompts, maxTokens: 300 });
    expect(res.citations).toEqual([]);
    expect(res.unknownCitations).toEqual(['[src/magic.ts:1]', '[note:nowhere.md]']);
    expect((fake.calls[0]!.body as Body).max_tokens).toBe(300);
  });

  it('survives a 429 through the client retries', async () => {
    fake.fail('chat', '429', 1);
    fake.script.chat.push({ content: ANSWER });
    const res = await synthesize(req, { chat: model({ maxRetries: 2 }), prompts });
    expect(res.text).toBe(ANSWER);
    expect(fake.counts.chat).toBe(2);
  });

  it('throws LLM_FAILED when 500s outlast the retries', async () => {
    fake.fail('chat', '500', 2, { retryAfter: '0' });
    fake.script.chat.push({ content: ANSWER });
    const events: OracleEvent[] = [];
    const err = await synthesize(req, { chat: model({ maxRetries: 1 }), prompts, onEvent: (e) => events.push(e) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VltError);
    expect((err as VltError).code).toBe('LLM_FAILED');
    expect((err as VltError).message).toMatch(/500 after 2 attempts/);
    expect(fake.counts.chat).toBe(2);
    expect(events).toEqual([]);
  });

  it('throws LLM_FAILED on a timeout', async () => {
    fake.fail('chat', 'timeout', 3);
    const err = await synthesize(req, { chat: model({ timeoutMs: 200 }), prompts }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VltError);
    expect((err as VltError).code).toBe('LLM_FAILED');
    expect((err as VltError).message).toMatch(/did not answer within 200 ms/);
  });

  it('throws CANCELLED when aborted', async () => {
    fake.fail('chat', 'timeout', 3);
    const ac = new AbortController();
    const pending = synthesize(req, { chat: model({ timeoutMs: 60_000 }), prompts, signal: ac.signal }).catch((e: unknown) => e);
    setTimeout(() => ac.abort(), 50);
    const err = await pending;
    expect((err as VltError).code).toBe('CANCELLED');
  });

  it('throws LLM_FAILED for an empty answer', async () => {
    fake.script.chat.push({ content: '   ' });
    await expect(synthesize(req, { chat: model(), prompts })).rejects.toMatchObject({ code: 'LLM_FAILED', message: expect.stringMatching(/empty answer/) as unknown });
  });
});

describe('noContextAnswer', () => {
  it('says what was searched without calling any model', () => {
    const text = noContextAnswer('  How does  the billing\nexport work? ', ['code index (bm25, symbols): nothing above the threshold', 'notes: 0 results', ' '], prompts);
    expect(text).toMatch(/^No relevant project context found for: How does the billing export work\?/);
    expect(text).toContain('\n- code index (bm25, symbols): nothing above the threshold\n- notes: 0 results\n');
    expect(text).not.toMatch(/\{\{/);
    expect(fake.calls).toHaveLength(0);
    expect(fake.counts.chat).toBe(0);
  });

  it('says so when nothing could be searched', () => {
    expect(noContextAnswer('x?', [], prompts)).toContain('- (no source could be searched)');
  });
});
