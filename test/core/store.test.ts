import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VltError } from '../../src/core/errors';
import type { Logger } from '../../src/core/ports';
import { removeStaleTempFiles } from '../../src/core/store/atomic';
import {
  IndexStore,
  SCHEMA_VERSION,
  decodePosting,
  decodeRefNames,
  decodeRefs,
  encodePosting,
  encodeRefs,
  encodeRefsWithNames,
  loadSqlJs,
  offerEarlyRead,
  readRange,
  type FileInfo,
  type ReplaceResult,
} from '../../src/core/store/store';
import type { ParsedFile, SymbolRef } from '../../src/core/types';
import { Packs } from '../../src/core/store/packs';
import { Connection } from '../../src/core/store/sqlite';
import { SCHEMA_SQL } from '../../src/core/store/schema';

const tmpDirs: string[] = [];
const openStores: IndexStore[] = [];

function tmpWorkspace(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlt-store-test-'));
  tmpDirs.push(dir);
  return dir;
}

async function open(ws: string, mode: 'read' | 'write', logger?: Logger): Promise<IndexStore> {
  const s = await IndexStore.open(ws, { mode, logger });
  openStores.push(s);
  return s;
}

/** A workspace whose committed index holds one `file` (its symbols named after `name`); the writer is closed. */
async function indexedWorkspace(file: string, name: string, hashes: string[]): Promise<{ ws: string; result: ReplaceResult }> {
  const ws = tmpWorkspace();
  const w = await open(ws, 'write');
  const result = w.replaceFile(fileInfo(file), parsed(name), hashes);
  await w.commit();
  w.close();
  return { ws, result };
}

afterEach(() => {
  for (const s of openStores.splice(0)) s.close();
  for (const d of tmpDirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, error() {}, warn: (m: string) => void warnings.push(m) };
}

function fileInfo(p: string, hash = `hash-of-${p}`): FileInfo {
  return { path: p, hash, mtimeMs: 1_700_000_000_123.5, size: 4321, language: 'go' };
}

function parsed(tag: string, opts: { refs?: SymbolRef[] } = {}): ParsedFile {
  return {
    language: 'go',
    imports: ['"fmt"', `"example.com/${tag}"`],
    importSpecs: [
      { source: 'fmt', line: 3, namespace: 'fmt' },
      { source: `example.com/${tag}`, line: 4, namespace: tag },
    ],
    chunks: [
      {
        startLine: 1,
        endLine: 10,
        kind: 'function',
        symbol: `${tag}.Run`,
        signature: `func Run${tag}() error`,
        container: 'type Server struct',
        decorators: ['@deprecated', '@inline'],
        docstring: `Run ${tag} — starts the server. 日本語 🚀`,
        text: `func Run${tag}() error {\n\treturn nil // ünïcödé ${tag}\n}\n`,
      },
      { startLine: 12, endLine: 14, kind: 'block', text: '' },
    ],
    symbols: [
      {
        name: `Run${tag}`,
        kind: 'function',
        qualifiedName: `pkg.Server.Run${tag}`,
        signature: `func Run${tag}() error`,
        startLine: 1,
        endLine: 10,
        container: 'pkg.Server',
      },
      { name: 'Server', kind: 'struct', qualifiedName: 'pkg.Server', signature: 'type Server struct', startLine: 20, endLine: 30 },
    ],
    refs: opts.refs ?? [
      { name: 'Println', line: 3, col: 6, kind: 'call' },
      { name: `only_${tag}`, line: 4, col: 2, kind: 'reference' },
      { name: 'Println', line: 9, col: 6, kind: 'call' },
      { name: 'error', line: 1, col: 20, kind: 'type' },
    ],
  };
}

async function expectVltError(p: Promise<unknown>, code: string): Promise<VltError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(VltError);
    expect((e as VltError).code).toBe(code);
    return e as VltError;
  }
  throw new Error(`expected a VltError ${code}`);
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

describe('references codec', () => {
  it('round-trips unicode names, huge and backward line numbers, and every kind', () => {
    const refs: SymbolRef[] = [
      { name: 'plain', line: 1, col: 1, kind: 'call' },
      { name: '日本語の名前', line: 70_000, col: 12, kind: 'type' },
      { name: '🚀rocket', line: 5, col: 0, kind: 'reference' },
      { name: 'plain', line: 2 ** 31 + 7, col: 2 ** 20, kind: 'reference' },
      { name: 'x'.repeat(300), line: 2 ** 40, col: 3, kind: 'call' },
      { name: '', line: 1, col: 1, kind: 'type' },
      { name: 'Ünïcödé', line: Number.MAX_SAFE_INTEGER, col: 1, kind: 'call' },
    ];
    const { bytes, names } = encodeRefsWithNames(refs);
    expect(names).toEqual(['plain', '日本語の名前', '🚀rocket', 'x'.repeat(300), '', 'Ünïcödé']);
    expect(decodeRefs(bytes)).toEqual(refs);
    expect(decodeRefNames(bytes)).toEqual(names);
    expect(decodeRefs(bytes, 'plain')).toEqual([refs[0], refs[3]]);
    expect(decodeRefs(bytes, 'absent')).toEqual([]);
    expect(decodeRefs(encodeRefs([]))).toEqual([]);
  });

  it('is compact for typical references', () => {
    const refs: SymbolRef[] = [];
    for (let i = 0; i < 1000; i++) refs.push({ name: `name${i % 50}`, line: 1 + Math.floor(i / 3), col: 1 + (i % 70), kind: 'call' });
    // 50 names of ~6 bytes plus about 3-4 bytes per reference.
    expect(encodeRefs(refs).length).toBeLessThan(4500);
  });

  it('rejects damaged blobs with INDEX_CORRUPT and bad input with INTERNAL', () => {
    const bytes = encodeRefs([{ name: 'a', line: 1, col: 1, kind: 'call' }]);
    expect(() => decodeRefs(bytes.subarray(0, bytes.length - 1))).toThrow(VltError);
    expect(() => decodeRefs(new Uint8Array([9, 9, 9]))).toThrow(/malformed/);
    const extra = new Uint8Array([...bytes, 0]);
    expect(() => decodeRefs(extra)).toThrow(/trailing/);
    expect(() => encodeRefs([{ name: 'a', line: -1, col: 1, kind: 'call' }])).toThrow(/line -1/);
    expect(() => encodeRefs([{ name: 'a', line: 1.5, col: 1, kind: 'call' }])).toThrow(VltError);
  });

  it('round-trips postings', () => {
    const ids = [1, 2, 3, 130, 20_000, 2 ** 33];
    expect(decodePosting(encodePosting(ids))).toEqual(ids);
    expect(decodePosting(encodePosting([]))).toEqual([]);
  });
});

