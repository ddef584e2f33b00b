import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VltError } from '../../src/core/errors';
import { DEF_ID_SCALE, decodeDefNames, decodeDefs, encodeDefsWithNames } from '../../src/core/store/defs-codec';
import { IndexStore, type FileInfo } from '../../src/core/store/store';
import type { ParsedFile, SymbolDef } from '../../src/core/types';

const dirs: string[] = [];
const stores: IndexStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function writer(): Promise<IndexStore> {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'vlt-defs-'));
  dirs.push(ws);
  const s = await IndexStore.open(ws, { mode: 'write' });
  stores.push(s);
  return s;
}

function info(p: string, hash: string): FileInfo {
  return { path: p, hash, mtimeMs: 1, size: 10, language: 'go' };
}

function file(defs: SymbolDef[]): ParsedFile {
  return { language: 'go', imports: [], importSpecs: [], chunks: [], symbols: defs, refs: [] };
}

function def(name: string, startLine: number, extra: Partial<SymbolDef> = {}): SymbolDef {
  return { name, kind: 'function', qualifiedName: name, signature: `func ${name}()`, startLine, endLine: startLine + 2, ...extra };
}

describe('definitions codec', () => {
  it('round-trips names, kinds, qualified names, containers and lines in the stored order', () => {
    const defs: SymbolDef[] = [
      def('Run', 40, { kind: 'method', qualifiedName: 'pkg.Server.Run', container: 'pkg.Server' }),
      def('日本語', 2, { signature: '' }),
      def('Run', 10, { qualifiedName: 'pkg.Run' }),
      def('x'.repeat(300), 2 ** 40, { endLine: 2 ** 40 }),
      def('', 0, { kind: 'variable', container: '' }),
    ];
    const { bytes, names } = encodeDefsWithNames(defs);
    expect(names).toEqual(['Run', '日本語', 'x'.repeat(300), '']);
    expect(decodeDefNames(bytes)).toEqual(names);
    expect(decodeDefs(bytes).map(({ position: _position, ...d }) => d)).toEqual(defs);
    expect(decodeDefs(bytes).map((d) => d.position)).toEqual([0, 1, 2, 3, 4]);
    expect(decodeDefs(bytes, 'Run').map((d) => [d.qualifiedName, d.position])).toEqual([
      ['pkg.Server.Run', 0],
      ['pkg.Run', 2],
    ]);
    expect(decodeDefs(bytes, 'absent')).toEqual([]);
    expect(decodeDefs(encodeDefsWithNames([]).bytes)).toEqual([]);
  });

  it('refuses a damaged blob as a corrupt index, never a wrong definition', () => {
    const { bytes } = encodeDefsWithNames([def('Run', 3), def('Stop', 9)]);
    for (const bad of [bytes.slice(0, bytes.length - 1), Uint8Array.of(9, ...bytes.slice(1)), Uint8Array.of(...bytes, 0)]) {
      expect(() => decodeDefs(bad)).toThrow(VltError);
      try {
        decodeDefs(bad);
      } catch (e) {
        expect((e as VltError).code).toBe('INDEX_CORRUPT');
        expect((e as VltError).message).toMatch(/definition list is malformed/);
      }
    }
    expect(() => encodeDefsWithNames([def('Run', -1)])).toThrow(/start line -1/);
  });
});

