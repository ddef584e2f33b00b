import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Memory } from '../../../src/core/memory';
import { OpenAIChatModel } from '../../../src/core/llm/openai-chat';
import { PromptLibrary } from '../../../src/core/llm/prompts';
import { silentLogger } from '../../../src/core/ports';
import { LIBRARIAN_MAX_TURNS, delegateLibrarianTool, librarianTools, runLibrarian } from '../../../src/core/tools/librarian';
import { invokeTool } from '../../../src/core/tools/definitions';
import type { ToolContext } from '../../../src/core/tools/definitions';
import { nodeWorkspaceFs } from '../../../src/node/fs';
import { startFakeOpenAI, type FakeChatRequest, type FakeOpenAI } from '../../helpers/fake-openai';
import { openMemory, PROMPTS_DIR, tempWorkspace } from './setup';

let fake: FakeOpenAI;
let ws: { dir: string; cleanup: () => void };

beforeAll(async () => {
  fake = await startFakeOpenAI();
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.reset();
  ws = tempWorkspace();
  const put = (rel: string, text: string) => {
    const abs = path.join(ws.dir, 'notes', rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, text);
  };
  put('inbox/cache-design.md', '---\ntitle: Cache design\nsummary: An LRU in front of the store.\n---\nDetails.');
  put('inbox/todo.md', '# Todo\n\nRevisit [[cache-design]] and [design](cache-design.md).');
  put('README-notes.md', '# Notes\n\nStart with [[cache-design]].');
});

afterEach(() => ws.cleanup());

function toolContext(memory: Memory): ToolContext {
  return { getEngine: () => Promise.reject(new Error('the Librarian must not open the engine')), getMemory: () => Promise.resolve(memory), fs: nodeWorkspaceFs, logger: silentLogger };
}

/** Runs the Librarian on `memory` with the fake server's model. */
function librarian(memory: Memory, task: string) {
  return runLibrarian(task, { chat: new OpenAIChatModel({ baseUrl: fake.baseURL, model: 'fake-chat', maxRetries: 0 }), prompts: new PromptLibrary(PROMPTS_DIR), ctx: toolContext(memory) });
}

const call = (name: string, args: Record<string, unknown>) => ({ tool_calls: [{ function: { name, arguments: args } }] });

/** The tool messages of the last chat request, parsed. */
function toolAnswers(req: FakeChatRequest): unknown[] {
  return (req.messages ?? []).filter((m) => m.role === 'tool').map((m) => JSON.parse(String(m.content)) as unknown);
}

