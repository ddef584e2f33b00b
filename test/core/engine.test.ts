import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/core/engine';
import type { EmbeddingProvider, WorkspaceFs } from '../../src/core/ports';
import { VltError } from '../../src/core/errors';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { tempDir } from '../helpers/cli';

/** The real file system, except that reads of chosen files fail the way the OS would. */
function faultyFs(failures: Map<string, string>): WorkspaceFs {
  const fail = (abs: string) => {
    const code = failures.get(path.basename(abs));
    if (code) throw Object.assign(new Error(`${code}: simulated`), { code });
  };
  return {
    ...nodeWorkspaceFs,
    // Reads go through these functions, never straight to the disk from a parse worker.
    localDisk: false,
    async readFile(abs) {
      fail(abs);
      return nodeWorkspaceFs.readFile(abs);
    },
    readFileSync(abs) {
      fail(abs);
      return nodeWorkspaceFs.readFileSync!(abs);
    },
  };
}

describe('Engine against a faulty file system', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
    mkdirSync(path.join(dir, 'pkg'));
    writeFileSync(path.join(dir, 'pkg/keep.py'), 'def kept_function():\n    return 1\n');
    writeFileSync(path.join(dir, 'pkg/vanishing.py'), 'def vanishing_function():\n    return 2\n');
    writeFileSync(path.join(dir, 'pkg/locked.py'), 'def locked_function():\n    return 3\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('skips a file deleted during indexing and an unreadable one, with reasons, and indexes the rest', async () => {
    const fs = faultyFs(new Map([['vanishing.py', 'ENOENT'], ['locked.py', 'EACCES']]));
    const engine = await Engine.open(dir, { fs, embeddingProvider: null }, 'write');
    try {
      const report = await engine.index();
      expect(report.filesParsed).toBe(1);
      const status = engine.status();
      expect(status.files).toBe(1);
      expect(status.skipped_by_reason).toEqual({ unreadable: 2 });
      const hits = (await engine.search('kept_function')).hits;
      expect(hits[0]?.path).toBe('pkg/keep.py');
      expect((await engine.search('vanishing_function')).hits.every((h) => h.path !== 'pkg/vanishing.py')).toBe(true);
    } finally {
      await engine.close();
    }
  });

  it('drops a file from the index when it becomes unreadable later', async () => {
    const first = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
    await first.index();
    await first.close();
    writeFileSync(path.join(dir, 'pkg/locked.py'), 'def locked_function_changed():\n    return 4\n');
    const engine = await Engine.open(dir, { fs: faultyFs(new Map([['locked.py', 'EACCES']])), embeddingProvider: null }, 'write');
    try {
      await engine.index();
      expect(engine.status().files).toBe(2);
      expect((await engine.search('locked_function')).hits.some((h) => h.path === 'pkg/locked.py')).toBe(false);
    } finally {
      await engine.close();
    }
  });

  it('re-indexes only the given known paths without a walk, and falls back to a walk for new ones', async () => {
    const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
    try {
      await engine.index();
      writeFileSync(path.join(dir, 'pkg/keep.py'), 'def renamed_function():\n    return 1\n');
      const r = await engine.index({ paths: ['pkg/keep.py'], persist: false });
      expect(r).toMatchObject({ filesParsed: 1, filesDiscovered: 1, changed: ['pkg/keep.py'] });
      expect((await engine.search('renamed_function')).hits[0]?.path).toBe('pkg/keep.py');
      writeFileSync(path.join(dir, 'pkg/new.py'), 'def brand_new():\n    pass\n');
      const r2 = await engine.index({ paths: ['pkg/new.py'] });
      expect(r2.filesDiscovered).toBe(4);
      expect((await engine.search('brand_new')).hits[0]?.path).toBe('pkg/new.py');
    } finally {
      await engine.close();
    }
  });

  it('refuses to index from a read-only engine and rejects an empty query', async () => {
    const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'read');
    try {
      await expect(engine.index()).rejects.toThrow(/write mode/);
      await expect(engine.search('  ')).rejects.toMatchObject({ code: 'USAGE' });
    } finally {
      await engine.close();
    }
  });
});

