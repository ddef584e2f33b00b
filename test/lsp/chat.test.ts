/**
 * The chat's server side through `vlt lsp`, as the VS Code view drives it: `vlt/ask` streams
 * its steps and text as `vlt/askEvent`, answers carry the cited lines (and a later check sees
 * them change), sessions are listed and switched, citations resolve, Stop cancels, and the
 * model path degrades to the evidence brief on failures. The model is the scripted fake
 * OpenAI server, reached by the real `openai` client inside the server.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CancellationTokenSource } from 'vscode-languageserver-protocol/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  askEventNotification,
  askRequest,
  citationTargetRequest,
  citedLinesRequest,
  modelsRequest,
  sessionEventsRequest,
  sessionsRequest,
  useSessionRequest,
  type AskEvent,
} from '../../src/protocol/lsp';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';
import { closeSessions, start, type Session } from '../helpers/lsp-session';

const FIXTURE = 'test/fixtures/oracle';
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});
afterEach(async () => {
  fake.reset();
  fake.delayMs = 0;
  await closeSessions();
});

const llmEnv = () => ({ VLT_LLM_BASE_URL: fake.baseURL, VLT_LLM_API_KEY: 'test-key', VLT_LLM_MODEL: 'fake-chat' });

/** Collects the `vlt/askEvent` notifications per ask id. */
function collect(s: Session): Map<string, AskEvent[]> {
  const events = new Map<string, AskEvent[]>();
  s.conn.onNotification(askEventNotification, (p) => void events.set(p.askId, [...(events.get(p.askId) ?? []), p.event]));
  return events;
}

async function ready(fixture: string, env: Record<string, string> = {}): Promise<Session> {
  const s = await start(fixture, { mcp: { enabled: true, port: 0 } }, undefined, env);
  await s.waitStatus((st) => st.state === 'ready' && st.files > 0 && st.mcp !== null);
  return s;
}

