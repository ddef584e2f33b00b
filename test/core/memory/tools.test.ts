import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Memory } from '../../../src/core/memory';
import { silentLogger } from '../../../src/core/ports';
import { invokeTool, type ToolContext, type ToolDefinition } from '../../../src/core/tools/definitions';
import { MEMORY_TOOLS } from '../../../src/core/tools/memory-tools';
import { nodeWorkspaceFs } from '../../../src/node/fs';
import { openMemory, tempWorkspace } from './setup';

let ws: { dir: string; cleanup: () => void };
let memory: Memory;
let opens = 0;

const ctx: ToolContext = {
  getEngine: () => Promise.reject(new Error('the memory tools must not open the engine')),
  getMemory: async () => {
    opens++;
    return memory;
  },
  fs: nodeWorkspaceFs,
  logger: silentLogger,
  author: 'claude-code@1.0',
};
const tools: readonly ToolDefinition[] = MEMORY_TOOLS;

beforeEach(async () => {
  ws = tempWorkspace();
  mkdirSync(path.join(ws.dir, 'docs'), { recursive: true });
  writeFileSync(path.join(ws.dir, 'docs', 'arch.md'), `---\ntitle: Architecture\ntags: [design]\n---\n# Architecture\n\nThe engine is in src/core. ${'Long text. '.repeat(3000)}\n`);
  memory = await openMemory(ws.dir);
  opens = 0;
});

afterEach(async () => {
  await memory.close();
  ws.cleanup();
});

async function call(name: string, args: unknown) {
  const def = tools.find((t) => t.name === name);
  if (!def) throw new Error(`no tool ${name}`);
  return invokeTool(def, ctx, args);
}

async function ok(name: string, args: unknown): Promise<Record<string, unknown>> {
  const res = await call(name, args);
  if (!res.ok) throw new Error(`${name} failed: ${res.error.code} ${res.error.message}`);
  return res.value as Record<string, unknown>;
}

