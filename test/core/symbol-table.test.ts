/**
 * The persisted symbol table: what a process that answers one query reads instead of building
 * the table from every symbol row. It must answer exactly what the in-memory table answers, in
 * the same order, with one object per definition; it must never be used once it no longer
 * describes the index; and bytes that are not a table are refused, not misread.
 */
import { cpSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { BlockReader, fileSource, memorySource } from '../../src/core/store/byte-source';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/core/engine';
import { persistIndex } from '../../src/core/indexer';
import type { SearchIndex } from '../../src/core/search/orama-index';
import type { SymbolCandidate } from '../../src/core/search/hybrid';
import { encodeSymbolRows, encodeSymbolTable, PersistedSymbolTable } from '../../src/core/search/symbol-table';
import { coveredIn, type SymbolLookup } from '../../src/core/search/symbol-tables';
import { normalizeSymbolName } from '../../src/core/search/symbol-name';
import { identifierParts } from '../../src/core/search/tokenizer';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { ROOT, tempDir } from '../helpers/cli';

const sym = (name: string, extra: Partial<SymbolCandidate> = {}): SymbolCandidate => ({ name, qualifiedName: name, kind: 'function', fileId: 1, path: 'a.go', startLine: 1, parts: 1, ...extra });

describe('PersistedSymbolTable', () => {
  it('answers what the in-memory tables answer, in order, one object per definition', () => {
    const parse = sym('ParseDuration', { qualifiedName: 'time.ParseDuration', parts: 2, fileId: 7, path: 'time/format.go', startLine: 1530 });
    const parse2 = sym('parse_duration', { kind: 'method', container: 'Flag', parts: 2, path: 'flag/flag.go', startLine: 12 });
    const dur = sym('Duration', { kind: 'type', path: 'time/time.go', startLine: 550 });
    const unicode = sym('Größe', { container: '', path: 'dir/ü.go' });
    const byName = new Map<string, SymbolCandidate[]>([
      ['parseduration', [parse, parse2]],
      ['duration', [dur]],
      ['größe', [unicode]],
    ]);
    const byPart = new Map<string, SymbolCandidate[]>([
      ['parse', [parse, parse2]],
      ['duration', [parse, parse2]],
    ]);
    const t = PersistedSymbolTable.read(encodeSymbolTable({ byName, byPart }, 42, 'navigation'))!;
    expect(t).toBeDefined();
    expect(t.generation).toBe(42);
    expect(t.mode).toBe('navigation');
    for (const [k, list] of byName) expect(t.named(k), k).toEqual(list);
    for (const [k, list] of byPart) expect(t.withPart(k), k).toEqual(list);
    expect(t.named('nothing')).toEqual([]);
    expect(t.withPart('zzz')).toEqual([]);
    // The same definition is the same object through either lookup (search counts coverage by identity).
    expect(t.withPart('parse')[0]).toBe(t.withPart('duration')[0]);
    expect(t.named('parseduration')[0]).toBe(t.withPart('parse')[0]);
    expect(t.allNames()).toEqual(new Set(['ParseDuration', 'parse_duration', 'Duration', 'Größe']));
  });

  it('encoded from the rows, answers list for list what the tables built from the same rows answer', async () => {
    // Every definition of the 49-language fixtures, and the same rows again in another file.
    const dir = tempDir();
    cpSync(path.join(ROOT, 'test/fixtures/lang'), dir, { recursive: true });
    const e = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null, parseWorkers: 0 }, 'write');
    try {
      await e.index();
      const once = [...e.store.eachSymbol({})];
      const rows = [...once, ...once.map((r) => ({ ...r, fileId: r.fileId + 10_000, path: `copy/${r.path}` }))];
      expect(once.length).toBeGreaterThan(300);
      // The tables as a writer builds them in memory.
      const byName = new Map<string, SymbolCandidate[]>();
      for (const r of rows) {
        const key = normalizeSymbolName(r.name);
        if (!byName.has(key)) byName.set(key, []);
        byName.get(key)!.push({ name: r.name, qualifiedName: r.qualifiedName, kind: r.kind, fileId: r.fileId, path: r.path, startLine: r.startLine, parts: identifierParts(r.name).length, ...(r.container ? { container: r.container } : {}) });
      }
      const byPart = new Map<string, SymbolCandidate[]>();
      for (const list of byName.values())
        for (const def of list) {
          if (def.parts < 2) continue;
          for (const part of new Set(identifierParts(def.name))) {
            if (!byPart.has(part)) byPart.set(part, []);
            byPart.get(part)!.push(def);
          }
        }
      const fromRows = PersistedSymbolTable.read(encodeSymbolRows(rows, 9, 'search'))!;
      const fromMaps = PersistedSymbolTable.read(encodeSymbolTable({ byName, byPart }, 9, 'search'))!;
      expect(fromRows.symbolCount).toBe(rows.length);
      expect([...fromRows.byName()]).toEqual([...fromMaps.byName()]);
      for (const [k, list] of byName) expect(fromRows.named(k), k).toEqual(list);
      for (const [k, list] of byPart) expect(fromRows.withPart(k), k).toEqual(list);
      expect(byPart.size).toBeGreaterThan(50);
      expect(fromRows.allNames()).toEqual(fromMaps.allNames());
      expect(PersistedSymbolTable.read(encodeSymbolRows([], 1, 'search'))?.named('x')).toEqual([]);
      // Read where it lies, by range from a file, as a reader opens the committed table.
      const bytes = encodeSymbolRows(rows, 9, 'search');
      const file = path.join(dir, 'table.bin');
      writeFileSync(file, bytes);
      const inPlace = PersistedSymbolTable.open(fileSource(file, bytes.byteLength)!)!;
      for (const [k, list] of byName) expect(inPlace.named(k), k).toEqual(list);
      for (const [k, list] of byPart) expect(inPlace.withPart(k), k).toEqual(list);
      // Coverage counted over the parts' lists, without decoding every definition they hold.
      const partKeys = [...byPart.keys()];
      for (let i = 0; i + 3 <= partKeys.length; i += 3) {
        const terms = [partKeys[i]!, partKeys[i + 1]!, partKeys[i + 2]!, partKeys[i]!, 'nosuchpart'];
        expect(inPlace.coveredBy(terms), terms.join(' ')).toEqual(coveredIn(terms, (p) => byPart.get(p) ?? []));
      }
      const pair = byPart.keys().next().value!;
      const some = byPart.get(pair)![0]!;
      expect(inPlace.coveredBy([...new Set(identifierParts(some.name))])).toContainEqual(some);
      inPlace.close();
    } finally {
      await e.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads pieces of a source through a small cache of blocks: words, and byte runs across blocks', () => {
    const bytes = new Uint8Array(5 * 4096 + 123).map((_, i) => (i * 7919) % 251);
    const words = new DataView(bytes.buffer);
    const reader = new BlockReader(memorySource(bytes), 2);
    for (const at of [0, 4, 4092, 4096, 8188, 20480, 20480 + 116, 0, 12000]) expect(reader.u32(at), String(at)).toBe(words.getUint32(at, true));
    for (const [at, len] of [[4090, 10], [0, 0], [100, 9000], [20000, 603], [4096, 4096]] as const) expect([...reader.bytes(at, len)], `${at}+${len}`).toEqual([...bytes.subarray(at, at + len)]);
    expect(() => reader.bytes(20000, 700)).toThrow(RangeError);
    for (const [at, count] of [[0, 3], [4088, 4], [8192, 1024], [100, 5000]] as const) {
      expect([...reader.u32s(at, count)], `${at}×${count}`).toEqual(Array.from({ length: count }, (_, i) => words.getUint32(at + i * 4, true)));
    }
  });

  it('refuses bytes that are not a whole table', () => {
    const bytes = encodeSymbolTable({ byName: new Map([['a', [sym('a')]]]), byPart: new Map() }, 1, 'navigation');
    expect(PersistedSymbolTable.read(bytes.subarray(0, bytes.length - 4))).toBeUndefined();
    expect(PersistedSymbolTable.read(new Uint8Array(64))).toBeUndefined();
    expect(PersistedSymbolTable.read(new Uint8Array(3))).toBeUndefined();
  });
});

