import * as path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenAIChatModel } from '../../../src/core/llm/openai-chat';
import { PromptLibrary } from '../../../src/core/llm/prompts';
import { contentTerms, conversationalReason, rewriteQuestion, type RewriteSession } from '../../../src/core/oracle/rewrite';
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fake-openai';

const prompts = new PromptLibrary(path.resolve(__dirname, '../../../prompts'));
let fake: FakeOpenAI;
let chat: OpenAIChatModel;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  chat = new OpenAIChatModel({ baseUrl: fake.baseURL, model: 'fake-chat', maxRetries: 0, timeoutMs: 5000 });
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => fake.reset());

const session: RewriteSession = {
  recent: [
    { role: 'user', text: 'Where is parseToken defined?' },
    { role: 'assistant', text: 'parseToken is defined in src/auth/token.ts [src/auth/token.ts:10].' },
  ],
  focus: { symbols: ['AuthMiddleware', 'parseToken'], files: ['src/auth/token.ts'] },
};

type Body = { messages: Array<{ role: string; content: string }>; temperature?: number };

describe('rewriteQuestion with a model', () => {
  it('keeps every term of the user even when the model drops some', async () => {
    fake.script.chat.push({ content: 'Which tests cover parseToken?' });
    const res = await rewriteQuestion('which tests cover it for expired tokens?', session, { chat, prompts });
    // "expired" and "tokens" were dropped by the model and are appended, in the user's order.
    expect(res).toEqual({ text: 'Which tests cover parseToken? expired tokens', rewritten: true, how: 'llm', reason: 'refers back with "it"' });
    expect(fake.counts.chat).toBe(1);
    const body = fake.calls[0]!.body as Body;
    expect(body.temperature).toBe(0);
    const prompt = body.messages[0]!.content;
    expect(prompt).toContain('Latest question: which tests cover it for expired tokens?');
    expect(prompt).toContain('Recently discussed symbols: AuthMiddleware, parseToken');
    expect(prompt).toContain('Recently discussed files: src/auth/token.ts');
    expect(prompt).toContain('user: Where is parseToken defined?\nassistant: parseToken is defined in src/auth/token.ts');
  });

  it('takes a complete rewrite as it is, after stripping labels and quotes', async () => {
    fake.script.chat.push({ content: 'Query: "what calls parseToken"\n\nI resolved "it" to parseToken.' });
    const res = await rewriteQuestion('what calls it?', session, { chat, prompts });
    expect(res).toMatchObject({ text: 'what calls parseToken', rewritten: true, how: 'llm' });
  });

  it('falls back to the focus when the model fails, without throwing', async () => {
    fake.fail('chat', '400', 1);
    const res = await rewriteQuestion('what calls it?', session, { chat, prompts });
    expect(res.text).toBe('what calls it? AuthMiddleware parseToken src/auth/token.ts');
    expect(res.how).toBe('focus');
    expect(res.rewritten).toBe(true);
    expect(res.reason).toMatch(/the model failed: .*400/);
    expect(fake.counts.chat).toBe(1);
  });

  it('falls back to the focus when the model answers with nothing', async () => {
    fake.script.chat.push({ content: '' });
    const res = await rewriteQuestion('and the tests?', session, { chat, prompts });
    expect(res).toMatchObject({ how: 'focus', text: 'and the tests? AuthMiddleware parseToken src/auth/token.ts' });
    expect(res.reason).toMatch(/empty rewrite/);
  });

  it('leaves a self-contained question alone without asking the model', async () => {
    for (const q of ['What calls parseToken?', 'How does this project handle authentication?', 'Which function that parses HTTP headers rejects folded lines?']) {
      const res = await rewriteQuestion(q, session, { chat, prompts });
      expect(res, q).toMatchObject({ text: q, rewritten: false, how: 'none' });
    }
    expect(fake.counts.chat).toBe(0);
  });
});

describe('rewriteQuestion without a model', () => {
  it('carries the last focus symbol over', async () => {
    const res = await rewriteQuestion('what calls it?', { recent: [], focus: { symbols: ['parseToken'], files: [] } });
    expect(res).toEqual({ text: 'what calls it? parseToken', rewritten: true, how: 'focus', reason: 'refers back with "it"' });
  });

  it('carries at most three symbols and two files, the most recent, skipping those already named', async () => {
    const res = await rewriteQuestion('what about a.ts?', {
      recent: [],
      focus: { symbols: ['Old', 'A1', 'B2', 'C3'], files: ['x.ts', 'y.ts', 'a.ts'] },
    });
    expect(res.text).toBe('what about a.ts? A1 B2 C3 y.ts');
  });

  it('uses the names of the last user turn when the session has no focus', async () => {
    const res = await rewriteQuestion('why?', { recent: [{ role: 'user', text: 'Does `retryPolicy` back off in src/net/retry.ts?' }, { role: 'assistant', text: 'Yes.' }], focus: { symbols: [], files: [] } });
    expect(res).toMatchObject({ text: 'why? retryPolicy src/net/retry.ts', how: 'focus' });
  });

  it('does nothing without a conversation to resolve against', async () => {
    const res = await rewriteQuestion('what calls it?', { recent: [], focus: { symbols: [], files: [] } }, { chat, prompts });
    expect(res).toMatchObject({ text: 'what calls it?', rewritten: false, how: 'none' });
    expect(res.reason).toMatch(/no conversation/);
    expect(fake.counts.chat).toBe(0);
  });
});

describe('conversationalReason', () => {
  it.each([
    ['what calls it?', true],
    ['How does that work?', true],
    ['what about the retries', true],
    ['Is the same true for sessions in general?', true],
    ['where are they created', true],
    ['tests?', true],
    ['What calls parseToken?', false],
    ['How does this project handle authentication?', false],
    ['Make sure that tokens expire after an hour: where is that enforced?', true],
    ['Which function that parses HTTP headers rejects folded lines?', false],
    ['How are database migrations applied on startup?', false],
  ])('%s → %s', (q, expected) => {
    expect(conversationalReason(q).conversational).toBe(expected);
  });
});

describe('contentTerms', () => {
  it('keeps the words that name something', () => {
    expect(contentTerms('Which tests cover it for expired tokens in src/auth/token.ts and `http.Handler`?')).toEqual(['tests', 'cover', 'expired', 'tokens', 'src/auth/token.ts', 'http.Handler']);
  });
});