describe('memory tools', () => {
  it('lists every tool once, each field described, with honest annotations', () => {
    expect(tools.map((t) => t.name)).toEqual(['list_notes', 'read_note', 'write_note', 'delete_note', 'search_notes', 'get_backlinks', 'get_tags', 'move_note', 'create_index', 'thread_push', 'thread_read', 'thread_seek', 'thread_list']);
    for (const t of tools) {
      expect(t.title).toBeTruthy();
      expect(t.description.length).toBeGreaterThan(40);
      const schema = z.toJSONSchema(t.inputSchema) as { properties?: Record<string, { description?: string }> };
      for (const [field, prop] of Object.entries(schema.properties ?? {})) expect(prop.description, `${t.name}.${field}`).toBeTruthy();
    }
    const readOnly = tools.filter((t) => t.annotations.readOnlyHint).map((t) => t.name);
    expect(readOnly).toEqual(['list_notes', 'read_note', 'search_notes', 'get_backlinks', 'get_tags', 'thread_read', 'thread_seek', 'thread_list']);
    expect(tools.find((t) => t.name === 'move_note')?.annotations.destructiveHint).toBe(true);
    expect(tools.find((t) => t.name === 'delete_note')?.annotations.destructiveHint).toBe(true);
  });

  it('writes, reads, searches, backlinks and tags notes', async () => {
    expect(await ok('write_note', { path: 'decisions/cache', content: '# Cache\n\nWe use an LRU. See [[arch]]. #perf' })).toMatchObject({ path: 'decisions/cache.md', created: true });
    expect(((await ok('search_notes', { query: 'LRU' })).hits as Array<{ path: string }>).map((h) => h.path)).toEqual(['decisions/cache.md']);
    expect(await ok('get_backlinks', { path: 'arch' })).toMatchObject({ note: 'docs/arch.md', backlinks: [{ path: 'decisions/cache.md', line: 3 }] });
    expect((await ok('get_tags', {})).tags).toEqual([
      { tag: 'design', count: 1 },
      { tag: 'perf', count: 1 },
    ]);
    expect((await ok('list_notes', {})).total).toBe(2);
    expect(await ok('delete_note', { path: 'decisions/cache.md' })).toEqual({ path: 'decisions/cache.md' });
    expect(opens).toBeGreaterThan(0);
  });

  it('moves a note, rewriting the links to it, and writes a folder index that lists it', async () => {
    await ok('write_note', { path: 'ideas/lru', content: '# LRU\n\nEvict the least recently used entry.' });
    await ok('write_note', { path: 'decisions/why-lru', content: '# Why\n\nSee [[ideas/lru]].' });
    const moved = await ok('move_note', { from: 'ideas/lru.md', to: 'decisions/' });
    expect(moved).toMatchObject({ from: 'ideas/lru.md', to: 'decisions/lru.md', links_rewritten: 1 });
    const why = (await ok('read_note', { path: 'decisions/why-lru.md' })).content as string;
    expect(why).not.toContain('ideas/lru');
    expect(why).toMatch(/\[\[(decisions\/)?lru\]\]/);
    expect(await ok('create_index', { folder: 'decisions' })).toEqual({ path: 'decisions/index.md', notes: 2, created: true });
    expect(((await ok('read_note', { path: 'decisions/index.md' })).content as string)).toMatch(/LRU[\s\S]*Why|Why[\s\S]*LRU/);
    const missing = await call('move_note', { from: 'nowhere.md', to: 'x.md' });
    expect(missing.ok || missing.error.code).toBe('NOT_FOUND');
    for (const p of ['decisions/lru.md', 'decisions/why-lru.md', 'decisions/index.md']) await ok('delete_note', { path: p });
  });

  it('keeps read_note within max_tokens and says when it cut', async () => {
    const small = await ok('read_note', { path: 'docs/arch.md', max_tokens: 500 });
    expect(small.truncated).toBe(true);
    expect(JSON.stringify(small).length).toBeLessThanOrEqual(500 * 4);
    expect(small.frontmatter).toEqual({ title: 'Architecture', tags: ['design'] });
    const big = await ok('read_note', { path: 'arch', max_tokens: 20_000 });
    expect(big.truncated).toBe(false);
  });

  it('pages list_notes with a cursor tied to its arguments', async () => {
    for (let i = 0; i < 5; i++) await ok('write_note', { path: `n${i}`, content: `# ${i}` });
    const first = await ok('list_notes', { limit: 4 });
    expect((first.notes as unknown[]).length).toBe(4);
    const second = await ok('list_notes', { limit: 4, cursor: first.next_cursor });
    expect((second.notes as unknown[]).length).toBe(2);
    expect(second.next_cursor).toBeUndefined();
    const wrong = await call('list_notes', { limit: 3, cursor: first.next_cursor });
    expect(wrong.ok || wrong.error.code).toBe('USAGE');
  });

  it('pushes with the client as author, reads lazily, seeks and lists', async () => {
    expect(await ok('thread_push', { thread: 'auth', text: 'Chose JWT for the API.' })).toMatchObject({ thread: 'auth', seq: 1, author: 'claude-code@1.0' });
    expect(await ok('thread_push', { thread: 'auth', text: 'Sessions rejected.', author: 'user' })).toMatchObject({ seq: 2, author: 'user' });
    const read = await ok('thread_read', { thread: 'auth' });
    expect(read).toMatchObject({ thread: 'auth', entry_count: 2, summary: { kind: 'extractive', newly_summarized: 2 } });
    expect((read.entries as unknown[]).length).toBe(2);
    expect(((await ok('thread_seek', { query: 'JWT' })).hits as Array<{ seq: number }>)[0]!.seq).toBe(1);
    expect(((await ok('thread_list', {})).threads as Array<{ thread: string }>).map((t) => t.thread)).toEqual(['auth']);
  });

  it('answers bad input with errors the model can act on', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['read_note', { path: '../../etc/passwd' }, 'PATH_OUTSIDE_VAULT'],
      ['read_note', { path: 'nope' }, 'NOT_FOUND'],
      ['write_note', { path: 'docs/arch.md', content: 'x' }, 'READ_ONLY'],
      ['write_note', { path: 'x', content: 'x', sneaky: true }, 'USAGE'],
      ['thread_push', { thread: 'bad name!', text: 'x' }, 'USAGE'],
      ['thread_read', { thread: 'never' }, 'NOT_FOUND'],
      ['search_notes', { query: '' }, 'USAGE'],
    ];
    for (const [name, args, code] of cases) {
      const res = await call(name, args);
      expect(res.ok ? 'ok' : res.error.code, `${name} ${JSON.stringify(args)}`).toBe(code);
    }
  });
});
