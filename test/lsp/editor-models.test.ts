/**
 * The editor's language models through `vlt lsp`, as the VS Code extension serves them: the
 * test client plays the editor and answers `vlt/editor.chatModels` and `vlt/editor.chat`,
 * streaming its reply as `vlt/editor.chatDelta` notifications. The chat's model picker lists
 * them beside the configured model; a question that names one is answered by it, in agent
 * mode with tool calls too; a refusal (no consent) degrades to the evidence brief with the
 * editor's reason; Stop cancels the editor's request; an untrusted workspace uses none.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CancellationTokenSource, type CancellationToken, type ProtocolConnection } from 'vscode-languageserver-protocol/node';
import {
  askEventNotification,
  askRequest,
  editorChatDeltaNotification,
  editorChatModelsRequest,
  editorChatRequest,
  modelsRequest,
  type AskEvent,
  type EditorAnswer,
  type EditorChatParams,
  type EditorChatResult,
  type InitializationOptions,
} from '../../src/protocol/lsp';
import { closeSessions, start, type Session } from '../helpers/lsp-session';

const FIXTURE = 'test/fixtures/oracle';
const CITED = 'Tokens are verified by `verifyToken`, which checks the HMAC signature and the expiry [src/auth/tokens.ts:17-28].';

afterEach(async () => {
  await closeSessions();
});

/** The editor's side: its models, and a script of replies (text split into deltas, or a refusal, or tool calls). */
interface EditorScript {
  models: Array<{ id: string; name: string; vendor: string; family: string; maxInputTokens: number }>;
  replies: Array<{ text: string } | { refuse: string } | { toolCalls: Array<{ id: string; name: string; arguments: string }> } | { hang: true }>;
  requests: EditorChatParams[];
  cancelled: string[];
}

function playEditor(conn: ProtocolConnection, script: EditorScript): void {
  conn.onRequest(editorChatModelsRequest, (): EditorAnswer<typeof script.models> => ({ ok: true, value: script.models, server: 'test editor' }));
  conn.onRequest(editorChatRequest, async (p: EditorChatParams, token: CancellationToken): Promise<EditorAnswer<EditorChatResult>> => {
    script.requests.push(p);
    const reply = script.replies.shift() ?? { text: CITED };
    if ('refuse' in reply) return { ok: false, reason: reply.refuse };
    if ('hang' in reply) {
      await new Promise<void>((resolve) => token.onCancellationRequested(() => resolve()));
      script.cancelled.push(p.requestId);
      return { ok: false, reason: 'cancelled' };
    }
    if ('toolCalls' in reply) return { ok: true, value: { text: '', toolCalls: reply.toolCalls, finishReason: 'tool_calls' }, server: 'test editor' };
    const words = reply.text.split(/(?<= )/);
    for (const w of words) await conn.sendNotification(editorChatDeltaNotification, { requestId: p.requestId, text: w });
    return { ok: true, value: { text: reply.text, toolCalls: [], finishReason: 'stop', usage: { promptTokens: 900, completionTokens: 40, totalTokens: 940 } }, server: 'test editor' };
  });
}

async function withEditor(script: EditorScript, init: InitializationOptions = {}): Promise<Session> {
  const s = await start(FIXTURE, { editorModels: true, ...init }, (conn) => playEditor(conn, script));
  await s.waitStatus((st) => st.state === 'ready' && st.files > 0);
  return s;
}

const script = (replies: EditorScript['replies'] = []): EditorScript => ({
  models: [{ id: 'copilot-gpt-4o', name: 'GPT-4o', vendor: 'copilot', family: 'gpt-4o', maxInputTokens: 64_000 }],
  replies,
  requests: [],
  cancelled: [],
});