describe('IndexStore', () => {
  it('round-trips files, chunks, symbols, refs, blobs, meta and skipped files across close and reopen', async () => {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    expect(w.isEmpty).toBe(true);
    expect(w.rebuildReason).toBeUndefined();
    const a = w.replaceFile(fileInfo('src/a.go'), parsed('A'), ['ha1', 'ha2']);
    const b = w.replaceFile({ ...fileInfo('src/b.go'), generated: true }, parsed('B'), ['hb1', 'hb2']);
    expect(a.chunkIds).toHaveLength(2);
    expect(a.removedChunkIds).toEqual([]);
    const blob = new Uint8Array(100_000).map((_, i) => (i * 7) & 0xff);
    w.setBlob('search-index', blob);
    w.setMeta('embedding_model', 'text-embedding-3-small');
    w.setSkipped([
      { path: 'big.bin', reason: 'binary' },
      { path: 'huge.go', reason: 'too-large', detail: '12 MB' },
      { path: 'other.bin', reason: 'binary' },
    ]);
    await w.commit();
    expect(w.generation).toBe(1);
    w.close();

    const r = await open(ws, 'read');
    expect(r.loadedFromDisk).toBe(true);
    expect(r.isEmpty).toBe(false);
    const files = r.listFiles();
    expect(files.map((f) => f.path)).toEqual(['src/a.go', 'src/b.go']);
    expect(files[0]).toEqual({
      id: a.fileId,
      path: 'src/a.go',
      hash: 'hash-of-src/a.go',
      mtimeMs: 1_700_000_000_123.5,
      size: 4321,
      language: 'go',
      imports: ['"fmt"', '"example.com/A"'],
      refCount: 4,
      generated: false,
    });
    expect(r.getFile('src/b.go')).toMatchObject({ id: b.fileId, generated: true });
    expect(r.getFile('nope.go')).toBeUndefined();

    const src = parsed('A');
    const chunks = r.getChunks([b.chunkIds[0]!, 999_999, a.chunkIds[1]!, a.chunkIds[0]!]);
    expect(chunks.map((c) => c.id)).toEqual([b.chunkIds[0], a.chunkIds[1], a.chunkIds[0]]);
    const c0 = chunks[2]!;
    expect(c0).toEqual({
      id: a.chunkIds[0],
      fileId: a.fileId,
      path: 'src/a.go',
      language: 'go',
      startLine: 1,
      endLine: 10,
      kind: 'function',
      symbol: 'A.Run',
      signature: 'func RunA() error',
      container: 'type Server struct',
      decorators: ['@deprecated', '@inline'],
      docstring: src.chunks[0]!.docstring,
      text: src.chunks[0]!.text,
      hash: 'ha1',
    });
    // Optional fields that were absent stay absent, and empty text stays empty.
    expect(chunks[1]).toEqual({
      id: a.chunkIds[1],
      fileId: a.fileId,
      path: 'src/a.go',
      language: 'go',
      startLine: 12,
      endLine: 14,
      kind: 'block',
      text: '',
      hash: 'ha2',
    });
    expect(r.chunksOfFile(a.fileId).map((c) => c.id)).toEqual(a.chunkIds);
    expect([...r.allChunksForIndexing()].map((c) => [c.id, c.path])).toEqual([
      [a.chunkIds[0], 'src/a.go'],
      [a.chunkIds[1], 'src/a.go'],
      [b.chunkIds[0], 'src/b.go'],
      [b.chunkIds[1], 'src/b.go'],
    ]);

    expect(r.getRefs(a.fileId)).toEqual(src.refs);
    expect(r.getRefs(12345)).toEqual([]);
    expect(r.filesReferencing('Println').map((f) => f.path)).toEqual(['src/a.go', 'src/b.go']);
    expect(r.filesReferencing('only_B')).toEqual([{ fileId: b.fileId, path: 'src/b.go' }]);
    expect(r.filesReferencing('nothing')).toEqual([]);
    expect(r.findRefs('Println').map((x) => `${x.path}:${x.line}:${x.col}`)).toEqual([
      'src/a.go:3:6',
      'src/a.go:9:6',
      'src/b.go:3:6',
      'src/b.go:9:6',
    ]);

    const runA = r.findSymbols('RunA');
    expect(runA).toEqual([
      {
        id: runA[0]!.id,
        fileId: a.fileId,
        path: 'src/a.go',
        name: 'RunA',
        kind: 'function',
        qualifiedName: 'pkg.Server.RunA',
        signature: 'func RunA() error',
        startLine: 1,
        endLine: 10,
        container: 'pkg.Server',
      },
    ]);
    expect(r.findSymbols('Server').map((s) => s.path)).toEqual(['src/a.go', 'src/b.go']);
    expect(r.findSymbols('Server', { limit: 1 })).toHaveLength(1);
    expect(r.findSymbols('Run', { prefix: true }).map((s) => s.name)).toEqual(['RunA', 'RunB']);
    expect(r.findSymbols('Server.RunB').map((s) => s.qualifiedName)).toEqual(['pkg.Server.RunB']);
    expect(r.findSymbols('erver.RunB')).toEqual([]);
    expect(r.allSymbols()).toHaveLength(4);

    expect(r.getBlob('search-index')).toEqual(blob);
    expect(r.getBlob('missing')).toBeUndefined();
    expect(r.getMeta('embedding_model')).toBe('text-embedding-3-small');
    expect(r.getMeta('schema_version')).toBe(String(SCHEMA_VERSION));
    expect(r.getMeta('created_at')).toMatch(/^\d{4}-/);
    expect(r.getSkipped()).toEqual([
      { path: 'big.bin', reason: 'binary' },
      { path: 'huge.go', reason: 'too-large', detail: '12 MB' },
      { path: 'other.bin', reason: 'binary' },
    ]);
    const stats = r.stats();
    expect(stats).toMatchObject({
      files: 2,
      chunks: 4,
      symbols: 4,
      refs: 8,
      languages: { go: 2 },
      generation: 1,
      skippedByReason: { binary: 2, 'too-large': 1 },
      generatedFiles: 1,
    });
    // index.db and the chunk text pack beside it.
    const vltDir = path.join(ws, '.vlt');
    const packBytes = fs.readdirSync(vltDir).filter((n) => n.endsWith('.pack')).reduce((n, f) => n + fs.statSync(path.join(vltDir, f)).size, 0);
    expect(packBytes).toBeGreaterThan(0);
    expect(stats.bytesOnDisk).toBe(fs.statSync(path.join(vltDir, 'index.db')).size + packBytes);
    expect(stats.updatedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);

    // Read-only stores refuse mutations.
    expect(() => r.setMeta('x', 'y')).toThrow(/read-only/);
  });

  it('replaceFile replaces every derived row and never reuses chunk ids', async () => {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    const first = w.replaceFile(fileInfo('a.go'), parsed('A'), ['1', '2']);
    w.replaceFile(fileInfo('b.go'), parsed('B'), ['3', '4']);
    await w.commit();

    const next = parsed('C', { refs: [{ name: 'Fresh', line: 1, col: 1, kind: 'call' }] });
    next.chunks = [next.chunks[0]!];
    const second = w.replaceFile(fileInfo('a.go', 'new-hash'), next, ['5']);
    expect(second.fileId).toBe(first.fileId);
    expect(second.removedChunkIds).toEqual(first.chunkIds);
    expect(Math.min(...second.chunkIds)).toBeGreaterThan(Math.max(...first.chunkIds));
    // Visible before the commit, inside the same session.
    expect(w.filesReferencing('Println').map((f) => f.path)).toEqual(['b.go']);
    expect(w.filesReferencing('Fresh').map((f) => f.path)).toEqual(['a.go']);
    await w.commit();
    w.close();

    const r = await open(ws, 'read');
    expect(r.getFile('a.go')?.hash).toBe('new-hash');
    expect(r.getChunks(first.chunkIds)).toEqual([]);
    expect(r.chunksOfFile(first.fileId).map((c) => c.id)).toEqual(second.chunkIds);
    expect(r.stats()).toMatchObject({ files: 2, chunks: 3, symbols: 4, refs: 5 });
    expect(r.findSymbols('RunA')).toEqual([]);
    expect(r.findSymbols('RunC')).toHaveLength(1);
    expect(r.filesReferencing('only_A')).toEqual([]);
    expect(r.filesReferencing('Println').map((f) => f.path)).toEqual(['b.go']);
    expect(r.filesReferencing('Fresh').map((f) => f.path)).toEqual(['a.go']);
    r.close();

    // Removing the newest chunks and reopening must not hand their ids out again.
    const w2 = await open(ws, 'write');
    const removed = w2.removeFile('a.go');
    expect(removed).toEqual(second.chunkIds);
    await w2.commit();
    w2.close();
    const w3 = await open(ws, 'write');
    const third = w3.replaceFile(fileInfo('c.go'), parsed('D'), ['6', '7']);
    expect(Math.min(...third.chunkIds)).toBeGreaterThan(Math.max(...second.chunkIds));
  });

  it('removeFile deletes the file and everything derived from it', async () => {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    const a = w.replaceFile(fileInfo('a.go'), parsed('A'), ['1', '2']);
    w.replaceFile(fileInfo('b.go'), parsed('B'), ['3', '4']);
    expect(w.removeFile('a.go')).toEqual(a.chunkIds);
    expect(w.removeFile('a.go')).toEqual([]);
    expect(w.removeFile('never.go')).toEqual([]);
    await w.commit();
    expect(w.getFile('a.go')).toBeUndefined();
    expect(w.getRefs(a.fileId)).toEqual([]);
    expect(w.stats()).toMatchObject({ files: 1, chunks: 2, symbols: 2, refs: 4 });
    expect(w.filesReferencing('Println').map((f) => f.path)).toEqual(['b.go']);
    expect(w.filesReferencing('only_A')).toEqual([]);
    expect(w.findSymbols('RunA')).toEqual([]);
  });

  it('rolls back a failed file inside a batch without losing the rest', async () => {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    w.transaction(() => {
      w.replaceFile(fileInfo('ok.go'), parsed('OK'), ['1', '2']);
      const bad = parsed('BAD');
      // A chunk without a first line violates NOT NULL after the file row and postings were written.
      (bad.chunks[1] as { startLine: unknown }).startLine = null;
      expect(() => w.replaceFile(fileInfo('bad.go'), bad, ['3', '4'])).toThrow();
    });
    // A whole batch that throws is undone, postings included.
    expect(() =>
      w.transaction(() => {
        w.replaceFile(fileInfo('gone.go'), parsed('GONE'), ['5', '6']);
        throw new Error('abort the batch');
      }),
    ).toThrow('abort the batch');
    await w.commit();
    expect(w.listFiles().map((f) => f.path)).toEqual(['ok.go']);
    expect(w.stats()).toMatchObject({ files: 1, chunks: 2, symbols: 2 });
    expect(w.filesReferencing('only_BAD')).toEqual([]);
    expect(w.filesReferencing('only_GONE')).toEqual([]);
    expect(w.filesReferencing('only_OK').map((f) => f.path)).toEqual(['ok.go']);
  });

  it('answers reference queries inside an open transaction', async () => {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    w.replaceFile(fileInfo('a.go'), parsed('A'), ['1', '2']);
    await w.commit();
    w.transaction(() => {
      w.removeFile('a.go');
      w.replaceFile(fileInfo('b.go'), parsed('B'), ['3', '4']);
      expect(w.filesReferencing('Println').map((f) => f.path)).toEqual(['b.go']);
      expect(w.filesReferencing('only_A')).toEqual([]);
      // Batched, with the pending changes applied as for one name.
      expect(w.countFilesReferencingMany(['Println', 'only_A', 'only_B', 'nothing'])).toEqual(
        new Map([
          ['Println', 1],
          ['only_A', 0],
          ['only_B', 1],
          ['nothing', 0],
        ]),
      );
    });
    await w.commit();
    expect(w.filesReferencing('Println').map((f) => f.path)).toEqual(['b.go']);
  });

  it('a writer adds the indexes an index of an earlier version lacks, and its commit keeps them', async () => {
    const { ws, result: a } = await indexedWorkspace('a.go', 'A', ['1', '2']);
    // The earlier schema: chunks indexed by file only.
    const SQL = await loadSqlJs();
    const file = path.join(ws, '.vlt', 'index.db');
    const indexes = () => {
      const db = new SQL.Database(fs.readFileSync(file));
      const names = db.exec("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'chunks'")[0]?.values.map((r) => String(r[0])) ?? [];
      db.close();
      return names;
    };
    const old = new SQL.Database(fs.readFileSync(file));
    old.run('DROP INDEX chunks_file_lines; CREATE INDEX chunks_file ON chunks(file_id);');
    fs.writeFileSync(file, old.export());
    old.close();
    expect(indexes()).toEqual(['chunks_file']);
    // A reader reads it as it is.
    const r = await open(ws, 'read');
    expect(r.chunkRangesOfFile(a.fileId).map((c) => c.id)).toEqual(a.chunkIds);
    r.close();
    // A writer adds the new index and drops the one it replaces, with nothing else to commit.
    const w = await open(ws, 'write');
    expect(w.hasUnsavedChanges).toBe(true);
    await w.commit();
    w.close();
    expect(indexes()).toEqual(['chunks_file_lines']);
    const again = await open(ws, 'write');
    expect(again.hasUnsavedChanges).toBe(false);
    expect(again.chunkRangesOfFile(a.fileId).map((c) => c.id)).toEqual(a.chunkIds);
  });

  it('a reader takes over a read of index.db that its host began, once; a failed one is read again', async () => {
    const { ws } = await indexedWorkspace('a.go', 'A', ['1', '2']);
    const file = path.join(ws, '.vlt', 'index.db');
    // A read handed over is used: its bytes are what the store opens (here, another valid index).
    const { ws: other } = await indexedWorkspace('b.go', 'B', ['3', '4']);
    const otherFile = path.join(other, '.vlt', 'index.db');
    offerEarlyRead(file, Promise.resolve({ bytes: fs.readFileSync(otherFile), stats: fs.statSync(otherFile) }));
    const r1 = await open(ws, 'read');
    expect(r1.listFiles().map((f) => f.path)).toEqual(['b.go']);
    r1.close();
    // Once: the next reader reads the file itself.
    const r2 = await open(ws, 'read');
    expect(r2.listFiles().map((f) => f.path)).toEqual(['a.go']);
    r2.close();
    // A read that failed is done again by the store.
    offerEarlyRead(file, Promise.reject(new Error('short read')));
    const r3 = await open(ws, 'read');
    expect(r3.listFiles().map((f) => f.path)).toEqual(['a.go']);
    r3.close();
    // A writer never takes one: it reads under its lock.
    offerEarlyRead(file, Promise.resolve({ bytes: fs.readFileSync(otherFile), stats: fs.statSync(otherFile) }));
    const w3 = await open(ws, 'write');
    expect(w3.listFiles().map((f) => f.path)).toEqual(['a.go']);
  });

  it('batched reads (chunk ranges of many files, reference counts of many names) answer as the single ones', async () => {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    const ids = ['A', 'B', 'C'].map((n, i) => w.replaceFile(fileInfo(`${n.toLowerCase()}.go`), parsed(n), [`${i}1`, `${i}2`]).fileId);
    await w.commit();
    const r = await open(ws, 'read');
    const ranges = r.chunkRangesOfFiles([...ids, ids[0]!, 9999]);
    for (const id of ids) expect(ranges.get(id)).toEqual(r.chunkRangesOfFile(id));
    expect(ranges.get(9999)).toEqual([]);
    const names = ['Println', 'only_A', 'only_C', 'nothing'];
    expect(r.countFilesReferencingMany(names)).toEqual(new Map(names.map((n) => [n, r.countFilesReferencing(n)])));
    expect(r.countFilesReferencing('Println')).toBe(3);
  });

  it('bumps the generation on every commit and lets readers reload', async () => {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    expect(w.generation).toBe(0);
    expect(w.getMeta('generation')).toBeUndefined();
    await w.commit();
    expect(w.generation).toBe(1);
    const r = await open(ws, 'read');
    expect(r.isEmpty).toBe(true);
    expect(await r.changedOnDisk()).toBe(false);
    w.replaceFile(fileInfo('a.go'), parsed('A'), ['1', '2']);
    await w.commit();
    expect(w.generation).toBe(2);
    // Nothing changed: nothing is written and the generation stays.
    await w.commit();
    expect(w.generation).toBe(2);
    expect(await r.reload()).toBe(true);
    expect(r.generation).toBe(2);
    expect(r.listFiles()).toHaveLength(1);
    expect(await r.reload()).toBe(false);
  });

  it('opens an absent index as empty in read mode without creating anything', async () => {
    const ws = tmpWorkspace();
    const r = await open(ws, 'read');
    expect(r.isEmpty).toBe(true);
    expect(r.loadedFromDisk).toBe(false);
    expect(r.listFiles()).toEqual([]);
    expect(r.stats()).toMatchObject({ files: 0, chunks: 0, updatedAt: null, generation: 0 });
    expect(fs.existsSync(path.join(ws, '.vlt'))).toBe(false);
  });
});

