/**
 * The pieces of the workspace server core that are not transport: the state gate, the chain
 * of language servers (the editor's first), and the writer lock a long-lived writer gives back
 * between commits.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/core/engine';
import { chainLanguageServers, type LanguageServers, type LspAnswer, type SourceRange } from '../../src/core/intel/lsp';
import { silentLogger } from '../../src/core/ports';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { StateGate } from '../../src/server/gate';
import { WorkspaceServer } from '../../src/server/workspace';
import { copyFixture } from '../helpers/cli';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe('StateGate', () => {
  it('runs an exclusive step after the readers in flight, and holds back readers that arrive meanwhile', async () => {
    const gate = new StateGate();
    const events: string[] = [];
    let releaseA!: () => void;
    const a = gate.read(() => new Promise<void>((r) => (releaseA = () => (events.push('a done'), r()))));
    const x = gate.exclusive(async () => {
      events.push('exclusive');
    });
    const b = gate.read(async () => {
      events.push('b');
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(events).toEqual([]);
    expect(gate.idle).toBe(false);
    releaseA();
    await Promise.all([a, x, b]);
    expect(events).toEqual(['a done', 'exclusive', 'b']);
    expect(gate.idle).toBe(true);
  });
});

function fakeServers(name: string, answer: (path: string) => LspAnswer<SourceRange[]>, languages = ['typescript']): LanguageServers & { calls: number } {
  const s = {
    calls: 0,
    serverFor: (l: string) => (languages.includes(l) ? { name, languages: [l as 'typescript'], state: 'ready' as const, detail: '', restarts: 0 } : undefined),
    definition: (pos: { path: string }) => {
      s.calls++;
      return Promise.resolve(answer(pos.path));
    },
    references: (pos: { path: string }) => {
      s.calls++;
      return Promise.resolve(answer(pos.path));
    },
    hover: () => Promise.resolve({ ok: true as const, value: null, server: name, ms: 0 }),
    diagnostics: () => Promise.resolve({ ok: true as const, value: [], server: name, ms: 0 }),
    status: () => [],
    dispose: () => Promise.resolve(),
  };
  return s;
}

describe('chainLanguageServers', () => {
  const loc = (p: string): SourceRange => ({ path: p, startLine: 1, startCol: 1, endLine: 1, endCol: 2 });
  const lang = (p: string) => (p.endsWith('.ts') ? ('typescript' as const) : p.endsWith('.go') ? ('go' as const) : undefined);

  it('answers from the first source with a non-empty answer, naming it', async () => {
    const editor = fakeServers('editor', () => ({ ok: true, value: [loc('a.ts')], server: 'TypeScript Language Features', ms: 1 }));
    const headless = fakeServers('tsserver', () => ({ ok: true, value: [loc('b.ts')], server: 'tsserver', ms: 1 }));
    const chain = chainLanguageServers([editor, headless], lang);
    const a = await chain.references({ path: 'x.ts', line: 1, col: 1 }, { timeoutMs: 1000, includeDeclaration: false });
    expect(a).toMatchObject({ ok: true, server: 'TypeScript Language Features', value: [loc('a.ts')] });
    expect(headless.calls).toBe(0);
  });

  it('asks the next source when the first fails or answers nothing, and skips sources without the language', async () => {
    const editor = fakeServers('editor', () => ({ ok: true, value: [], server: 'editor', ms: 1 }));
    const broken = fakeServers('broken', () => ({ ok: false, failure: 'crashed', reason: 'exit 1', ms: 1 }));
    const gopls = fakeServers('gopls', () => ({ ok: true, value: [loc('m.go')], server: 'gopls', ms: 1 }), ['go']);
    const chain = chainLanguageServers([editor, broken, gopls], lang);
    expect(await chain.definition({ path: 'x.ts', line: 1, col: 1 }, { timeoutMs: 1000 })).toMatchObject({ ok: false, failure: 'crashed' });
    expect(gopls.calls).toBe(0);
    expect(await chain.definition({ path: 'm.go', line: 1, col: 1 }, { timeoutMs: 1000 })).toMatchObject({ ok: true, server: 'gopls' });
    expect(chain.serverFor('rust')).toBeUndefined();
    expect(chain.serverFor('typescript')?.name).toBe('editor, then broken');
  });
});

describe('a long-lived writer and its lock', () => {
  const deps = { fs: nodeWorkspaceFs, logger: silentLogger, embeddingProvider: null, parseWorkers: 0 };
  const workspace = () => {
    const { dir, cleanup } = copyFixture('test/fixtures/lsp/ts-project');
    cleanups.push(cleanup);
    return dir;
  };

  it('gives the lock back after a commit, so another writer can commit, and reloads that commit before writing again', async () => {
    const dir = workspace();
    const long = await Engine.open(dir, deps, 'write');
    try {
      await long.index();
      await long.commit();
      long.releaseWriteLock();
      expect(long.holdsWriteLock).toBe(false);
      // Another process (here: another engine) takes the lock and commits a new file.
      writeFileSync(path.join(dir, 'other.ts'), 'export function fromOtherWriter(): number { return 1; }\n');
      const other = await Engine.open(dir, deps, 'write');
      await other.index();
      await other.close();
      // While it is not writing, the long-lived writer sees that commit.
      expect(await long.changedOnDisk()).toBe(true);
      expect(await long.refresh()).toBe(true);
      expect((await long.search('fromOtherWriter')).hits[0]?.path).toBe('other.ts');
      // It takes the lock back and writes on top of that commit, losing nothing.
      writeFileSync(path.join(dir, 'mine.ts'), 'export function fromLongWriter(): number { return 2; }\n');
      await long.acquireWriteLock();
      await long.index({ paths: ['mine.ts'], persist: false });
      expect((await long.search('fromLongWriter')).hits[0]?.path).toBe('mine.ts');
      expect(() => long.releaseWriteLock()).toThrow(/commit before/);
      await long.commit();
      long.releaseWriteLock();
      const reader = await Engine.open(dir, deps, 'read');
      expect((await reader.search('fromLongWriter')).hits.find((h) => h.symbol === 'fromLongWriter')?.path).toBe('mine.ts');
      expect((await reader.search('fromOtherWriter')).hits.find((h) => h.symbol === 'fromOtherWriter')?.path).toBe('other.ts');
      await reader.close();
    } finally {
      await long.close();
    }
  });

  it('refuses to write without the lock, and reports INDEX_LOCKED while another process holds it', async () => {
    const dir = workspace();
    const long = await Engine.open(dir, deps, 'write');
    try {
      await long.index();
      long.releaseWriteLock();
      writeFileSync(path.join(dir, 'math.ts'), 'export function changed(): number { return 3; }\n');
      await expect(long.index({ paths: ['math.ts'], persist: false })).rejects.toThrow(/gave its writer lock back/);
      const other = await Engine.open(dir, deps, 'write');
      try {
        // The lock belongs to this process's other engine here; across processes the pid check applies.
        await expect(long.acquireWriteLock()).rejects.toMatchObject({ code: 'INDEX_LOCKED' });
      } finally {
        await other.close();
      }
      await long.acquireWriteLock();
      expect(long.holdsWriteLock).toBe(true);
    } finally {
      await long.close();
    }
  });

  it('names a committed state alike in the process that wrote it and in one that opens it, an uncommitted one apart', async () => {
    const dir = workspace();
    const writer = await Engine.open(dir, deps, 'write');
    try {
      await writer.index();
      const reader = await Engine.open(dir, deps, 'read');
      try {
        // A repository-map cursor carries this: one from a daemon is good in a CLI process.
        expect(writer.stateVersion).toBe(reader.stateVersion);
        writeFileSync(path.join(dir, 'later.ts'), 'export function addedLater(): number { return 5; }\n');
        await writer.index({ paths: ['later.ts'], persist: false });
        expect(writer.stateVersion).not.toBe(reader.stateVersion);
        const uncommitted = writer.stateVersion;
        await writer.commit();
        expect(writer.stateVersion).not.toBe(uncommitted);
        expect(await reader.refresh()).toBe(true);
        expect(writer.stateVersion).toBe(reader.stateVersion);
      } finally {
        await reader.close();
      }
    } finally {
      await writer.close();
    }
  });

  it('gives up a re-index on cancel while it waits for queued edits and its turn, and indexes later', async () => {
    const dir = workspace();
    const ws = await WorkspaceServer.open({ workspace: dir, logger: silentLogger, deps, writer: true, headlessLanguageServers: false, restricted: true });
    try {
      await ws.getEngine();
      // A request in flight holds the gate; an edit queued behind it waits for it too.
      let release!: () => void;
      const held = ws.read(() => new Promise<void>((r) => (release = r)));
      await new Promise((r) => setTimeout(r, 20));
      writeFileSync(path.join(dir, 'queued.ts'), 'export function queuedWhileHeld(): number { return 4; }\n');
      ws.enqueue(['queued.ts']);
      const abort = new AbortController();
      const cancelled = ws.reindex({ signal: abort.signal });
      await new Promise((r) => setTimeout(r, 20));
      abort.abort();
      // Answered while the request still holds the gate: the cancel did not wait for it.
      await expect(cancelled).rejects.toMatchObject({ code: 'CANCELLED' });
      release();
      await held;
      const report = await ws.reindex();
      expect(report.filesParsed + report.filesUnchanged).toBeGreaterThan(0);
      expect(await ws.read(async (e) => (await e.search('queuedWhileHeld')).hits[0]?.path)).toBe('queued.ts');
    } finally {
      await ws.close();
    }
  });
});

describe('the warm-up of a long-lived host', () => {
  const deps = { embeddingProvider: null, parseWorkers: 0 };
  const capture = () => {
    const lines: string[] = [];
    return { lines, logger: { ...silentLogger, debug: (m: string) => lines.push(m) } };
  };

  it('warms navigation once the engine is open, after the request that opened it, and says what it did', async () => {
    const { dir, cleanup } = copyFixture('test/fixtures/intel/go');
    cleanups.push(cleanup);
    const { lines, logger } = capture();
    const ws = await WorkspaceServer.open({ workspace: dir, logger, deps, headlessLanguageServers: false, restricted: true });
    try {
      // The request that opens the engine runs first: the warm-up waits for it.
      const answered = await ws.read(async (e) => {
        await new Promise((r) => setTimeout(r, 30));
        return lines.some((l) => l.startsWith('warm-up:')) ? 'warm-up ran during the request' : e.root;
      });
      expect(answered).toBe(dir);
      for (let i = 0; i < 200 && !lines.some((l) => l.startsWith('warm-up:')); i++) await new Promise((r) => setTimeout(r, 25));
      expect(lines.find((l) => l.startsWith('warm-up:'))).toMatch(/^warm-up: graph (built|cached), grammars go/);
    } finally {
      await ws.close();
    }
  });

  it('stops on shutdown: close() during the warm-up returns, and nothing runs after', async () => {
    const { dir, cleanup } = copyFixture('test/fixtures/intel/go');
    cleanups.push(cleanup);
    const { lines, logger } = capture();
    const ws = await WorkspaceServer.open({ workspace: dir, logger, deps, headlessLanguageServers: false, restricted: true });
    await ws.getEngine();
    await ws.close();
    expect(lines.find((l) => l.startsWith('warm-up:'))).toMatch(/^warm-up: graph skipped, grammars none in .* \(stopped: cancelled\)$/);
  });
});
