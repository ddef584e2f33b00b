import * as path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VltError } from '../../../src/core/errors';
import { OpenAIChatModel } from '../../../src/core/llm/openai-chat';
import { PromptLibrary } from '../../../src/core/llm/prompts';
import { AGENT_MAX_TURNS, runAgent, type AgentTool } from '../../../src/core/oracle/agent';
import type { SynthesisRequest } from '../../../src/core/oracle/synthesize';
import type { AssembledContext, OracleEvent, RetrievalResult } from '../../../src/core/oracle/types';
import { startFakeOpenAI, type FakeChatRequest, type FakeOpenAI } from '../../helpers/fake-openai';

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

const result: RetrievalResult = {
  key: 'code:src/auth/token.ts:10-30',
  source: 'code',
  path: 'src/auth/token.ts',
  startLine: 10,
  endLine: 30,
  content: 'export function parseToken(raw: string): Token {',
  score: 1,
  method: 'bm25',
  citation: '[src/auth/token.ts:10-30]',
  metadata: {},
};
const context: AssembledContext = {
  items: [{ tier: 'primary', citation: result.citation, text: result.content, tokens: 12, evidence: { result, fused: 1, score: 1, ranks: { bm25: 1 }, features: {} } }],
  repoMap: '',
  tokens: 12,
  budget: 4000,
  dropped: [],
};
const req: SynthesisRequest = {
  question: 'How are tokens refreshed?',
  analysis: { text: 'How are tokens refreshed?', type: 'conceptual', typeReason: 'no specific pattern', symbols: [], paths: [], languages: [], terms: ['tokens', 'refreshed'], isLong: false },
  context,
};

const seen: Array<{ name: string; args: unknown }> = [];
const tools: AgentTool[] = [
  {
    name: 'search_code',
    description: 'Search the code.',
    parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    async run(args) {
      seen.push({ name: 'search_code', args });
      return JSON.stringify({ hits: [{ path: 'src/auth/refresh.ts', start_line: 3, end_line: 9, snippet: 'export function refresh()' }] });
    },
  },
  {
    name: 'read_file_range',
    description: 'Read lines of a file.',
    parameters: { type: 'object', properties: { path: { type: 'string' }, start: { type: 'integer' }, end: { type: 'integer' } }, required: ['path'] },
    async run(args) {
      seen.push({ name: 'read_file_range', args });
      const p = (args as { path?: unknown }).path;
      if (typeof p !== 'string' || p.startsWith('..')) throw new VltError('PATH_OUTSIDE_WORKSPACE', `${String(p)} is outside the workspace`);
      if (p === 'big.txt') return 'x'.repeat(5000);
      return `${p}:40-42\n40 if (expired) {\n41   return renew(token)\n42 }`;
    },
  },
];

const call = (name: string, args: Record<string, unknown> | string, id?: string) => ({ ...(id ? { id } : {}), function: { name, arguments: args } });
type Msg = { role: string; content?: unknown; tool_call_id?: string; tool_calls?: Array<{ id: string; function: { name: string } }> };
const messagesOf = (r: FakeChatRequest): Msg[] => (r.messages ?? []) as Msg[];