describe('chunk text in packs beside index.db', () => {
  const packs = (ws: string) => fs.readdirSync(path.join(ws, '.vlt')).filter((n) => n.endsWith('.pack')).sort();

  it('reads back every text appended, through its write buffer, across packs, before and after a flush', async () => {
    const SQL = await loadSqlJs();
    const conn = new Connection(new SQL.Database());
    conn.db.exec(SCHEMA_SQL);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vlt-packs-'));
    tmpDirs.push(dir);
    // Packs of 9 MB (not small enough to be gathered at a commit), a write buffer of 1 MB:
    // texts of every size, from empty to larger than the buffer.
    const texts = new Packs(dir, () => conn, 9 * 2 ** 20);
    let seed = 3;
    const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const sizes = [0, 1, 10, 1000, 2 ** 20 - 5, 2 ** 20, 2 ** 20 + 7, 5 * 2 ** 20, ...Array.from({ length: 600 }, () => Math.floor(rnd() ** 3 * 400_000))];
    const written: Array<{ text: string; ref: ReturnType<Packs['append']> }> = [];
    sizes.forEach((n, i) => {
      const text = `${i}:${'é漢a'.repeat(Math.ceil(n / 3)).slice(0, n)}`;
      written.push({ text, ref: texts.append(text) });
      // Now and then a text is read back while it may still be in the buffer.
      if (i % 37 === 0) {
        const w = written[Math.floor(rnd() * written.length)]!;
        expect(texts.read(w.ref)).toBe(w.text);
      }
    });
    for (const w of written) expect(texts.read(w.ref)).toBe(w.text);
    texts.beforeCommit();
    for (const w of written) expect(texts.read(w.ref)).toBe(w.text);
    const ids = new Set(written.map((w) => w.ref.pack));
    expect(ids.size).toBeGreaterThan(3);
    // Every pack's recorded length is its size on disk.
    for (const r of conn.all('SELECT name, bytes FROM text_packs')) expect(fs.statSync(path.join(dir, String(r[0]))).size).toBe(Number(r[1]));
    texts.close();
    conn.close();
  });

  const withText = (tag: string, text: string): ParsedFile => {
    const p = parsed(tag);
    p.chunks[0]!.text = text;
    return p;
  };

  it('keeps chunk text out of index.db, in a pack a reader reads by range', async () => {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    const text = 'func Wombat() {\n\treturn "héllo, 世界"\n}';
    w.replaceFile(fileInfo('a.go'), withText('A', text), ['1', '2']);
    // The writer reads its own pack before any commit.
    expect(w.chunksOfFile(w.getFile('a.go')!.id)[0]!.text).toBe(text);
    await w.commit();
    expect(packs(ws)).toHaveLength(1);
    expect(fs.readFileSync(path.join(ws, '.vlt', 'index.db')).includes(Buffer.from('Wombat'))).toBe(false);
    const r = await open(ws, 'read');
    expect(r.chunksOfFile(r.getFile('a.go')!.id)[0]!.text).toBe(text);
    expect(r.chunksContaining('世界').map((c) => c.path)).toEqual(['a.go']);
    expect(r.filesContainingAny(['nothing', 'héllo'])).toEqual([r.getFile('a.go')!.id]);
    expect([...r.allChunksForIndexing()].map((c) => c.text)).toContain(text);
  });

  it('rewrites a mostly dead pack and small packs, and removes the packs no commit names', async () => {
    const ws = tmpWorkspace();
    for (let session = 0; session < 12; session++) {
      // A writer per session, each with a pack of its own; every file replaced each time.
      const w = await open(ws, 'write');
      for (let i = 0; i < 20; i++) w.replaceFile(fileInfo(`f${i}.go`, `h${session}-${i}`), withText(`T${i}`, `// session ${session} file ${i}\n${'x'.repeat(200)}`), [`${session}-${i}-a`, `${session}-${i}-b`]);
      await w.commit();
      w.close();
      openStores.splice(openStores.indexOf(w), 1);
      // The commit's packs and the one before's at most: older packs were rewritten and removed.
      expect(packs(ws).length).toBeLessThanOrEqual(2 + 1);
    }
    const r = await open(ws, 'read');
    for (let i = 0; i < 20; i++) expect(r.chunksOfFile(r.getFile(`f${i}.go`)!.id)[0]!.text).toBe(`// session 11 file ${i}\n${'x'.repeat(200)}`);
  });

  it('names no pack bytes that a crash before the commit left behind', async () => {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    w.replaceFile(fileInfo('a.go'), withText('A', 'kept'), ['1', '2']);
    await w.commit();
    // Appended but never committed (the process dies here): the index still reads as committed.
    w.replaceFile(fileInfo('b.go'), withText('B', 'lost'), ['3', '4']);
    w.close({ discard: true });
    openStores.splice(openStores.indexOf(w), 1);
    const w2 = await open(ws, 'write');
    expect(w2.listFiles().map((f) => f.path)).toEqual(['a.go']);
    expect(w2.chunksOfFile(w2.getFile('a.go')!.id)[0]!.text).toBe('kept');
    w2.replaceFile(fileInfo('c.go'), withText('C', 'new'), ['5', '6']);
    await w2.commit();
    expect(w2.chunksOfFile(w2.getFile('c.go')!.id)[0]!.text).toBe('new');
  });
});