describe('the persisted symbol table in the engine', () => {
  const deps = { fs: nodeWorkspaceFs, embeddingProvider: null, parseWorkers: 0 } as const;
  const open: Engine[] = [];
  afterEach(async () => {
    for (const e of open.splice(0)) await e.close();
  });
  const engine = async (dir: string, mode: 'read' | 'write') => {
    const e = await Engine.open(dir, deps, mode);
    open.push(e);
    return e;
  };
  const hits = async (e: Engine, q: string) => (await e.search(q, { k: 10 })).hits.map((h) => `${h.path}:${h.start_line} ${h.symbol ?? ''} ${h.score.toFixed(6)} ${h.retrievers.join(',')}`);
  const queries = ['Helper', 'serve requests', 'Counter add', 'util helper twice', 'Server.Serve', 'NoSuchName'];
  /** A copy of the Go fixture, indexed and committed by a writer that is closed again. */
  const committedFixture = async () => {
    const dir = tempDir();
    cpSync(path.join(ROOT, 'test/fixtures/intel/go'), dir, { recursive: true });
    const first = await engine(dir, 'write');
    await first.index();
    await first.commit();
    await first.close();
    open.splice(open.indexOf(first), 1);
    return dir;
  };

  it('gives a reader the answers of the tables built in memory, and follows a change once it is committed', async () => {
    const dir = tempDir();
    cpSync(path.join(ROOT, 'test/fixtures/intel/go'), dir, { recursive: true });
    const writer = await engine(dir, 'write');
    await writer.index();
    await writer.commit();
    const reader = await engine(dir, 'read');
    expect(reader.store.symbolTable()).toBeDefined();
    for (const q of queries) expect(await hits(reader, q), q).toEqual(await hits(writer, q));

    // A change: the writer's commit rewrites the table with it.
    writeFileSync(path.join(dir, 'util', 'extra.go'), 'package util\n\n// Wombat helps.\nfunc WombatHelper() int { return 3 }\n');
    await writer.index();
    await writer.commit();
    const after = await engine(dir, 'read');
    expect(await hits(after, 'WombatHelper')).toEqual(await hits(writer, 'WombatHelper'));
    expect((await after.search('WombatHelper', { k: 3 })).hits[0]?.symbol).toBe('WombatHelper');
    for (const q of queries) expect(await hits(after, q), q).toEqual(await hits(writer, q));
  });

  it('is patched, not rebuilt, by a writer that changes a few files, and still answers as a fresh build', async () => {
    const dir = await committedFixture();
    // A new writer, with no table in memory: one file added, one removed, one changed.
    writeFileSync(path.join(dir, 'util', 'extra.go'), 'package util\n\n// Numbat counts.\nfunc NumbatCount() int { return 5 }\n');
    rmSync(path.join(dir, 'util', 'more.go'));
    writeFileSync(path.join(dir, 'run.go'), 'package main\n\nfunc runQuokka() {}\n');
    const second = await engine(dir, 'write');
    await second.index();
    await second.commit();
    await second.close();
    open.splice(open.indexOf(second), 1);
    const reader = await engine(dir, 'read');
    expect(reader.store.symbolTable()).toBeDefined();
    // The reference: a table built from the symbol rows, by a writer that reads them all.
    const fresh = await engine(dir, 'write');
    for (const q of [...queries, 'NumbatCount', 'runQuokka', 'Twice']) expect(await hits(reader, q), q).toEqual(await hits(fresh, q));
    expect((await reader.search('NumbatCount', { k: 3 })).hits[0]?.symbol).toBe('NumbatCount');
    expect((await reader.search('Twice', { k: 5 })).hits.some((h) => h.symbol === 'Twice')).toBe(false);
  });

  it("of a large index is read in place with a writer's edits laid over it, answering as a fresh build before and after the commit", async () => {
    const dir = await committedFixture();
    // Every table counts as large here: the writer lays its edits over the committed one.
    const writer = await Engine.open(dir, { ...deps, symbolOverlayAbove: 0 }, 'write');
    open.push(writer);
    const probes = [...queries, 'NumbatCount', 'runQuokka', 'Twice', 'numbat count', 'quokka run'];
    const edits: Array<() => void> = [
      () => writeFileSync(path.join(dir, 'util', 'extra.go'), 'package util\n\n// Numbat counts.\nfunc NumbatCount() int { return 5 }\n'),
      () => rmSync(path.join(dir, 'util', 'more.go')),
      () => writeFileSync(path.join(dir, 'run.go'), 'package main\n\nfunc runQuokka() {}\n'),
      () => writeFileSync(path.join(dir, 'util', 'extra.go'), 'package util\n\n// Numbat counts twice.\nfunc NumbatCount() int { return 6 }\nfunc NumbatCountTwice() int { return 7 }\n'),
    ];
    const tables = (e: Engine) => (e as unknown as { symbolTables: { lookup(): SymbolLookup } }).symbolTables.lookup();
    const shown = (defs: SymbolCandidate[]) => defs.map((d) => `${d.path}:${d.startLine} ${d.qualifiedName} ${d.parts}`);
    // The reference: a fresh build of a copy of the tree as it stands, with the whole table written for it.
    const freshCopy = async () => {
      const copy = tempDir();
      cpSync(dir, copy, { recursive: true, filter: (src) => !src.includes(`${path.sep}.vlt`) });
      const fresh = await engine(copy, 'write');
      await fresh.index();
      return fresh;
    };
    for (const edit of edits) {
      edit();
      await writer.index({ persist: false });
      const fresh = await freshCopy();
      for (const q of probes) expect(await hits(writer, q), q).toEqual(await hits(fresh, q));
      // The lookups themselves, list for list (search finds a name by more than one way).
      const [w, f] = [tables(writer), tables(fresh)];
      for (const key of ['numbatcount', 'numbatcounttwice', 'runquokka', 'twice', 'helper', 'serve']) expect(shown(w.named(key)), key).toEqual(shown(f.named(key)));
      for (const part of ['numbat', 'count', 'quokka', 'helper']) expect(shown(w.withPart(part)), part).toEqual(shown(f.withPart(part)));
      for (const parts of [['numbat', 'count'], ['numbat', 'count', 'twice'], ['run', 'quokka'], ['util', 'helper', 'twice']]) expect(shown(w.coveredBy(parts)), parts.join(' ')).toEqual(shown(f.coveredBy(parts)));
    }
    expect(tables(writer).named('numbatcounttwice')).toHaveLength(1);
    expect((await writer.search('NumbatCountTwice', { k: 3 })).hits[0]?.symbol).toBe('NumbatCountTwice');
    // The commit keeps the table's file and writes the changes beside it, which a reader lays over it.
    const tableFiles = () => readdirSync(path.join(dir, '.vlt')).filter((f) => f.startsWith('symbols-'));
    const before = tableFiles();
    await writer.commit();
    expect(tableFiles()).toEqual(before);
    expect(writer.store.hasBlob('symbols-delta')).toBe(true);
    const reader = await engine(dir, 'read');
    let fresh = await freshCopy();
    for (const q of probes) expect(await hits(reader, q), q).toEqual(await hits(fresh, q));
    for (const q of probes) expect(await hits(writer, q), q).toEqual(await hits(fresh, q));
    // Read from the table and the delta, not built from the rows.
    const builtFromRows = (e: Engine) => (e as unknown as { symbolTables: { byName?: unknown } }).symbolTables.byName !== undefined;
    expect(builtFromRows(reader)).toBe(false);
    const [r, f] = [tables(reader), tables(fresh)];
    for (const parts of [['numbat', 'count'], ['numbat', 'count', 'twice'], ['run', 'quokka']]) expect(shown(r.coveredBy(parts)), parts.join(' ')).toEqual(shown(f.coveredBy(parts)));
    await writer.close();
    open.splice(open.indexOf(writer), 1);
    // Another writer starts from the table and its delta, and adds to it.
    const next = await Engine.open(dir, { ...deps, symbolOverlayAbove: 0 }, 'write');
    open.push(next);
    writeFileSync(path.join(dir, 'run.go'), 'package main\n\nfunc runQuokkaAgain() {}\n');
    await next.index();
    expect(tableFiles()).toEqual(before);
    const later = await engine(dir, 'read');
    fresh = await freshCopy();
    for (const q of [...probes, 'runQuokkaAgain']) expect(await hits(later, q), q).toEqual(await hits(fresh, q));
    expect(shown(tables(later).named('runquokka'))).toEqual([]);
    expect(shown(tables(later).named('runquokkaagain'))).toHaveLength(1);
    expect(builtFromRows(later)).toBe(false);
    // A checkpoint drops the table the overlay lies over: the next commit writes a whole one.
    writeFileSync(path.join(dir, 'run.go'), 'package main\n\nfunc runWallaby() {}\n');
    await next.index({ persist: false });
    await next.store.commit({ symbolTable: false });
    expect(next.store.hasBlob('symbols')).toBe(false);
    writeFileSync(path.join(dir, 'util', 'extra.go'), 'package util\n\nfunc NumbatLast() int { return 8 }\n');
    await next.index();
    expect(next.store.hasBlob('symbols')).toBe(true);
    expect(next.store.hasBlob('symbols-delta')).toBe(false);
    const last = await engine(dir, 'read');
    fresh = await freshCopy();
    for (const q of [...probes, 'runWallaby', 'NumbatLast']) expect(await hits(last, q), q).toEqual(await hits(fresh, q));
    expect(builtFromRows(last)).toBe(false);
  });

  it('is not used once it no longer describes the index', async () => {
    const dir = tempDir();
    cpSync(path.join(ROOT, 'test/fixtures/intel/go'), dir, { recursive: true });
    const writer = await engine(dir, 'write');
    await writer.index();
    await writer.commit();
    // A commit of changed symbols by a store that writes no table drops the old one.
    writer.store.symbolTableWriter = undefined;
    writeFileSync(path.join(dir, 'util', 'extra.go'), 'package util\n\nfunc Platypus() int { return 4 }\n');
    await writer.index();
    await writer.commit();
    const reader = await engine(dir, 'read');
    expect(reader.store.symbolTable()).toBeUndefined();
    expect((await reader.search('Platypus', { k: 3 })).hits[0]?.symbol).toBe('Platypus');
  });

  it('is not written by a checkpoint (which drops the stale one), and is by the commit after it', async () => {
    const dir = tempDir();
    cpSync(path.join(ROOT, 'test/fixtures/intel/go'), dir, { recursive: true });
    const writer = await engine(dir, 'write');
    await writer.index();
    await writer.commit();
    let encoded = 0;
    const encode = writer.store.symbolTableWriter!;
    writer.store.symbolTableWriter = (generation) => (encoded++, encode(generation));
    writeFileSync(path.join(dir, 'util', 'extra.go'), 'package util\n\nfunc Echidna() int { return 4 }\n');
    await writer.index({ persist: false });
    // What a long build's checkpoint commits.
    await persistIndex(writer.store, (writer as unknown as { searchIndex: SearchIndex }).searchIndex, { checkpoint: true });
    expect(encoded).toBe(0);
    const between = await engine(dir, 'read');
    expect(between.store.symbolTable()).toBeUndefined();
    expect((await between.search('Echidna', { k: 3 })).hits[0]?.symbol).toBe('Echidna');
    // Nothing else changed: the next commit still writes the table, since there is none.
    writer.store.setMeta('touched', '1');
    await writer.store.commit();
    expect(encoded).toBe(1);
    const after = await engine(dir, 'read');
    expect(after.store.symbolTable()).toBeDefined();
    for (const q of [...queries, 'Echidna']) expect(await hits(after, q), q).toEqual(await hits(writer, q));
  });
});
