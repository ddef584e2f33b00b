/**
 * Memory tied to code: a thread entry or note that names a file or a definition says so when
 * that code changed after it was written (thread_read, thread_seek, read_note, search_notes),
 * and names nothing it cannot pin to one file.
 */
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/core/config';
import { codeChangedSince, filesNamedIn } from '../../../src/core/context/memory-freshness';
import { Engine } from '../../../src/core/engine';
import { Memory } from '../../../src/core/memory';
import { Oracle } from '../../../src/core/oracle/oracle';
import { silentLogger } from '../../../src/core/ports';
import { invokeTool, type ToolContext, type ToolDefinition } from '../../../src/core/tools/definitions';
import { MEMORY_TOOLS } from '../../../src/core/tools/memory-tools';
import { nodeWorkspaceFs } from '../../../src/node/fs';
import { tempDir } from '../../helpers/cli';

let dir: string;
let engine: Engine;
let memory: Memory;
let ctx: ToolContext;
/** A memory tool by name, as a host looks it up (the answer's type is checked below by hand). */
const tool = (name: string) => MEMORY_TOOLS.find((t) => t.name === name)! as unknown as ToolDefinition;

function write(rel: string, text: string): void {
  mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  writeFileSync(path.join(dir, rel), text);
}

/** Sets a file's modification time, in milliseconds since the epoch. */
function touch(rel: string, ms: number): void {
  utimesSync(path.join(dir, rel), ms / 1000, ms / 1000);
}

const T0 = Date.UTC(2026, 0, 1);

beforeAll(async () => {
  dir = tempDir();
  write('src/auth/session.ts', 'export class SessionStore {\n  refresh(): void {}\n}\n');
  write('src/auth/tokens.ts', 'export function rotateToken(t: string): string {\n  return t;\n}\n');
  write('src/a/util.ts', 'export function helper(): number {\n  return 1;\n}\n');
  write('src/b/util.ts', 'export function helper(): number {\n  return 2;\n}\n');
  for (const f of ['src/auth/session.ts', 'src/auth/tokens.ts', 'src/a/util.ts', 'src/b/util.ts']) touch(f, T0);
  engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null, parseWorkers: 0 }, 'write');
  await engine.index();
  memory = await Memory.open(dir, { logger: silentLogger, config: defaultConfig(), promptsDir: path.resolve('prompts') });
  ctx = { getEngine: () => Promise.resolve(engine), peekEngine: () => Promise.resolve(engine), getMemory: () => Promise.resolve(memory), fs: nodeWorkspaceFs, logger: silentLogger };
}, 60_000);

afterAll(async () => {
  await memory?.close();
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('memory tied to code', () => {
  it('finds the files a text names: paths, definitions in code spans, Type.member, never an ambiguous name', () => {
    expect(filesNamedIn(engine, 'Moved the check into src/auth/tokens.ts (see [session](src/auth/session.ts)).')).toEqual(['src/auth/tokens.ts', 'src/auth/session.ts']);
    expect(filesNamedIn(engine, 'SessionStore.refresh now retries; `rotateToken` too.')).toEqual(expect.arrayContaining(['src/auth/session.ts', 'src/auth/tokens.ts']));
    // `helper` is defined in two files; a plain word is not a reference; an unknown path is nothing.
    expect(filesNamedIn(engine, 'The `helper` and the session, in docs/none.ts.')).toEqual([]);
  });

  it('lists the named files changed after the text was written, newest first', async () => {
    touch('src/auth/tokens.ts', T0 + 10 * 86_400_000);
    const changed = await codeChangedSince(engine, nodeWorkspaceFs, 'src/auth/tokens.ts and src/auth/session.ts', T0 + 86_400_000);
    expect(changed).toEqual([{ path: 'src/auth/tokens.ts', changed_at: new Date(T0 + 10 * 86_400_000).toISOString() }]);
    expect(await codeChangedSince(engine, nodeWorkspaceFs, 'src/auth/tokens.ts', T0 + 20 * 86_400_000)).toEqual([]);
  });

  it('flags thread entries and notes in thread_read, thread_seek, read_note and search_notes, and only those', async () => {
    await memory.threads.push('auth', 'Decided: `rotateToken` keeps the old token valid for a minute.');
    await memory.threads.push('auth', 'Nothing about code here, only a plan.');
    // The code changes after the entries were written.
    touch('src/auth/tokens.ts', Date.now() + 60_000);
    const read = await invokeTool(tool('thread_read'), ctx, { thread: 'auth' });
    expect(read.ok).toBe(true);
    const entries = read.ok ? (read.value as { entries: Array<{ text: string; code_changed?: Array<{ path: string }> }> }).entries : [];
    expect(entries.map((e) => e.code_changed?.map((c) => c.path))).toEqual([['src/auth/tokens.ts'], undefined]);
    const seek = await invokeTool(tool('thread_seek'), ctx, { query: 'rotateToken old token' });
    expect(seek.ok && (seek.value as { hits: Array<{ code_changed?: unknown[] }> }).hits[0]?.code_changed).toHaveLength(1);

    await memory.vault.write('decisions/tokens.md', '# Tokens\n\nRotation lives in src/auth/tokens.ts.\n');
    const note = await invokeTool(tool('read_note'), ctx, { path: 'decisions/tokens.md' });
    expect(note.ok && (note.value as { code_changed?: Array<{ path: string }> }).code_changed?.map((c) => c.path)).toEqual(['src/auth/tokens.ts']);
    const found = await invokeTool(tool('search_notes'), ctx, { query: 'rotation' });
    expect(found.ok && (found.value as { hits: Array<{ code_changed?: unknown[] }> }).hits[0]?.code_changed).toHaveLength(1);

    // Without an index to ask, the same answers come without the flag.
    const bare = await invokeTool(tool('read_note'), { ...ctx, peekEngine: () => Promise.resolve(undefined) }, { path: 'decisions/tokens.md' });
    expect(bare.ok && 'code_changed' in bare.value).toBe(false);
  });

  it("says in the oracle's evidence that the code an entry names changed since", async () => {
    await memory.threads.push('tokens', 'Why rotateToken keeps a grace minute: clients retry with the old token. See src/auth/tokens.ts.');
    touch('src/auth/tokens.ts', Date.now() + 120_000);
    const oracle = new Oracle({ engine, logger: silentLogger, fs: nodeWorkspaceFs, memory });
    const ans = await oracle.ask('How does rotateToken handle the old token?', { noLlm: true, explain: true, noLog: true });
    const run = ans.explain?.runs.find((r) => r.name === 'threads');
    expect(run?.results.length).toBeGreaterThan(0);
    expect(ans.answer).toContain('The code this names changed after it was written: src/auth/tokens.ts');
  });
});