describe('large blobs beside index.db', () => {
  const sidecars = (ws: string, key: string) => fs.readdirSync(path.join(ws, '.vlt')).filter((n) => n.startsWith(`${key}-`) && n.endsWith('.bin')).sort();

  it('keeps the search snapshot in a file of its own, named by index.db, with the one before kept for readers', async () => {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    const first = new Uint8Array([1, 2, 3, 4, 5]);
    w.setBlob('search', first);
    w.setBlob('small', new Uint8Array([9]));
    // Before the commit the writer sees its own blob.
    expect(w.getBlob('search')).toEqual(first);
    await w.commit();
    expect(sidecars(ws, 'search')).toHaveLength(1);
    // Not in index.db's table: a reader gets it from the file.
    const r = await open(ws, 'read');
    expect(r.getBlob('search')).toEqual(first);
    expect(r.hasBlob('search')).toBe(true);
    expect(r.getBlob('small')).toEqual(new Uint8Array([9]));
    for (let i = 0; i < 3; i++) {
      w.setBlob('search', new Uint8Array([i]));
      await w.commit();
    }
    // The current file and the one before.
    expect(sidecars(ws, 'search')).toHaveLength(2);
    expect(await r.reload()).toBe(true);
    expect(r.getBlob('search')).toEqual(new Uint8Array([2]));
    expect(r.stats().bytesOnDisk).toBe(fs.statSync(path.join(ws, '.vlt', 'index.db')).size + 1);
    w.deleteBlob('search');
    await w.commit();
    expect(await r.reload()).toBe(true);
    expect(r.hasBlob('search')).toBe(false);
    expect(r.getBlob('search')).toBeUndefined();
  });

  it('skips the page-by-page check only for the very index.db its writer wrote', async () => {
    const { ws } = await indexedWorkspace('a.go', 'A', ['1', '2']);
    const db = path.join(ws, '.vlt', 'index.db');
    const mark = path.join(ws, '.vlt', 'index.written');
    const st = fs.statSync(db);
    expect(fs.readFileSync(mark, 'utf8')).toBe(`${st.ino}:${st.size}:${st.mtimeMs}`);
    // Damaged in place, its identity kept (a disk's fault, not a writer's): opened unchecked,
    // as the trade-off says.
    const bytes = fs.readFileSync(db);
    // The damage is to the root page of a table that opening never reads (`skipped`), so that
    // only the page-by-page check can see it.
    const SQL = await loadSqlJs();
    const probe = new SQL.Database(bytes);
    const pageSize = Number(probe.exec('PRAGMA page_size')[0]!.values[0]![0]);
    const root = Number(probe.exec("SELECT rootpage FROM sqlite_master WHERE name = 'skipped'")[0]!.values[0]![0]);
    probe.close();
    const damaged = Uint8Array.from(bytes);
    for (let i = (root - 1) * pageSize; i < root * pageSize; i++) damaged[i] = (i * 31) & 0xff;
    const fd = fs.openSync(db, 'r+');
    fs.writeSync(fd, damaged, 0, damaged.length, 0);
    fs.closeSync(fd);
    fs.utimesSync(db, st.atimeMs / 1000, st.mtimeMs / 1000);
    if (fs.statSync(db).mtimeMs === st.mtimeMs) await expect(open(ws, 'read')).resolves.toBeDefined();
    // The same bytes as a file the writer did not write (put in its place: another inode, and a
    // time of its own even on a file system whose clock ticks coarser than this test runs):
    // checked, and refused.
    fs.writeFileSync(`${db}.other`, damaged);
    fs.utimesSync(`${db}.other`, st.atimeMs / 1000 + 5, st.mtimeMs / 1000 + 5);
    fs.renameSync(`${db}.other`, db);
    await expect(open(ws, 'read')).rejects.toThrow(/is corrupt/);
    // No record at all: checked.
    fs.writeFileSync(db, bytes);
    fs.rmSync(mark);
    await expect(open(ws, 'read')).resolves.toBeDefined();
  });

  it('a reader whose file was pruned, or is the wrong size, gets no blob rather than an error', async () => {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    w.setBlob('search', new Uint8Array(100).fill(7));
    await w.commit();
    const r = await open(ws, 'read');
    const [name] = sidecars(ws, 'search');
    fs.writeFileSync(path.join(ws, '.vlt', name!), new Uint8Array(50));
    expect(r.getBlob('search')).toBeUndefined();
    fs.rmSync(path.join(ws, '.vlt', name!));
    expect(r.getBlob('search')).toBeUndefined();
  });

  it('opens a blob to be read by range: a sidecar stays readable once pruned, until it is closed', async () => {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    const bytes = Uint8Array.from({ length: 64 }, (_, i) => i);
    w.setBlob('search', bytes);
    w.setBlob('small', new Uint8Array([9, 8]));
    // Before the commit: the pending bytes.
    expect(readRange(w.openBlob('search')!, 60, 4)).toEqual(new Uint8Array([60, 61, 62, 63]));
    await w.commit();
    const r = await open(ws, 'read');
    const source = r.openBlob('search')!;
    expect(source.byteLength).toBe(64);
    const [first] = sidecars(ws, 'search');
    // Two commits later the writer prunes the file; the open source still reads it.
    for (let i = 0; i < 2; i++) {
      w.setBlob('search', new Uint8Array([i]));
      await w.commit();
    }
    expect(sidecars(ws, 'search')).not.toContain(first);
    expect(readRange(source, 10, 3)).toEqual(new Uint8Array([10, 11, 12]));
    expect(() => readRange(source, 62, 4)).toThrow(/past the end/);
    source.close();
    expect(() => readRange(source, 0, 1)).toThrow(/closed/);
    // A blob of the table is read from memory; a missing one is none.
    expect(readRange(r.openBlob('small')!, 0, 2)).toEqual(new Uint8Array([9, 8]));
    expect(r.openBlob('absent')).toBeUndefined();
    // A file of the wrong size is none, as for getBlob.
    expect(await r.reload()).toBe(true);
    const [name] = sidecars(ws, 'search').slice(-1);
    fs.writeFileSync(path.join(ws, '.vlt', name!), new Uint8Array(5));
    expect(r.openBlob('search')).toBeUndefined();
  });

  it('reads an index that still holds the snapshot in its table, and moves it out at the next commit', async () => {
    const { ws } = await indexedWorkspace('a.go', 'A', ['1', '2']);
    // The earlier layout: the blob in index.db's table.
    const SQL = await loadSqlJs();
    const file = path.join(ws, '.vlt', 'index.db');
    const db = new SQL.Database(fs.readFileSync(file));
    db.run('INSERT OR REPLACE INTO blobs(key, value) VALUES (?, ?)', ['search', new Uint8Array([4, 2])]);
    fs.writeFileSync(file, db.export());
    db.close();
    const r = await open(ws, 'read');
    expect(r.getBlob('search')).toEqual(new Uint8Array([4, 2]));
    const w = await open(ws, 'write');
    w.setBlob('search', new Uint8Array([4, 3]));
    await w.commit();
    expect(sidecars(ws, 'search')).toHaveLength(1);
    const again = new SQL.Database(fs.readFileSync(file));
    expect(again.exec("SELECT count(*) FROM blobs WHERE key = 'search'")[0]?.values[0]?.[0]).toBe(0);
    again.close();
    expect(await r.reload()).toBe(true);
    expect(r.getBlob('search')).toEqual(new Uint8Array([4, 3]));
  });
});