describe("the editor's language models over vlt lsp", () => {
  it('lists them beside the brief, answers with the one a question names, streaming its deltas in order', async () => {
    const ed = script([{ text: CITED }]);
    const s = await withEditor(ed);
    const models = await s.conn.sendRequest(modelsRequest);
    expect(models.choices.map((c) => c.id)).toEqual(['editor:copilot-gpt-4o', 'none']);
    expect(models.default).toBe('editor:copilot-gpt-4o');
    expect(models.reason).toMatch(/no language model is configured/);

    const events: AskEvent[] = [];
    s.conn.onNotification(askEventNotification, (p) => void events.push(p.event));
    const ans = await s.conn.sendRequest(askRequest, { question: 'How are access tokens verified?', askId: 'e1', model: 'editor:copilot-gpt-4o' });
    expect(ans.mode).toBe('llm');
    expect(ans.model).toBe('GPT-4o');
    expect(ans.answer).toBe(CITED);
    expect(ans.usage).toEqual({ promptTokens: 900, completionTokens: 40 });
    const text = events.flatMap((e) => (e.type === 'text' ? [e.text] : []));
    expect(text.length).toBeGreaterThan(5);
    expect(text.join('')).toBe(CITED);

    // The editor got the evidence to answer from, and the consent prompt's justification.
    const req = ed.requests[0]!;
    expect(req.model).toBe('copilot-gpt-4o');
    expect(req.justification).toMatch(/Vlt Oracle/);
    expect(JSON.stringify(req.messages)).toContain('How are access tokens verified?');
    expect(JSON.stringify(req.messages)).toContain('src/auth/tokens.ts');
  });

  it('a refusal (no consent) degrades to the evidence brief and says why', async () => {
    const ed = script([{ refuse: 'NoPermissions: the user did not allow this extension to use GPT-4o' }, { refuse: 'NoPermissions: the user did not allow this extension to use GPT-4o' }]);
    const s = await withEditor(ed);
    const ans = await s.conn.sendRequest(askRequest, { question: 'How are access tokens verified?', model: 'editor:copilot-gpt-4o' });
    expect(ans.mode).toBe('extractive');
    expect(ans.degraded).toMatch(/NoPermissions/);
    expect(ans.answer).toContain('src/auth/tokens.ts');
  });

  it('a model the editor no longer offers is a clear error', async () => {
    const s = await withEditor(script());
    await expect(s.conn.sendRequest(askRequest, { question: 'How are access tokens verified?', model: 'editor:gone' })).rejects.toThrow(/NOT_FOUND: the editor offers no model gone/);
    await expect(s.conn.sendRequest(askRequest, { question: 'How are access tokens verified?', model: 'gpt-5' })).rejects.toThrow(/USAGE: unknown model gpt-5/);
  });

  it('agent mode: the editor model calls the engine tools, then answers citing what they found', async () => {
    const ed = script([{ toolCalls: [{ id: 'call-1', name: 'find_definition', arguments: JSON.stringify({ symbol: 'verifyToken' }) }] }, { text: CITED }]);
    const s = await withEditor(ed);
    const ans = await s.conn.sendRequest(askRequest, { question: 'How are access tokens verified?', model: 'editor:copilot-gpt-4o', agent: true });
    expect(ans.mode).toBe('agent');
    expect(ans.answer).toBe(CITED);
    expect(ed.requests[0]?.tools?.map((t) => t.name)).toContain('find_definition');
    // The second request carries the tool call and its result, answered by id.
    const second = ed.requests[1]!;
    expect(second.messages.some((m) => m.role === 'assistant' && m.toolCalls?.[0]?.id === 'call-1')).toBe(true);
    const result = second.messages.find((m) => m.role === 'tool');
    expect(result).toMatchObject({ role: 'tool', toolCallId: 'call-1' });
    expect(result && 'content' in result ? result.content : '').toContain('src/auth/tokens.ts');
  });

  it("Stop cancels the editor's request", async () => {
    const ed = script([{ hang: true }]);
    const s = await withEditor(ed);
    const cts = new CancellationTokenSource();
    const asked = s.conn.sendRequest(askRequest, { question: 'How are access tokens verified?', model: 'editor:copilot-gpt-4o' }, cts.token);
    for (let i = 0; i < 100 && ed.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(ed.requests).toHaveLength(1);
    cts.cancel();
    await expect(asked).rejects.toThrow(/CANCELLED|cancel/i);
    for (let i = 0; i < 50 && ed.cancelled.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(ed.cancelled).toEqual([ed.requests[0]!.requestId]);
  });

  it('an untrusted workspace offers no model, the editor’s included', async () => {
    const ed = script();
    const s = await withEditor(ed, { restricted: true });
    const models = await s.conn.sendRequest(modelsRequest);
    expect(models.choices.map((c) => c.id)).toEqual(['none']);
    expect(models.reason).toMatch(/not trusted/);
    await expect(s.conn.sendRequest(askRequest, { question: 'How are access tokens verified?', model: 'editor:copilot-gpt-4o' })).rejects.toThrow(/RESTRICTED/);
    expect(ed.requests).toHaveLength(0);
  });
});