describe('an index run that loads the search index at its first change', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
    writeFileSync(path.join(dir, 'a.py'), 'def alpha_one():\n    return 1\n');
    writeFileSync(path.join(dir, 'b.py'), 'def beta_two():\n    return 2\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const deps = { fs: nodeWorkspaceFs, embeddingProvider: null, parseWorkers: 0 } as const;

  it('changes nothing and writes nothing when nothing changed', async () => {
    const first = await Engine.open(dir, deps, 'write');
    await first.index();
    const generation = first.store.generation;
    await first.close();
    const again = await Engine.open(dir, deps, 'write');
    try {
      const r = await again.index();
      expect(r.changed).toEqual([]);
      expect(r.ms.persist).toBe(0);
      expect(again.store.generation).toBe(generation);
    } finally {
      await again.close();
    }
  });

  it('is right when the snapshot turns out unreadable: the index rebuilt mid-run is replaced, not duplicated', async () => {
    const first = await Engine.open(dir, deps, 'write');
    await first.index();
    first.store.setBlob('search', new Uint8Array([1, 2, 3, 4]));
    await first.store.commit();
    await first.close();
    writeFileSync(path.join(dir, 'a.py'), 'def alpha_changed():\n    return 3\n');
    writeFileSync(path.join(dir, 'c.py'), 'def gamma_new():\n    return 4\n');
    const again = await Engine.open(dir, deps, 'write');
    try {
      await again.index();
      expect((await again.search('alpha_changed')).hits[0]?.path).toBe('a.py');
      expect((await again.search('gamma_new')).hits[0]?.path).toBe('c.py');
      expect((await again.search('alpha_one')).hits.some((h) => h.symbol === 'alpha_one')).toBe(false);
      expect((await again.search('beta_two')).hits[0]?.path).toBe('b.py');
    } finally {
      await again.close();
    }
  });

  it('is right when the snapshot file is gone and a changed file has several chunks', async () => {
    const first = await Engine.open(dir, deps, 'write');
    await first.index();
    await first.close();
    // An index.db copied without its sidecar files names a search snapshot that is not there.
    for (const name of readdirSync(path.join(dir, '.vlt'))) if (name.startsWith('search-')) rmSync(path.join(dir, '.vlt', name));
    // Functions long enough to be a chunk each.
    const fn = (name: string) => `def ${name}(values):\n${Array.from({ length: 40 }, (_, i) => `    values.append(${i} * len(values))  # step ${i} of ${name}`).join('\n')}\n    return values\n`;
    writeFileSync(path.join(dir, 'a.py'), ['alpha_first', 'alpha_second', 'alpha_third'].map(fn).join('\n\n'));
    const again = await Engine.open(dir, deps, 'write');
    try {
      await again.index();
      for (const name of ['alpha_first', 'alpha_second', 'alpha_third']) expect((await again.search(name)).hits[0]?.symbol).toBe(name);
      expect((await again.search('beta_two')).hits[0]?.path).toBe('b.py');
      // Searched again after a reopen, from the snapshot this run wrote.
      await again.close();
      const reopened = await Engine.open(dir, deps, 'read');
      try {
        expect((await reopened.search('alpha_third')).hits[0]?.symbol).toBe('alpha_third');
      } finally {
        await reopened.close();
      }
    } finally {
      await again.close().catch(() => {});
    }
  });
});