describe('embedding cache', () => {
  it('round-trips vectors and survives an index rebuild', async () => {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    const v1 = Float32Array.from({ length: 1536 }, (_, i) => Math.sin(i) * 1e-3);
    const v2 = new Float32Array([1.5, -0, Number.MIN_VALUE, 3.4e38, -7.25]);
    await w.embeddings.putMany('openai:text-embedding-3-small:1536', [
      ['h1', v1],
      ['h2', v2],
    ]);
    await w.embeddings.putMany('other-model', [['h1', new Float32Array([9])]]);
    await w.commit();
    w.close();

    // Corrupt the index: the rebuild must keep embeddings.db.
    fs.writeFileSync(path.join(ws, '.vlt', 'index.db'), 'garbage garbage garbage');
    const w2 = await open(ws, 'write');
    expect(w2.rebuildReason).toMatch(/index\.db is corrupt/);
    const got = await w2.embeddings.getMany('openai:text-embedding-3-small:1536', ['h1', 'h2', 'h3', 'h1']);
    expect([...got.keys()].sort()).toEqual(['h1', 'h2']);
    expect(got.get('h1')).toEqual(v1);
    expect(Array.from(got.get('h2')!)).toEqual(Array.from(v2));
    expect(Object.is(got.get('h2')![1], -0)).toBe(true);
    expect((await w2.embeddings.getMany('other-model', ['h1'])).get('h1')).toEqual(new Float32Array([9]));
    expect((await w2.embeddings.getMany('unknown', ['h1'])).size).toBe(0);
    expect(await w2.embeddings.counts()).toEqual({ 'openai:text-embedding-3-small:1536': 2, 'other-model': 1 });
    expect(await w2.embeddings.prune('openai:text-embedding-3-small:1536', new Set(['h2']))).toBe(1);
    await w2.commit();
    w2.close();

    const r = await open(ws, 'read');
    expect([...(await r.embeddings.getMany('openai:text-embedding-3-small:1536', ['h1', 'h2'])).keys()]).toEqual(['h2']);
  });

  it('treats a corrupt embeddings.db as an empty cache', async () => {
    const ws = tmpWorkspace();
    fs.mkdirSync(path.join(ws, '.vlt'));
    fs.writeFileSync(path.join(ws, '.vlt', 'embeddings.db'), 'not sqlite at all, not even close to it; padding padding padding padding padding padding padding');
    const logger = recordingLogger();
    const r = await open(ws, 'read', logger);
    expect((await r.embeddings.getMany('m', ['h'])).size).toBe(0);
    expect(logger.warnings.join('\n')).toMatch(/embeddings\.db is corrupt/);
  });
});

