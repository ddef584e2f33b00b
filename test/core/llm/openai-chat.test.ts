import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig, loadConfig } from '../../../src/core/config';
import { VltError } from '../../../src/core/errors';
import type { ChatStreamEvent } from '../../../src/core/llm/chat';
import { OpenAIChatModel, createChatModel, type OpenAIChatModelOptions } from '../../../src/core/llm/openai-chat';
import { startFakeOpenAI, type FakeOpenAI } from '../../helpers/fake-openai';

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

function model(extra: Partial<OpenAIChatModelOptions> = {}): OpenAIChatModel {
  return new OpenAIChatModel({ baseUrl: fake.baseURL, model: 'fake-chat', maxRetries: 2, ...extra });
}

async function rejection(p: Promise<unknown>): Promise<VltError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(VltError);
    return e as VltError;
  }
  throw new Error('expected a rejection');
}

async function collect(stream: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const out: ChatStreamEvent[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

describe('OpenAIChatModel.complete', () => {
  it('sends the messages and returns text and usage', async () => {
    fake.script.chat.push({ content: 'Hello back.' });
    const res = await model().complete({ messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'Hi' }], temperature: 0 });
    expect(res.text).toBe('Hello back.');
    expect(res.toolCalls).toEqual([]);
    expect(res.finishReason).toBe('stop');
    expect(res.usage?.totalTokens).toBeGreaterThan(0);
    const body = fake.calls[0]!.body as { model: string; messages: unknown[]; temperature: number; tools?: unknown };
    expect(body.model).toBe('fake-chat');
    expect(body.messages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(body.temperature).toBe(0);
    expect(body.tools).toBeUndefined();
  });

  it('passes tools and returns the tool calls the model asked for', async () => {
    fake.script.chat.push({ tool_calls: [{ id: 'c1', function: { name: 'vault_read', arguments: { path: 'a.md' } } }] });
    const res = await model().complete({
      messages: [{ role: 'user', content: 'read a' }],
      tools: [{ name: 'vault_read', description: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } }],
    });
    expect(res.toolCalls).toEqual([{ id: 'c1', name: 'vault_read', arguments: '{"path":"a.md"}' }]);
    expect(res.finishReason).toBe('tool_calls');
    const body = fake.calls[0]!.body as { tools: Array<{ type: string; function: { name: string } }>; tool_choice: string };
    expect(body.tools[0]).toMatchObject({ type: 'function', function: { name: 'vault_read' } });
    expect(body.tool_choice).toBe('auto');
  });

  it('sends assistant tool calls and tool results back in OpenAI shape', async () => {
    await model().complete({
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'x1', name: 't', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'x1', content: 'result' },
      ],
    });
    const msgs = (fake.calls[0]!.body as { messages: unknown[] }).messages;
    expect(msgs[1]).toEqual({ role: 'assistant', content: null, tool_calls: [{ id: 'x1', type: 'function', function: { name: 't', arguments: '{}' } }] });
    expect(msgs[2]).toEqual({ role: 'tool', tool_call_id: 'x1', content: 'result' });
  });

  it('retries 429 (honouring Retry-After) and 500, then succeeds', async () => {
    fake.fail('chat', '429', 1, { retryAfter: '0' });
    fake.fail('chat', '500', 1);
    fake.script.chat.push({ content: 'finally' });
    const res = await model({ maxRetries: 3 }).complete({ messages: [{ role: 'user', content: 'x' }] });
    expect(res.text).toBe('finally');
    expect(fake.counts.chat).toBe(3);
  });

  it('does not retry 401 and says a key is missing', async () => {
    fake.fail('chat', '401', 5);
    const err = await rejection(model().complete({ messages: [{ role: 'user', content: 'x' }] }));
    expect(err.code).toBe('LLM_FAILED');
    expect(err.message).toMatch(/requires an API key \(401\)/);
    expect(fake.counts.chat).toBe(1);
  });

  it('gives up after its retries on persistent 500s', async () => {
    fake.fail('chat', '500', 10, { retryAfter: '0' });
    const err = await rejection(model({ maxRetries: 1 }).complete({ messages: [{ role: 'user', content: 'x' }] }));
    expect(err.code).toBe('LLM_FAILED');
    expect(err.message).toMatch(/failed with 500 after 2 attempts/);
    expect(fake.counts.chat).toBe(2);
  });

  it('reports invalid JSON and invalid shapes as LLM_FAILED', async () => {
    fake.fail('chat', 'garbage');
    expect((await rejection(model({ maxRetries: 0 }).complete({ messages: [{ role: 'user', content: 'x' }] }))).code).toBe('LLM_FAILED');
    fake.fail('chat', 'bad-shape');
    const err = await rejection(model({ maxRetries: 0 }).complete({ messages: [{ role: 'user', content: 'x' }] }));
    expect(err.code).toBe('LLM_FAILED');
    expect(err.message).toMatch(/invalid response/);
  });

  it('times out per attempt and cancels at once on abort', async () => {
    fake.fail('chat', 'timeout', 5);
    const err = await rejection(model({ timeoutMs: 200, maxRetries: 0 }).complete({ messages: [{ role: 'user', content: 'x' }] }));
    expect(err.code).toBe('LLM_FAILED');
    expect(err.message).toMatch(/did not answer within 200 ms/);

    fake.fail('chat', 'timeout', 5);
    const ac = new AbortController();
    const pending = model({ timeoutMs: 60_000 }).complete({ messages: [{ role: 'user', content: 'x' }], signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    const t0 = Date.now();
    expect((await rejection(pending)).code).toBe('CANCELLED');
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('masks the key out of server messages', async () => {
    fake.respond('chat', { status: 400, body: JSON.stringify({ error: { message: 'bad key sk-secret-123 here' } }) });
    const err = await rejection(model({ apiKey: 'sk-secret-123', maxRetries: 0 }).complete({ messages: [{ role: 'user', content: 'x' }] }));
    expect(err.message).not.toContain('sk-secret-123');
    expect(err.message).toContain('***');
  });
});

describe('OpenAIChatModel.stream', () => {
  it('yields text deltas in order and a done event with the assembled result', async () => {
    fake.script.chat.push({ content: 'one two three four' });
    const events = await collect(model().stream({ messages: [{ role: 'user', content: 'x' }] }));
    const deltas = events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('one two three four');
    const done = events[events.length - 1]!;
    expect(done.type).toBe('done');
    if (done.type === 'done') {
      expect(done.result.text).toBe('one two three four');
      expect(done.result.usage?.totalTokens).toBeGreaterThan(0);
    }
  });

  it('reassembles streamed tool calls', async () => {
    fake.script.chat.push({ tool_calls: [{ function: { name: 'vault_list', arguments: { folder: 'architecture/decisions' } } }, { function: { name: 'vault_read', arguments: '{"path":"x.md"}' } }] });
    const events = await collect(model().stream({ messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'vault_list', description: 'l', parameters: { type: 'object' } }] }));
    const done = events.find((e) => e.type === 'done');
    expect(done?.type === 'done' && done.result.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['vault_list', { folder: 'architecture/decisions' }],
      ['vault_read', { path: 'x.md' }],
    ]);
  });

  it('turns a failure before the stream into LLM_FAILED', async () => {
    fake.fail('chat', '400');
    await expect(collect(model({ maxRetries: 0 }).stream({ messages: [{ role: 'user', content: 'x' }] }))).rejects.toMatchObject({ code: 'LLM_FAILED' });
  });
});

describe('createChatModel', () => {
  it('is undefined without a key for the default remote endpoint', () => {
    expect(createChatModel(defaultConfig())).toBeUndefined();
  });

  it('builds a model from the environment: a key, or a keyless local endpoint', async () => {
    const withKey = await loadConfig('/nonexistent-vlt-dir', { VLT_LLM_API_KEY: 'k' });
    expect(createChatModel(withKey)?.model).toBe(withKey.llm.model);
    const local = await loadConfig('/nonexistent-vlt-dir', { VLT_LLM_BASE_URL: fake.baseURL, VLT_LLM_MODEL: 'fake-chat' });
    const m = createChatModel(local);
    expect(m?.model).toBe('fake-chat');
    fake.script.chat.push({ content: 'local ok' });
    expect((await m!.complete({ messages: [{ role: 'user', content: 'x' }] })).text).toBe('local ok');
  });
});
