/**
 * `@oracle` in VS Code's chat (src/vscode/participant.ts), driven through the handler it
 * registers: a question, `/where`, `/why` and `/map`, answered by a real `vlt lsp` server over
 * JSON-RPC. The editor's side is a stand-in `vscode` module that records what the handler
 * registers and writes to the chat stream (markdown, progress, anchors, references), since the
 * participant API needs a chat provider that the test VS Code does not have. Checks that the
 * markdown renders whole through marked, that every anchor points at a cited file and line, and
 * that the answer lands in the shared session the chat view and MCP use.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { marked } from 'marked';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { askEventNotification, sessionsRequest, type AskEvent } from '../../src/protocol/lsp';
import { closeSessions, start, type Session } from '../helpers/lsp-session';

interface FakeUri {
  path: string;
}
const registered: Array<{ id: string; handler: (...args: unknown[]) => Promise<unknown> }> = [];

vi.mock('vscode', () => {
  class Position {
    constructor(
      readonly line: number,
      readonly character: number,
    ) {}
  }
  class Location {
    constructor(
      readonly uri: FakeUri,
      readonly range: Position,
    ) {}
  }
  return {
    Position,
    Location,
    Uri: { joinPath: (base: FakeUri, ...parts: string[]) => ({ path: path.posix.join(base.path, ...parts) }) },
    window: { activeTextEditor: undefined },
    chat: {
      createChatParticipant: (id: string, handler: (...args: unknown[]) => Promise<unknown>) => {
        registered.push({ id, handler });
        return { id, dispose: () => undefined };
      },
    },
  };
});

const { registerChatParticipant, PARTICIPANT_ID } = await import('../../src/vscode/participant');

interface Recorded {
  markdown: string[];
  progress: string[];
  anchors: Array<{ path: string; line: number; title: string }>;
  references: string[];
}

function recorder(): { stream: unknown; out: Recorded } {
  const out: Recorded = { markdown: [], progress: [], anchors: [], references: [] };
  const stream = {
    markdown: (s: string) => void out.markdown.push(s),
    progress: (s: string) => void out.progress.push(s),
    anchor: (loc: { uri: FakeUri; range: { line: number } }, title: string) => void out.anchors.push({ path: loc.uri.path, line: loc.range.line, title }),
    reference: (loc: { uri: FakeUri }) => void out.references.push(loc.uri.path),
  };
  return { stream, out };
}

const token = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose: () => undefined }) };
const log = { info: () => undefined, error: () => undefined, warn: () => undefined };

/** A stand-in for the extension's FolderServer over a real `vlt lsp` session. */
function folderServer(s: Session) {
  const listeners = new Map<string, (e: AskEvent) => void>();
  s.conn.onNotification(askEventNotification, (p) => listeners.get(p.askId)?.(p.event));
  return {
    folder: { uri: { path: s.dir } },
    status: s.statuses.at(-1),
    client: { sendRequest: (type: unknown, params: unknown) => s.conn.sendRequest(type as never, params as never) },
    onAskEvent: (askId: string, fn: (e: AskEvent) => void) => {
      listeners.set(askId, fn);
      return { dispose: () => void listeners.delete(askId) };
    },
  };
}

async function participant(): Promise<{ s: Session; ask: (prompt: string, command?: string) => Promise<{ result: Record<string, unknown>; out: Recorded }> }> {
  const s = await start('test/fixtures/oracle', { mcp: { enabled: false } });
  await s.waitStatus((st) => st.state === 'ready' && st.files > 0);
  const server = folderServer(s);
  registered.length = 0;
  const disposables = registerChatParticipant({ path: '/ext' } as never, () => server as never, log as never);
  expect(disposables).toHaveLength(1);
  expect(registered.map((r) => r.id)).toEqual([PARTICIPANT_ID]);
  const handler = registered[0]!.handler;
  return {
    s,
    ask: async (prompt, command) => {
      const { stream, out } = recorder();
      const result = (await handler({ prompt, command, model: undefined }, { history: [] }, stream, token)) as Record<string, unknown>;
      return { result, out };
    },
  };
}

/** Fenced blocks in rendered HTML must be balanced, and no fence may leak as text. */
function expectWholeMarkdown(md: string): void {
  const fences = md.split('\n').filter((l) => /^\s*```/.test(l)).length;
  expect(fences % 2, `unbalanced fences in:\n${md}`).toBe(0);
  const html = marked.parse(md, { async: false });
  expect(html).not.toMatch(/<p>[^<]*```/);
}

afterEach(async () => {
  await closeSessions();
});

describe('@oracle in VS Code chat', () => {
  it('answers a question with the evidence, anchors at the cited lines, and the shared session', async () => {
    const { s, ask } = await participant();
    const { result, out } = await ask('How are access tokens verified?');
    const md = out.markdown.join('');
    expect(md).toContain('src/auth/tokens.ts');
    expectWholeMarkdown(md);
    expect(out.progress).toContain('Searching code…');
    // Every anchor is a file of the workspace at a line inside it, and also a reference.
    expect(out.anchors.length).toBeGreaterThan(0);
    for (const a of out.anchors) {
      expect(a.path.startsWith(s.dir)).toBe(true);
      expect(existsSync(a.path)).toBe(true);
      expect(a.line).toBeGreaterThanOrEqual(0);
      expect(a.title).toMatch(/:\d+/);
    }
    expect(out.anchors.some((a) => a.path.endsWith('src/auth/tokens.ts'))).toBe(true);
    expect(out.references).toEqual(out.anchors.map((a) => a.path));
    // The answer is in the session the chat view and MCP share.
    const meta = result.metadata as { session: string; mode: string };
    expect(meta.mode).toBe('extractive');
    const sessions = await s.conn.sendRequest(sessionsRequest, {});
    expect(sessions.active).toBe(meta.session);
    expect(sessions.sessions.find((x) => x.id === meta.session)?.title).toBe('How are access tokens verified?');
  });

  it('/where turns a bare name into a where-used question; /map shows the repository map in one block', async () => {
    const { ask } = await participant();
    const where = await ask('verifyToken', 'where');
    const md = where.out.markdown.join('');
    expect(md).toMatch(/verifyToken/);
    expectWholeMarkdown(md);
    const map = await ask('', 'map');
    const text = map.out.markdown.join('');
    expect(text.startsWith('```text\n')).toBe(true);
    expect(text).toMatch(/tokens\.ts/);
    expectWholeMarkdown(text);
  });

  it('an empty prompt gets a hint, not a request', async () => {
    const { ask } = await participant();
    const { out } = await ask('   ');
    expect(out.markdown.join('')).toMatch(/Ask a question about this codebase/);
    expect(out.anchors).toEqual([]);
  });
});