describe('the chat over vlt lsp', () => {
  it('without a model: streams the retrieval steps, answers with the evidence brief and records the cited lines', async () => {
    const s = await ready(FIXTURE);
    const events = collect(s);
    const models = await s.conn.sendRequest(modelsRequest);
    expect(models.choices.map((c) => c.id)).toEqual(['none']);
    expect(models.default).toBe('none');
    expect(models.reason).toMatch(/no language model/);

    const ans = await s.conn.sendRequest(askRequest, { question: 'How are access tokens verified?', askId: 'a1' });
    expect(ans.mode).toBe('extractive');
    expect(ans.noContext).toBe(false);
    expect(ans.answer).toContain('src/auth/tokens.ts');
    const steps = (events.get('a1') ?? []).filter((e) => e.type === 'step');
    expect(steps.some((e) => e.type === 'step' && e.name === 'code' && e.state === 'running')).toBe(true);
    expect(steps.some((e) => e.type === 'step' && e.name === 'code' && e.state === 'ok' && (e.results ?? 0) > 0)).toBe(true);

    // Every code citation of the answer has its lines and their hash.
    const cited = Object.entries(ans.cited);
    expect(cited.length).toBeGreaterThan(0);
    const [cite, lines] = cited.find(([c]) => c.includes('tokens.ts'))!;
    expect(lines.hash).toMatch(/^[0-9a-f]{16}$/);
    expect(lines.text).toMatch(/\d+│/);

    // The same lines now: same hash. After an edit above them: another hash (the view marks it stale).
    const [same] = await s.conn.sendRequest(citedLinesRequest, { items: [{ path: lines.path, start: lines.start, end: lines.end }] });
    expect(same?.hash).toBe(lines.hash);
    const file = path.join(s.dir, lines.path);
    writeFileSync(file, `// a new first line\n${readFileSync(file, 'utf8')}`);
    const [changed] = await s.conn.sendRequest(citedLinesRequest, { items: [{ path: lines.path, start: lines.start, end: lines.end }] });
    expect(changed?.hash).toBeDefined();
    expect(changed?.hash).not.toBe(lines.hash);

    // The citation opens the file at its lines.
    const target = await s.conn.sendRequest(citationTargetRequest, { citation: cite });
    expect(target).toMatchObject({ kind: 'file', path: lines.path, start: lines.start });
    expect(target.kind === 'file' && target.uri.endsWith(lines.path)).toBe(true);

    // The session picker lists the question.
    const sessions = await s.conn.sendRequest(sessionsRequest, {});
    expect(sessions.sessions.find((x) => x.id === sessions.active)?.title).toBe('How are access tokens verified?');
  });

  it('refuses citations and lines outside the workspace and in vlt state', async () => {
    const s = await ready(FIXTURE);
    const [outside, state] = await s.conn.sendRequest(citedLinesRequest, { items: [{ path: '../../etc/passwd', start: 1, end: 3 }, { path: '.vlt/mcp-token', start: 1, end: 1 }] });
    expect(outside?.hash).toBeUndefined();
    expect(outside?.text).toMatch(/outside the workspace/);
    expect(state?.hash).toBeUndefined();
    await expect(s.conn.sendRequest(citationTargetRequest, { citation: '[../../etc/passwd:1]' })).rejects.toThrow(/PATH_OUTSIDE_WORKSPACE|outside/);
    await expect(s.conn.sendRequest(citationTargetRequest, { citation: 'not a citation' })).rejects.toThrow(/USAGE/);
  });

  it('with a model: the text streams in order, the footer facts come back, and a 429 is retried', async () => {
    const s = await ready(FIXTURE, llmEnv());
    const events = collect(s);
    const models = await s.conn.sendRequest(modelsRequest);
    expect(models.choices.map((c) => [c.id, c.label])).toEqual([
      ['configured', 'fake-chat'],
      ['none', 'No model (evidence brief)'],
    ]);
    expect(models.default).toBe('configured');
    const reply = 'Tokens are verified by `verifyToken`, which checks the HMAC signature and the expiry [src/auth/tokens.ts:17-28].';
    fake.fail('chat', '429', 1);
    fake.script.chat.push(...Array.from({ length: 4 }, () => ({ content: reply })));
    const ans = await s.conn.sendRequest(askRequest, { question: 'How are access tokens verified?', askId: 'm1' });
    expect(ans.mode).toBe('llm');
    expect(ans.model).toBe('fake-chat');
    expect(ans.answer).toBe(reply);
    expect(ans.usage?.completionTokens).toBeGreaterThan(0);
    const text = (events.get('m1') ?? []).flatMap((e) => (e.type === 'text' ? [e.text] : []));
    expect(text.length).toBeGreaterThan(3);
    expect(text.join('')).toBe(reply);
    expect(ans.cited['[src/auth/tokens.ts:17-28]']?.hash).toBeDefined();
  });

  it('a failing model (500) or one that cites nothing degrades to the evidence brief', async () => {
    const s = await ready(FIXTURE, llmEnv());
    fake.fail('chat', '500', 20);
    const failed = await s.conn.sendRequest(askRequest, { question: 'How are access tokens verified?' });
    expect(failed.mode).toBe('extractive');
    expect(failed.degraded).toMatch(/language model failed/);
    fake.reset();
    fake.script.chat.push(...Array.from({ length: 4 }, () => ({ content: 'Tokens are verified somewhere, trust me.' })));
    const uncited = await s.conn.sendRequest(askRequest, { question: 'How are access tokens verified?' });
    expect(uncited.mode).toBe('extractive');
    expect(uncited.degraded).toMatch(/without citing/);
    expect(uncited.answer).toContain('src/auth/tokens.ts');
  });

  it('Stop cancels the question on the server, and the server goes on answering', async () => {
    const s = await ready(FIXTURE, llmEnv());
    fake.delayMs = 30_000;
    const cts = new CancellationTokenSource();
    const asked = s.conn.sendRequest(askRequest, { question: 'How are access tokens verified?', askId: 'c1' }, cts.token);
    await new Promise((r) => setTimeout(r, 1500));
    cts.cancel();
    await expect(asked).rejects.toThrow(/CANCELLED|cancel/i);
    fake.delayMs = 0;
    const next = await s.conn.sendRequest(askRequest, { question: 'How are access tokens verified?', noLlm: true });
    expect(next.mode).toBe('extractive');
  });

  it('sessions are shared: an agent over MCP follows up on the chat, and the chat sees the agent in the session', async () => {
    const s = await ready(FIXTURE);
    const { id } = await s.conn.sendRequest(useSessionRequest, {});
    expect(id).toMatch(/^chat-/);
    await s.conn.sendRequest(askRequest, { question: 'Where is verifyToken defined?', session: id });
    const st = s.statuses.at(-1)!;
    const client = new Client({ name: 'test-agent', version: '2.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(st.mcp!.url), { requestInit: { headers: { Authorization: `Bearer ${st.mcp!.token}` } } }));
    try {
      const res = await client.callTool({ name: 'ask_oracle', arguments: { question: 'what calls it?' } });
      expect(res.isError).toBeFalsy();
      expect(JSON.stringify(res.structuredContent)).toContain('verifyToken');
    } finally {
      await client.close();
    }
    const recorded = await s.conn.sendRequest(sessionEventsRequest, {});
    expect(recorded.id).toBe(id);
    expect(recorded.events.some((e) => e.kind === 'tool_call' && e.author.startsWith('test-agent') && e.text.includes('what calls it?'))).toBe(true);
    expect(recorded.events.some((e) => e.kind === 'tool_call' && e.author.endsWith(' chat') && e.text.includes('verifyToken'))).toBe(true);
    const list = await s.conn.sendRequest(sessionsRequest, {});
    expect(list.active).toBe(id);
    expect(list.sessions[0]?.title).toBe('Where is verifyToken defined?');
  });
});