describe('scoped search', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
    // 250 files elsewhere that match "parse" strongly, and 13 in crypto/tls that mention it once:
    // the whole index's best 200 all lie outside the scope.
    for (let i = 0; i < 250; i++) {
      mkdirSync(path.join(dir, `pkg${i % 25}`), { recursive: true });
      writeFileSync(path.join(dir, `pkg${i % 25}/parse${i}.go`), `package pkg\n\n// parse parses the parse tree: parse, parse, parse.\nfunc parseTree${i}(s string) string {\n\treturn parse(s) + parse(s)\n}\n`);
    }
    mkdirSync(path.join(dir, 'crypto/tls'), { recursive: true });
    for (let i = 0; i < 13; i++) {
      writeFileSync(path.join(dir, `crypto/tls/handshake${i}.go`), `package tls\n\n// handshake${i} reads a message and may parse its extensions.\nfunc handshakeStep${i}(m []byte) error {\n\treturn nil\n}\n`);
    }
    writeFileSync(path.join(dir, 'crypto/tls/notes.py'), 'def parse_notes():\n    return "parse"\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a path scope returns its own best hits even when the whole index has better ones elsewhere', async () => {
    const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
    try {
      await engine.index();
      const unscoped = await engine.search('parse', { k: 5 });
      expect(unscoped.hits.every((h) => !h.path.startsWith('crypto/tls/'))).toBe(true);
      const scoped = await engine.search('parse', { k: 5, pathGlob: 'crypto/tls/**' });
      expect(scoped.hits).toHaveLength(5);
      expect(scoped.hits.every((h) => h.path.startsWith('crypto/tls/'))).toBe(true);
      // A language filter inside the scope, and a scope with more room than matches: every match.
      const python = await engine.search('parse', { k: 5, pathGlob: 'crypto/tls/**', language: 'python' });
      expect(python.hits.map((h) => h.path)).toEqual(['crypto/tls/notes.py']);
      const all = await engine.search('parse', { k: 50, pathGlob: 'crypto/**' });
      expect(new Set(all.hits.map((h) => h.path)).size).toBe(14);

      // A name nothing defines or mentions is said to be unknown, even when other words match.
      const unknown = await engine.search('HugeFunc123 parse', { k: 3 });
      expect(unknown.hits.length).toBeGreaterThan(0);
      expect(unknown.notes).toEqual(['nothing in the index is named or mentions `HugeFunc123`; these hits match the query\'s other words']);
      expect((await engine.search('handshakeStep3 parse', { k: 3 })).notes).toEqual([]);
      expect((await engine.search('parse', { k: 3 })).notes).toEqual([]);
    } finally {
      await engine.close();
    }
  });
});