describe('definitions stored as one blob per file', () => {
  it('gives ids from the file and position that stay put until the file is stored again', async () => {
    const w = await writer();
    const a = w.replaceFile(info('a.go', '1'), file([def('Alpha', 1), def('Beta', 5)]), []);
    const ids = w.symbolsOfFile(a.fileId).map((s) => s.id);
    expect(ids).toEqual([a.fileId * DEF_ID_SCALE, a.fileId * DEF_ID_SCALE + 1]);
    w.replaceFile(info('b.go', '1'), file([def('Alpha', 3)]), []);
    expect(w.symbolsOfFile(a.fileId).map((s) => s.id)).toEqual(ids);
    expect(w.stats().symbols).toBe(3);
  });

  it('answers exact, prefix and qualified lookups inside an open transaction, before the postings are folded in', async () => {
    const w = await writer();
    w.replaceFile(info('z.go', '1'), file([def('Open', 1)]), []);
    await w.commit();
    w.transaction(() => {
      w.replaceFile(info('a.go', '1'), file([def('OpenFile', 1, { qualifiedName: 'os.OpenFile' }), def('Close', 9)]), []);
      w.removeFile('z.go');
      expect(w.findSymbols('Open', { prefix: true }).map((s) => `${s.path}:${s.name}`)).toEqual(['a.go:OpenFile']);
      expect(w.findSymbols('os.OpenFile').map((s) => s.path)).toEqual(['a.go']);
      expect(w.findSymbols('Open')).toEqual([]);
    });
    expect(w.findSymbols('', { prefix: true }).map((s) => s.name)).toEqual(['Close', 'OpenFile']);
  });

  it('after files churn and come back to the same content, every lookup equals a fresh build', async () => {
    const contents = (round: number) => ({
      'a.go': [def('Parse', 1), def('parseHeader', 20, { container: 'Parse' })],
      'b.go': [def('Parse', 4, { qualifiedName: 'json.Parse' }), def(`Extra${round}`, 30)],
      'c.go': [def('Close', 2)],
    });
    const churned = await writer();
    for (let round = 0; round < 4; round++) {
      for (const [p, defs] of Object.entries(contents(round))) {
        if (round === 2 && p === 'c.go') churned.removeFile(p);
        else churned.replaceFile(info(p, String(round)), file(round === 3 ? defs.filter((d) => !d.name.startsWith('Extra')) : defs), []);
      }
      await churned.commit();
    }
    const fresh = await writer();
    for (const [p, defs] of Object.entries(contents(3))) fresh.replaceFile(info(p, '3'), file(defs.filter((d) => !d.name.startsWith('Extra'))), []);
    await fresh.commit();
    const view = (s: IndexStore) => ({
      exact: s.findSymbols('Parse').map((r) => [r.path, r.qualifiedName, r.startLine]),
      prefix: s.findSymbols('', { prefix: true }).map((r) => [r.path, r.name]),
      qualified: s.findSymbols('json.Parse').map((r) => r.path),
      all: s.allSymbols().map((r) => [r.path, r.name, r.container]),
      count: s.stats().symbols,
    });
    expect(view(churned)).toEqual(view(fresh));
    expect(view(fresh).prefix).toEqual([
      ['c.go', 'Close'],
      ['a.go', 'Parse'],
      ['b.go', 'Parse'],
      ['a.go', 'parseHeader'],
    ]);
  });
});

describe("a file's blobs in the packs beside index.db", () => {
  it('survive the rewrite of small packs into one, and a reopen', async () => {
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'vlt-defs-'));
    dirs.push(ws);
    const refs = (n: number) => [{ name: `use${n}`, line: n + 1, col: 2, kind: 'call' as const }];
    // Each writer appends to a pack of its own: ten writers leave ten small packs.
    for (let n = 0; n < 10; n++) {
      const w = await IndexStore.open(ws, { mode: 'write' });
      w.replaceFile(info(`f${n}.go`, '1'), { ...file([def(`Fn${n}`, n + 1)]), refs: refs(n) }, []);
      if (n > 0) w.replaceFile(info(`f${n - 1}.go`, '2'), { ...file([def(`Fn${n - 1}`, n), def(`Again${n - 1}`, 40)]), refs: refs(n - 1) }, []);
      await w.commit();
      w.close();
    }
    // More than eight small packs: the next commit gathers them into its writer's, the one
    // after removes them (a reader of the commit before may still have been reading them).
    for (const hash of ['1', '2']) {
      const last = await IndexStore.open(ws, { mode: 'write' });
      last.replaceFile(info('other.go', hash), file([def('Other', 1)]), []);
      await last.commit();
      last.close();
    }
    const packs = fs.readdirSync(path.join(ws, '.vlt')).filter((f) => f.endsWith('.pack'));
    expect(packs.length).toBeLessThanOrEqual(2);
    const r = await IndexStore.open(ws, { mode: 'read' });
    stores.push(r);
    for (let n = 0; n < 10; n++) {
      const file = r.getFile(`f${n}.go`)!;
      expect(r.symbolsOfFile(file.id).map((s) => s.name)).toEqual(n < 9 ? [`Fn${n}`, `Again${n}`] : [`Fn${n}`]);
      expect(r.getRefs(file.id)).toEqual(refs(n));
      expect(r.findRefs(`use${n}`).map((x) => x.path)).toEqual([`f${n}.go`]);
    }
    expect(r.findSymbols('Again', { prefix: true })).toHaveLength(9);
  });
});