describe('corrupt index files', () => {
  /** Writes a real committed index with some rows and returns its bytes. */
  async function validIndexBytes(): Promise<Uint8Array> {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    for (let i = 0; i < 30; i++) {
      const p = parsed(`F${i}`);
      p.chunks[0]!.text = 'x'.repeat(3000) + String(i);
      w.replaceFile(fileInfo(`f${i}.go`), p, ['1', '2']);
    }
    await w.commit();
    w.close();
    return fs.readFileSync(path.join(ws, '.vlt', 'index.db'));
  }

  async function wrongSchemaBytes(version: number | null): Promise<Uint8Array> {
    const SQL = await loadSqlJs();
    const db = new SQL.Database(await validIndexBytes());
    if (version === null) db.run("DELETE FROM meta WHERE key = 'schema_version'");
    else db.run("UPDATE meta SET value = ? WHERE key = 'schema_version'", [String(version)]);
    const bytes = db.export();
    db.close();
    return bytes;
  }

  let valid: Uint8Array;
  beforeAll(async () => {
    valid = await validIndexBytes();
  });

  const cases: Array<[string, () => Promise<Uint8Array> | Uint8Array, RegExp]> = [
    ['random bytes', () => Uint8Array.from({ length: 50_000 }, (_, i) => (i * 2654435761) >>> 24), /is corrupt \(file is not a database\)/],
    ['a zero-length file', () => new Uint8Array(0), /is empty \(0 bytes\)/],
    ['a file cut in the middle of a page', () => valid.subarray(0, Math.floor(valid.length / 2) + 100), /is corrupt \(file is truncated/],
    ['a file cut at a page boundary', () => valid.subarray(0, 8192 * 3), /is corrupt \(file is truncated/],
    ['a header only', () => valid.subarray(0, 100), /is corrupt \(file is (truncated|not a database)/],
    [
      'a damaged page',
      () => {
        const b = Uint8Array.from(valid);
        for (let i = 8192; i < 8192 * 2; i++) b[i] = (i * 31) & 0xff;
        return b;
      },
      /is corrupt \(/,
    ],
    ['a valid SQLite file with schema version 0', () => wrongSchemaBytes(0), new RegExp(`has schema version 0, expected ${SCHEMA_VERSION}`)],
    ['a valid SQLite file without a schema version', () => wrongSchemaBytes(null), /has no schema version/],
  ];

  for (const [what, make, reason] of cases) {
    it(`rebuilds from ${what} in write mode and refuses it in read mode`, async () => {
      const bytes = await make();
      const ws = tmpWorkspace();
      const vlt = path.join(ws, '.vlt');
      fs.mkdirSync(vlt);
      fs.writeFileSync(path.join(vlt, 'index.db'), bytes);

      const err = await expectVltError(IndexStore.open(ws, { mode: 'read' }), 'INDEX_CORRUPT');
      expect(err.message).toMatch(reason);
      expect(err.message).toMatch(/^index\.db .*; rebuild it with `vlt coderag init`$/);
      expect(err.message).not.toContain('\n');

      const logger = recordingLogger();
      const w = await open(ws, 'write', logger);
      expect(w.rebuildReason).toMatch(reason);
      expect(w.rebuildReason).toMatch(/^index\.db .*; moved it to index\.db\.corrupt-\S+ and rebuilding the index$/);
      // The store does not log it; the caller reports the one reason once.
      expect(logger.warnings).toEqual([]);
      expect(w.isEmpty).toBe(true);
      expect(w.loadedFromDisk).toBe(false);
      const aside = fs.readdirSync(vlt).filter((n) => n.startsWith('index.db.corrupt-'));
      expect(aside).toHaveLength(1);
      expect(sha256(fs.readFileSync(path.join(vlt, aside[0]!)))).toBe(sha256(bytes));

      w.replaceFile(fileInfo('a.go'), parsed('A'), ['1', '2']);
      await w.commit();
      w.close();
      const r = await open(ws, 'read');
      expect(r.listFiles().map((f) => f.path)).toEqual(['a.go']);
    });
  }

  it('keeps only the newest moved-aside copies', async () => {
    const ws = tmpWorkspace();
    const vlt = path.join(ws, '.vlt');
    fs.mkdirSync(vlt);
    for (const stamp of ['20200101T000000Z', '20210101T000000Z', '20220101T000000Z']) {
      fs.writeFileSync(path.join(vlt, `index.db.corrupt-${stamp}`), 'old');
    }
    fs.writeFileSync(path.join(vlt, 'index.db'), 'junk');
    const w = await open(ws, 'write');
    expect(w.rebuildReason).toBeDefined();
    expect(fs.readdirSync(vlt).filter((n) => n.startsWith('index.db.corrupt-'))).toHaveLength(2);
  });
});

describe('writer lock', () => {
  it('refuses a second writer while readers keep working', async () => {
    const ws = tmpWorkspace();
    const w = await open(ws, 'write');
    w.replaceFile(fileInfo('a.go'), parsed('A'), ['1', '2']);
    await w.commit();
    const lock = JSON.parse(fs.readFileSync(path.join(ws, '.vlt', 'index.lock'), 'utf8')) as Record<string, unknown>;
    expect(lock).toMatchObject({ pid: process.pid, hostname: os.hostname() });
    expect(typeof lock.startedAt).toBe('string');

    const err = await expectVltError(IndexStore.open(ws, { mode: 'write' }), 'INDEX_LOCKED');
    expect(err.message).toBe(`another vlt process (pid ${process.pid}) is writing the index; readers keep working`);
    const r = await open(ws, 'read');
    expect(r.listFiles()).toHaveLength(1);

    w.close();
    expect(fs.existsSync(path.join(ws, '.vlt', 'index.lock'))).toBe(false);
    const w2 = await open(ws, 'write');
    expect(w2.listFiles()).toHaveLength(1);
  });

  it('refuses a writer while another live process holds the lock', async () => {
    const ws = tmpWorkspace();
    fs.mkdirSync(path.join(ws, '.vlt'));
    // The parent of the test runner is alive and is certainly not this process.
    const pid = process.ppid;
    fs.writeFileSync(path.join(ws, '.vlt', 'index.lock'), JSON.stringify({ pid, hostname: os.hostname(), startedAt: new Date().toISOString() }));
    const err = await expectVltError(IndexStore.open(ws, { mode: 'write' }), 'INDEX_LOCKED');
    expect(err.message).toContain(`pid ${pid}`);
    // The refusal leaves the other process's lock alone.
    expect(JSON.parse(fs.readFileSync(path.join(ws, '.vlt', 'index.lock'), 'utf8'))).toMatchObject({ pid });
  });

  it('takes over a stale lock of a dead process', async () => {
    const ws = tmpWorkspace();
    fs.mkdirSync(path.join(ws, '.vlt'));
    fs.writeFileSync(path.join(ws, '.vlt', 'index.lock'), JSON.stringify({ pid: 999999, hostname: os.hostname(), startedAt: '2020-01-01T00:00:00Z' }));
    const logger = recordingLogger();
    const w = await open(ws, 'write', logger);
    expect(logger.warnings.join('\n')).toMatch(/stale index lock of pid 999999/);
    expect(JSON.parse(fs.readFileSync(path.join(ws, '.vlt', 'index.lock'), 'utf8'))).toMatchObject({ pid: process.pid });
    w.close();
    expect(fs.existsSync(path.join(ws, '.vlt', 'index.lock'))).toBe(false);
  });

  it('respects a lock from another host and an unreadable fresh lock', async () => {
    const ws = tmpWorkspace();
    const lockPath = path.join(ws, '.vlt', 'index.lock');
    fs.mkdirSync(path.join(ws, '.vlt'));
    fs.writeFileSync(lockPath, JSON.stringify({ pid: 999999, hostname: 'some-other-host', startedAt: '' }));
    const err = await expectVltError(IndexStore.open(ws, { mode: 'write' }), 'INDEX_LOCKED');
    expect(err.message).toContain('some-other-host');
    expect(err.message).toContain(lockPath);

    fs.writeFileSync(lockPath, '{"pid": 12');
    await expectVltError(IndexStore.open(ws, { mode: 'write' }), 'INDEX_LOCKED');
    // The same unreadable lock, old enough that no writer can still be writing it, is stale.
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(lockPath, old, old);
    const w = await open(ws, 'write');
    expect(w.mode).toBe('write');
  });

  it('removes temporary files of dead writers on open', async () => {
    const ws = tmpWorkspace();
    const vlt = path.join(ws, '.vlt');
    fs.mkdirSync(vlt);
    fs.writeFileSync(path.join(vlt, 'index.db.tmp-999999-3'), 'partial');
    fs.writeFileSync(path.join(vlt, 'embeddings.db.tmp-999998'), 'partial');
    fs.writeFileSync(path.join(vlt, `index.db.tmp-${process.ppid}-1`), 'a live writer');
    await open(ws, 'write');
    expect(fs.readdirSync(vlt).sort()).toEqual([`index.db.tmp-${process.ppid}-1`, 'index.lock']);
  });
});

describe('writeFileAtomic under kill -9', () => {
  it('leaves either the complete old or the complete new file', { timeout: 120_000 }, async () => {
    const dir = tmpWorkspace();
    const bundle = path.join(dir, 'atomic.cjs');
    esbuild.buildSync({
      entryPoints: [path.resolve(__dirname, '../../src/core/store/atomic.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile: bundle,
      logLevel: 'silent',
    });
    const child = path.resolve(__dirname, '../helpers/atomic-writer-child.mjs');
    const target = path.join(dir, 'index.db');
    const size = 16 * 1024 * 1024;
    const valid = new Map([
      [sha256(Buffer.alloc(size, 'O')), 'old'],
      [sha256(Buffer.alloc(size, 'A')), 'A'],
      [sha256(Buffer.alloc(size, 'B')), 'B'],
    ]);
    fs.writeFileSync(target, Buffer.alloc(size, 'O'));

    const seen = new Map<string, number>();
    const trials = 40;
    let midWrite = 0;
    for (let trial = 0; trial < trials; trial++) {
      const proc = spawn(process.execPath, [child, bundle, target, String(size)], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve, reject) => {
        proc.once('error', reject);
        proc.stdout.once('data', () => resolve());
      });
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 150));
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGKILL');
      await exited;

      const which = valid.get(sha256(fs.readFileSync(target)));
      expect(which, `trial ${trial}: the file is neither the old nor a complete new content`).toBeDefined();
      seen.set(which!, (seen.get(which!) ?? 0) + 1);
      // The dead writer's temporary file is cleaned up the way a writer's open does it.
      if ((await removeStaleTempFiles(dir)).length > 0) midWrite++;
      expect(fs.readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([]);
    }
    console.log(`kill -9 trials: ${JSON.stringify(Object.fromEntries(seen))}, ${midWrite} killed with a temporary file written`);
    // The kills really landed at different points: new contents were published, and some
    // writes were cut off half-way (they left a temporary file behind).
    expect((seen.get('A') ?? 0) + (seen.get('B') ?? 0)).toBeGreaterThan(0);
    expect(midWrite).toBeGreaterThan(0);
  });
});