describe('Librarian', () => {
  it('organises the vault through its tools and reports what changed', async () => {
    const memory = await openMemory(ws.dir, { fake, vaultRoot: 'notes' });
    let seenList: unknown;
    fake.script.chat.push(
      call('list_notes', { folder: 'inbox' }),
      (req) => {
        seenList = toolAnswers(req)[0];
        return call('read_note', { path: 'inbox/cache-design.md' });
      },
      call('move_note', { from: 'inbox/cache-design.md', to: 'architecture/cache-design.md' }),
      call('create_index', { folder: 'architecture' }),
      { content: 'Moved the cache design note to architecture/ and indexed the folder.' },
    );
    const res = await librarian(memory, 'File design notes from inbox/ under architecture/ and index it.');
    expect(res).toEqual({
      success: true,
      files_modified: ['README-notes.md', 'architecture/cache-design.md', 'architecture/index.md', 'inbox/cache-design.md', 'inbox/todo.md'],
      summary: 'Moved the cache design note to architecture/ and indexed the folder.',
      turns: 5,
    });
    expect(fake.counts.chat).toBe(5);
    // What an agent's list_notes answers, the same definition.
    expect(seenList).toMatchObject({
      notes: [
        { path: 'inbox/cache-design.md', title: 'Cache design', tags: [], read_only: false },
        { path: 'inbox/todo.md', title: 'Todo', tags: [], read_only: false },
      ],
      total: 2,
    });
    // It got the vault tools and nothing else, every turn.
    for (const c of fake.calls) {
      const tools = (c.body as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name);
      expect(tools).toEqual(['list_notes', 'read_note', 'write_note', 'move_note', 'create_index']);
    }
    const system = (fake.calls[0]!.body as { messages: Array<{ role: string; content: string }> }).messages[0]!;
    expect(system.role).toBe('system');
    expect(system.content).toMatch(/at most 10 turns/);
    // The move rewrote the links, on disk.
    expect(readFileSync(path.join(ws.dir, 'notes/inbox/todo.md'), 'utf8')).toBe('# Todo\n\nRevisit [[cache-design]] and [design](../architecture/cache-design.md).');
    expect(existsSync(path.join(ws.dir, 'notes/architecture/index.md'))).toBe(true);
    await memory.close();
  });

  it('hands tool errors back to the model, which can recover', async () => {
    const memory = await openMemory(ws.dir, { fake });
    let answers: unknown[] = [];
    fake.script.chat.push(
      { tool_calls: [{ function: { name: 'delete_note', arguments: { path: 'inbox/todo.md' } } }, { function: { name: 'read_note', arguments: '{not json' } }, { function: { name: 'write_note', arguments: { path: '../escape.md', content: 'x' } } }, { function: { name: 'read_note', arguments: { path: 'x', extra: 1 } } }] },
      (req) => {
        answers = toolAnswers(req);
        return { content: 'Could not do it.' };
      },
    );
    const res = await librarian(memory, 'Do something impossible.');
    expect(res).toMatchObject({ success: true, files_modified: [], turns: 2 });
    expect(answers).toEqual([
      // The Librarian deletes nothing: delete_note is no tool of its.
      { error: expect.stringMatching(/^USAGE: unknown tool delete_note; use one of list_notes, read_note, write_note, move_note, create_index/) as unknown },
      { error: 'USAGE: the arguments are not valid JSON' },
      { error: expect.stringMatching(/^PATH_OUTSIDE_VAULT: /) as unknown },
      { error: expect.stringMatching(/^USAGE: .*extra/) as unknown },
    ]);
    await memory.close();
  });

  it('stops after 10 turns', async () => {
    const memory = await openMemory(ws.dir, { fake, vaultRoot: 'notes' });
    fake.script.chat.push(...Array.from({ length: 15 }, () => call('list_notes', {})));
    const res = await librarian(memory, 'Loop forever.');
    expect(LIBRARIAN_MAX_TURNS).toBe(10);
    expect(res).toMatchObject({ success: false, turns: 10, files_modified: [] });
    expect(res.summary).toMatch(/stopped after 10 turns/);
    expect(fake.counts.chat).toBe(10);
    await memory.close();
  });

  it('reports a failing model as an unsuccessful run, keeping what it changed', async () => {
    const memory = await openMemory(ws.dir, { fake, vaultRoot: 'notes' });
    fake.script.chat.push(call('write_note', { path: 'new.md', content: '# New' }), () => ({ content: '' }));
    const ok = await librarian(memory, 'Write a note.');
    expect(ok).toMatchObject({ success: true, files_modified: ['new.md'], summary: 'finished without a report' });

    fake.reset();
    fake.fail('chat', '400', 1);
    const failed = await librarian(memory, 'Anything.');
    expect(failed).toMatchObject({ success: false, turns: 1 });
    expect(failed.summary).toMatch(/stopped on turn 1/);
    await memory.close();
  });

  it('describes its tools with JSON schemas', () => {
    const tools = librarianTools(toolContext({} as Memory));
    expect(tools.find((t) => t.name === 'move_note')?.parameters).toMatchObject({
      type: 'object',
      properties: { from: { type: 'string' }, to: { type: 'string' } },
      required: ['from', 'to'],
      additionalProperties: false,
    });
  });

  it('is the delegate_librarian tool: the configured model organises the vault; without one, LLM_NOT_CONFIGURED', async () => {
    const memory = await openMemory(ws.dir, { fake, vaultRoot: 'notes' });
    fake.script.chat.push(call('write_note', { path: 'decisions/cache.md', content: '# Cache\n\nAn LRU.' }), { content: 'Wrote decisions/cache.md.' });
    const model = { chat: new OpenAIChatModel({ baseUrl: fake.baseURL, model: 'fake-chat', maxRetries: 0 }), prompts: new PromptLibrary(PROMPTS_DIR) };
    const done = await invokeTool(delegateLibrarianTool, { ...toolContext(memory), getModel: () => Promise.resolve(model) }, { task: 'Record the cache decision.' });
    expect(done).toMatchObject({ ok: true, value: { success: true, files_modified: ['decisions/cache.md'], summary: 'Wrote decisions/cache.md.' } });
    const none = await invokeTool(delegateLibrarianTool, toolContext(memory), { task: 'Anything.' });
    expect(none.ok ? undefined : none.error.code).toBe('LLM_NOT_CONFIGURED');
    await memory.close();
  });
});