describe('runAgent', () => {
  beforeEach(() => {
    seen.length = 0;
  });

  it('runs the tools the model calls and hands their results back', async () => {
    let second: Msg[] = [];
    fake.script.chat.push(
      { content: 'Let me look.', tool_calls: [call('search_code', { query: 'refresh token' }, 'c1'), call('read_file_range', { path: 'src/auth/session.ts', start: 40, end: 42 }, 'c2')] },
      (r) => {
        second = messagesOf(r);
        return { content: 'Tokens are refreshed by refresh() [src/auth/refresh.ts:5] when parseToken [src/auth/token.ts:12] finds them expired [src/auth/session.ts:41]; see also [src/ghost.ts:1].' };
      },
    );
    const events: OracleEvent[] = [];
    const res = await runAgent(req, { chat, prompts, tools, onEvent: (e) => events.push(e) });

    expect(res.stopped).toBe('answer');
    expect(res.turns).toBe(2);
    expect(fake.counts.chat).toBe(2);
    expect(seen).toEqual([
      { name: 'search_code', args: { query: 'refresh token' } },
      { name: 'read_file_range', args: { path: 'src/auth/session.ts', start: 40, end: 42 } },
    ]);
    expect(res.toolCalls.map((t) => [t.name, t.ok])).toEqual([
      ['search_code', true],
      ['read_file_range', true],
    ]);
    expect(res.toolCalls[0]!.args).toBe('{"query":"refresh token"}');
    expect(events).toEqual([
      { type: 'tool', name: 'search_code', args: '{"query":"refresh token"}' },
      { type: 'tool', name: 'read_file_range', args: '{"path":"src/auth/session.ts","start":40,"end":42}' },
      { type: 'text', text: res.text },
    ]);

    // The second request carries the assistant's calls and each tool's answer under its id.
    const assistant = second.find((m) => m.role === 'assistant');
    expect(assistant?.tool_calls?.map((c) => [c.id, c.function.name])).toEqual([
      ['c1', 'search_code'],
      ['c2', 'read_file_range'],
    ]);
    const answers = second.filter((m) => m.role === 'tool');
    expect(answers.map((m) => m.tool_call_id)).toEqual(['c1', 'c2']);
    expect(JSON.parse(String(answers[0]!.content))).toEqual({ hits: [{ path: 'src/auth/refresh.ts', start_line: 3, end_line: 9, snippet: 'export function refresh()' }] });
    expect(answers[1]!.content).toBe('src/auth/session.ts:40-42\n40 if (expired) {\n41   return renew(token)\n42 }');

    // Citations: the context, the JSON hit and the plain location are valid; the ghost is not.
    expect(res.citations.map((c) => c.citation)).toEqual(['[src/auth/refresh.ts:5]', '[src/auth/token.ts:12]', '[src/auth/session.ts:41]']);
    expect(res.unknownCitations).toEqual(['[src/ghost.ts:1]']);

    const first = fake.calls[0]!.body as { tools: Array<{ function: { name: string } }>; messages: Msg[]; stream?: boolean };
    expect(first.tools.map((t) => t.function.name)).toEqual(['search_code', 'read_file_range']);
    expect(first.stream).toBeFalsy();
    const system = String(first.messages[0]!.content);
    expect(system).toContain('- search_code: Search the code.\n- read_file_range: Read lines of a file.');
    expect(system).toContain(`at most ${AGENT_MAX_TURNS} turns`);
    expect(system).toContain('### [src/auth/token.ts:10-30] (primary)\nexport function parseToken');
    expect(first.messages[1]).toEqual({ role: 'user', content: 'How are tokens refreshed?' });
  });

  it('answers bad JSON, unknown tools and tool failures with errors the model reads', async () => {
    let answers: unknown[] = [];
    fake.script.chat.push(
      { tool_calls: [call('search_code', '{not json'), call('delete_repo', {}), call('read_file_range', { path: '../etc/passwd' })] },
      (r) => {
        answers = messagesOf(r)
          .filter((m) => m.role === 'tool')
          .map((m) => JSON.parse(String(m.content)) as unknown);
        return { content: 'Not found in the provided context.' };
      },
    );
    const res = await runAgent(req, { chat, prompts, tools });
    expect(answers).toEqual([
      { error: 'USAGE: the arguments are not valid JSON' },
      { error: 'USAGE: unknown tool delete_repo; use one of search_code, read_file_range' },
      { error: 'PATH_OUTSIDE_WORKSPACE: ../etc/passwd is outside the workspace' },
    ]);
    expect(res.toolCalls.map((t) => [t.name, t.ok])).toEqual([
      ['search_code', false],
      ['delete_repo', false],
      ['read_file_range', false],
    ]);
    expect(seen).toEqual([{ name: 'read_file_range', args: { path: '../etc/passwd' } }]);
    expect(res).toMatchObject({ stopped: 'answer', turns: 2, text: 'Not found in the provided context.', citations: [], unknownCitations: [] });
  });

  it('withdraws the tools on the last turn and streams the forced answer', async () => {
    fake.script.chat.push(
      { tool_calls: [call('search_code', { query: 'a' })] },
      { tool_calls: [call('search_code', { query: 'b' })] },
      { content: 'Forced: refresh lives in [src/auth/refresh.ts:3-9].' },
      { tool_calls: [call('search_code', { query: 'never' })] },
    );
    const events: OracleEvent[] = [];
    const res = await runAgent(req, { chat, prompts, tools, maxTurns: 3, onEvent: (e) => events.push(e) });
    expect(res.stopped).toBe('max_turns');
    expect(res.turns).toBe(3);
    expect(fake.counts.chat).toBe(3);
    expect(res.text).toBe('Forced: refresh lives in [src/auth/refresh.ts:3-9].');
    const texts = events.filter((e) => e.type === 'text').map((e) => (e.type === 'text' ? e.text : ''));
    expect(texts.length).toBeGreaterThan(1);
    expect(texts.join('')).toBe(res.text);
    expect(res.citations.map((c) => c.citation)).toEqual(['[src/auth/refresh.ts:3-9]']);
    const bodies = fake.calls.map((c) => c.body as { tools?: unknown[]; stream?: boolean; messages: Msg[] });
    expect(bodies.map((b) => b.tools?.length ?? 0)).toEqual([2, 2, 0]);
    expect(bodies.map((b) => b.stream === true)).toEqual([false, false, true]);
    expect(bodies[2]!.messages.filter((m) => m.role === 'tool')).toHaveLength(2);
    expect(String(bodies[0]!.messages[0]!.content)).toContain('at most 3 turns');
  });

  it('cuts long tool results with a note', async () => {
    let answer = '';
    fake.script.chat.push({ tool_calls: [call('read_file_range', { path: 'big.txt' })] }, (r) => {
      answer = String(messagesOf(r).find((m) => m.role === 'tool')?.content);
      return { content: 'Done.' };
    });
    const res = await runAgent(req, { chat, prompts, tools, maxToolResultChars: 1000 });
    expect(answer.startsWith('x'.repeat(1000) + '\n… [cut: the first 1000 of 5000 characters')).toBe(true);
    expect(answer).not.toContain('x'.repeat(1001));
    expect(res.toolCalls[0]).toMatchObject({ name: 'read_file_range', ok: true, chars: 5000 });
  });

  it('lets a failing model reach the caller', async () => {
    fake.script.chat.push({ tool_calls: [call('search_code', { query: 'a' })] });
    fake.fail('chat', '400', 1);
    await expect(runAgent(req, { chat, prompts, tools })).rejects.toMatchObject({ code: 'LLM_FAILED' });
    expect(fake.counts.chat).toBe(1);
  });

  it('fails when the model ends without an answer', async () => {
    fake.script.chat.push({ content: '' });
    await expect(runAgent(req, { chat, prompts, tools })).rejects.toMatchObject({ code: 'LLM_FAILED', message: expect.stringMatching(/without an answer after 1 turn$/) as unknown });
  });

  it('stops on cancellation', async () => {
    const ac = new AbortController();
    const cancelling: AgentTool = {
      name: 'search_code',
      description: 'Search.',
      parameters: { type: 'object' },
      async run() {
        ac.abort();
        throw new VltError('CANCELLED', 'search cancelled');
      },
    };
    fake.script.chat.push({ tool_calls: [call('search_code', { query: 'a' })] }, { content: 'never' });
    await expect(runAgent(req, { chat, prompts, tools: [cancelling], signal: ac.signal })).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(fake.counts.chat).toBe(1);
  });
});