describe('search index under churn', () => {
  let dir: string;
  const write = (round: number) => {
    for (let i = 0; i < 100; i++) {
      // Methods of a class, with decorators: their search documents carry qualified names and
      // decorators, which a rebuild of the search index must write as an index run does.
      const fns = [0, 1, 2].map((j) => `    @staticmethod\n    def handler_${i}_${j}(request):\n        """Handles request ${i}.${j} (revision ${round})."""\n        return request.config_value + ${round}\n`);
      writeFileSync(path.join(dir, `pkg/mod${i}.py`), `class Service${i}:\n${fns.join('\n')}`);
    }
  };
  beforeEach(() => {
    dir = tempDir();
    mkdirSync(path.join(dir, 'pkg'), { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** The search snapshot's bytes on disk: the snapshot and the text segment files it names. */
  const snapshotBytes = (e: Engine) => {
    const store = (e as unknown as { store: { dir: string; getBlob(k: string): Uint8Array | undefined; getMeta(k: string): string | undefined } }).store;
    const segments = JSON.parse(store.getMeta('text_segments') ?? '[]') as string[];
    expect(segments.length).toBeGreaterThan(0);
    return (store.getBlob('search')?.byteLength ?? 0) + segments.reduce((n, name) => n + statSync(path.join(store.dir, name)).size, 0);
  };

  it('a search index rebuilt from the stored chunks scores as the one the index run built', async () => {
    write(0);
    // The fused scores follow ranks; the BM25 list's own scores show a field that differs.
    const everything = async (e: Engine) => {
      const out = await e.search('service handler staticmethod config value', { k: 1000 });
      const bm25 = out.explain.retrievers.find((r) => r.name === 'bm25')?.top ?? [];
      return [...out.hits.map((h) => `${h.path}:${h.start_line} ${h.score.toFixed(6)}`), ...bm25.map((h) => `bm25 ${h.path}:${h.line} ${h.score.toFixed(6)}`)];
    };
    const built = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
    let want: string[];
    try {
      await built.index();
      want = await everything(built);
      // An unreadable snapshot: the next engine rebuilds its search index from the stored chunks.
      built.store.setBlob('search', new Uint8Array([1, 2, 3, 4]));
      await built.store.commit();
    } finally {
      await built.close();
    }
    const rebuilt = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'read');
    try {
      expect(want.length).toBeGreaterThanOrEqual(100);
      expect(await everything(rebuilt)).toEqual(want);
    } finally {
      await rebuilt.close();
    }
  });

  it('after every chunk was replaced many times, the snapshot and the scores are those of a fresh build', async () => {
    write(0);
    const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
    try {
      await engine.index();
      await engine.search('config value');
      const segmentsNamed = () => JSON.parse((engine as unknown as { store: { getMeta(k: string): string | undefined } }).store.getMeta('text_segments') ?? '[]') as string[];
      let before: string[] = [];
      for (let round = 1; round <= 40; round++) {
        before = segmentsNamed();
        write(round);
        await engine.index();
      }
      // The segment files left are those the last two commits name (a reader of the one before
      // may still open them): merged-away ones were removed.
      const left = readdirSync(path.join(dir, '.vlt')).filter((n) => n.startsWith('textseg-'));
      expect(left.length).toBeGreaterThan(0);
      expect(left.filter((n) => !segmentsNamed().includes(n) && !before.includes(n))).toEqual([]);
      // Every chunk the query finds, best first.
      const everything = async (e: Engine) => (await e.search('service handler staticmethod config value', { k: 1000 })).hits.map((h) => ({ at: `${h.path}:${h.start_line}`, score: h.score })).sort((a, b) => b.score - a.score || a.at.localeCompare(b.at));
      const churned = await everything(engine);
      const churnedBytes = snapshotBytes(engine);
      const freshDir = tempDir();
      try {
        for (let i = 0; i < 100; i++) {
          mkdirSync(path.join(freshDir, 'pkg'), { recursive: true });
          writeFileSync(path.join(freshDir, `pkg/mod${i}.py`), readFileSync(path.join(dir, `pkg/mod${i}.py`)));
        }
        const fresh = await Engine.open(freshDir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
        try {
          await fresh.index();
          const want = await everything(fresh);
          expect(churned.length).toBeGreaterThanOrEqual(100);
          // The same chunks, and the same scores; which of two tied chunks ranks first (and so
          // which takes which rank's fused score) follows the chunk ids.
          expect(churned.map((h) => h.at).sort()).toEqual(want.map((h) => h.at).sort());
          churned.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 6));
          // Up to 1,024 dead ids are tolerated before a rebuild, and the churned chunks' ids are
          // longer numbers (about 1.12× here); without rebuilds the 12,000 dead ids of these 40
          // rounds make it about 1.5×.
          expect(churnedBytes).toBeLessThanOrEqual(snapshotBytes(fresh) * 1.25);
        } finally {
          await fresh.close();
        }
      } finally {
        rmSync(freshDir, { recursive: true, force: true });
      }
    } finally {
      await engine.close();
    }
  }, 60_000);
});

describe('an embedding endpoint that fails', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
    writeFileSync(path.join(dir, 'a.py'), 'def alpha_one():\n    return 1\n');
    writeFileSync(path.join(dir, 'b.py'), 'def beta_two():\n    return 2\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A provider whose endpoint can be switched off, as an unreachable one answers. */
  function switchable(): EmbeddingProvider & { up: boolean; calls: number; sent: string[] } {
    const p = {
      model: 'switchable',
      dimensions: 8,
      up: true,
      calls: 0,
      sent: [] as string[],
      async embed(texts: string[]): Promise<number[][]> {
        p.calls++;
        p.sent.push(...texts);
        if (!p.up) throw new VltError('EMBEDDING_FAILED', 'could not connect to embedding endpoint (6 attempts)');
        return texts.map((t) => Array.from({ length: 8 }, (_, i) => ((t.length + i) % 7) / 7 + 0.01));
      },
    };
    return p;
  }

  it('sends nothing past [embeddings] max_tokens: text and symbols are indexed, the vectors wait, and a raised cap embeds them', async () => {
    const provider = switchable();
    writeFileSync(path.join(dir, 'vlt.toml'), '[embeddings]\nmax_tokens = 5\n');
    const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: provider, parseWorkers: 0 }, 'write');
    try {
      const r = await engine.index();
      // Only the endpoint's two-word dimension probe went out, no chunk.
      expect(provider.sent).toEqual(['dimension probe']);
      expect(r.vectorsPending).toBe(2);
      expect(r.embeddingError).toMatch(/would send about \d+ tokens, over \[embeddings\] max_tokens = 5 .*nothing was sent/);
      expect((await engine.search('beta_two')).hits[0]?.path).toBe('b.py');
    } finally {
      await engine.close();
    }
    writeFileSync(path.join(dir, 'vlt.toml'), '[embeddings]\nmax_tokens = 100000\n');
    const raised = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: provider, parseWorkers: 0 }, 'write');
    try {
      const r = await raised.index();
      expect(r.vectorsPending).toBeUndefined();
      expect(raised.status().vectors.count).toBe(2);
    } finally {
      await raised.close();
    }
  });

  it('costs the vectors, never the text and symbol index, and the next run embeds what is missing', async () => {
    const provider = switchable();
    const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: provider, parseWorkers: 0 }, 'write');
    try {
      await engine.index();
      expect(engine.status().vectors.count).toBe(2);
      provider.up = false;
      writeFileSync(path.join(dir, 'a.py'), 'def alpha_renamed():\n    return 1\n');
      const r = await engine.index();
      expect(r.vectorsPending).toBe(1);
      expect(r.embeddingError).toMatch(/could not connect/);
      expect((await engine.search('alpha_renamed')).hits[0]?.path).toBe('a.py');
      expect(engine.status().vectors.count).toBe(1);
      provider.up = true;
      const again = await engine.index();
      expect(again.vectorsPending).toBeUndefined();
      expect(engine.status().vectors.count).toBe(2);
    } finally {
      await engine.close();
    }
    // What the failing run indexed was saved: a new process finds the renamed symbol.
    const reader = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'read');
    try {
      expect((await reader.search('alpha_renamed')).hits[0]?.path).toBe('a.py');
    } finally {
      await reader.close();
    }
  });

  it('indexes text and symbols when the endpoint is down from the start', async () => {
    const provider = { ...switchable(), dimensions: undefined, up: false };
    const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: provider, parseWorkers: 0 }, 'write');
    try {
      await engine.index();
      expect((await engine.search('beta_two')).hits[0]?.path).toBe('b.py');
    } finally {
      await engine.close();
    }
  });
});

describe('a cancelled index run', () => {
  it('keeps what it indexed before the cancel, and the next run parses only the rest', async () => {
    const dir = tempDir();
    try {
      for (let i = 0; i < 600; i++) {
        mkdirSync(path.join(dir, `pkg${i % 10}`), { recursive: true });
        writeFileSync(path.join(dir, `pkg${i % 10}/mod${i}.py`), `def handler_${i}(request):\n    return request.get("k${i}")\n`);
      }
      const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null, parseWorkers: 0 }, 'write');
      const abort = new AbortController();
      let seen = 0;
      await expect(
        engine.index({
          signal: abort.signal,
          onProgress: (p) => {
            if (p.phase === 'parse' && ++seen === 200) abort.abort();
          },
        }),
      ).rejects.toMatchObject({ code: 'CANCELLED' });
      await engine.close();
      const reader = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'read');
      const kept = reader.store.listFiles().length;
      await reader.close();
      expect(kept).toBeGreaterThanOrEqual(200);
      expect(kept).toBeLessThan(600);
      const again = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null, parseWorkers: 0 }, 'write');
      try {
        const r = await again.index();
        expect(r.resumed).toBe(kept);
        expect(r.filesParsed).toBe(600 - kept);
        expect((await again.search('handler_0')).hits[0]?.path).toBe('pkg0/mod0.py');
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
