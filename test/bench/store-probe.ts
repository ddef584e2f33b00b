/**
 * Timing probe for the index store with synthetic data the size of the Go standard library
 * (4,720 files, ~40K chunks of ~1.4 KB, ~150K symbols, ~3M references).
 *
 *   npx vite-node test/bench/store-probe.ts            # default sizes
 *   FILES=1000 npx vite-node test/bench/store-probe.ts # smaller run
 *
 * Prints one line per measured step. The data is deterministic (seeded), so runs compare.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { IndexStore, encodeRefs, encodeRefsWithNames, decodeRefs } from '../../src/core/store/store';
import type { ParsedFile, SymbolKind, SymbolRef } from '../../src/core/types';

const FILES = Number(process.env.FILES ?? 4720);
const CHUNKS = Number(process.env.CHUNKS ?? 40_000);
const SYMBOLS = Number(process.env.SYMBOLS ?? 150_000);
const REFS = Number(process.env.REFS ?? 3_000_000);
const VOCAB = 60_000;
const LOCAL_VOCAB = Number(process.env.LOCAL_VOCAB ?? 120);
const WORST = process.env.WORST === '1';

let seed = 42;
function rand(): number {
  // Mulberry32: fast, seeded, good enough for synthetic data.
  seed |= 0;
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const vocab = Array.from({ length: VOCAB }, (_, i) => `ident${i.toString(36)}${i % 7 === 0 ? 'Writer' : ''}`);
/** Zipf-like pick: small indexes are far more frequent, like real identifiers. */
function pickName(): string {
  return vocab[Math.floor(VOCAB * rand() ** 3)]!;
}

const line = 'func (z *Writer) Close() error { return z.w.Flush(buf[:n]) } // comment\n';
function chunkText(): string {
  const lines = 14 + Math.floor(rand() * 10);
  return line.repeat(lines).slice(0, 900 + Math.floor(rand() * 1000));
}

function makeFile(i: number): ParsedFile {
  const nChunks = Math.round((CHUNKS / FILES) * (0.5 + rand()));
  const nSymbols = Math.round((SYMBOLS / FILES) * (0.5 + rand()));
  const nRefs = Math.round((REFS / FILES) * (0.5 + rand()));
  const kinds: SymbolKind[] = ['function', 'method', 'struct', 'constant', 'variable', 'field'];
  const refs: SymbolRef[] = [];
  // A file mostly reuses its own few identifiers (locals, fields, the package's functions),
  // plus some from everywhere. WORST=1 draws every reference from the global vocabulary.
  const local = Array.from({ length: LOCAL_VOCAB }, pickName);
  let ln = 1;
  for (let r = 0; r < nRefs; r++) {
    ln += rand() < 0.3 ? 1 : 0;
    const name = WORST || rand() < 0.1 ? pickName() : local[Math.floor(rand() * local.length)]!;
    refs.push({ name, line: ln, col: 1 + Math.floor(rand() * 80), kind: rand() < 0.4 ? 'call' : rand() < 0.5 ? 'type' : 'reference' });
  }
  return {
    language: 'go',
    imports: ['"fmt"', '"io"', `"pkg${i % 50}"`],
    importSpecs: [],
    chunks: Array.from({ length: nChunks }, (_, c) => ({
      startLine: c * 20 + 1,
      endLine: c * 20 + 19,
      kind: 'function' as const,
      symbol: `Type${i}.Method${c}`,
      signature: `func (t *Type${i}) Method${c}(a int, b string) error`,
      container: c % 3 === 0 ? `type Type${i} struct` : undefined,
      docstring: c % 2 === 0 ? `Method${c} does a thing with the writer and returns an error when it fails.` : undefined,
      text: chunkText(),
    })),
    symbols: Array.from({ length: nSymbols }, (_, s) => ({
      name: s % 10 === 0 ? pickName() : `Sym${i}_${s}`,
      kind: kinds[s % kinds.length]!,
      qualifiedName: `pkg${i % 50}.Type${i}.Sym${s}`,
      signature: `func Sym${s}(x int) int`,
      startLine: s * 5 + 1,
      endLine: s * 5 + 4,
      container: s % 2 ? `pkg${i % 50}.Type${i}` : undefined,
    })),
    refs,
  };
}

function ms(t0: number): string {
  return `${(performance.now() - t0).toFixed(0)} ms`;
}

async function main(): Promise<void> {
  const ws = mkdtempSync(path.join(os.tmpdir(), 'vlt-store-probe-'));
  try {
    let t = performance.now();
    const files = Array.from({ length: FILES }, (_, i) => makeFile(i));
    const totals = files.reduce(
      (a, f) => ({ chunks: a.chunks + f.chunks.length, symbols: a.symbols + f.symbols.length, refs: a.refs + f.refs.length, text: a.text + f.chunks.reduce((n, c) => n + c.text.length, 0) }),
      { chunks: 0, symbols: 0, refs: 0, text: 0 },
    );
    console.log(`generated ${FILES} files, ${totals.chunks} chunks (${(totals.text / 1e6).toFixed(1)} MB text), ${totals.symbols} symbols, ${totals.refs} refs in ${ms(t)}`);

    t = performance.now();
    let refBytes = 0;
    let pairs = 0;
    for (const f of files) {
      const e = encodeRefsWithNames(f.refs);
      refBytes += e.bytes.length;
      pairs += e.names.length;
    }
    console.log(`encodeRefs alone: ${ms(t)}, ${(refBytes / 1e6).toFixed(1)} MB, ${(refBytes / totals.refs).toFixed(2)} bytes/ref, ${pairs} distinct (name, file) pairs`);

    t = performance.now();
    let store = await IndexStore.open(ws, { mode: 'write' });
    console.log(`open (write, empty): ${ms(t)}`);

    t = performance.now();
    store.transaction(() => {
      files.forEach((f, i) => {
        store.replaceFile({ path: `src/pkg${i % 50}/file${i}.go`, hash: `h${i}`, mtimeMs: 1e12 + i, size: 1000 + i, language: 'go' }, f, f.chunks.map((_, c) => `c${i}_${c}`));
      });
    });
    console.log(`insert all rows (one transaction): ${ms(t)}`);

    {
      // The indexer stores each file as its parse arrives, so per-file transactions are its case.
      const ws2 = mkdtempSync(path.join(os.tmpdir(), 'vlt-store-probe-'));
      const s2 = await IndexStore.open(ws2, { mode: 'write' });
      t = performance.now();
      files.forEach((f, i) => {
        s2.replaceFile({ path: `src/pkg${i % 50}/file${i}.go`, hash: `h${i}`, mtimeMs: 1e12 + i, size: 1000 + i, language: 'go' }, f, f.chunks.map((_, c) => `c${i}_${c}`));
      });
      console.log(`insert all rows (one transaction per file): ${ms(t)}`);
      t = performance.now();
      await s2.commit();
      console.log(`commit: ${ms(t)}`);
      s2.close();
      rmSync(ws2, { recursive: true, force: true });
    }

    t = performance.now();
    await store.commit();
    const size = statSync(path.join(ws, '.vlt', 'index.db')).size;
    console.log(`commit: ${ms(t)}, index.db ${(size / 1e6).toFixed(1)} MB`);

    // Re-inserting every file over existing rows measures the replace path (deletes included).
    t = performance.now();
    store.transaction(() => {
      files.forEach((f, i) => {
        store.replaceFile({ path: `src/pkg${i % 50}/file${i}.go`, hash: `h${i}b`, mtimeMs: 1e12 + i, size: 1000 + i, language: 'go' }, f, f.chunks.map((_, c) => `c${i}_${c}`));
      });
    });
    console.log(`replace all rows (one transaction): ${ms(t)}`);
    t = performance.now();
    for (let i = 0; i < 200; i++) {
      const f = files[i]!;
      store.replaceFile({ path: `src/pkg${i % 50}/file${i}.go`, hash: `h${i}c`, mtimeMs: 1e12 + i, size: 1000 + i, language: 'go' }, f, f.chunks.map((_, c) => `c${i}_${c}`));
    }
    console.log(`replace 200 files, one transaction each: ${ms(t)} (${((performance.now() - t) / 200).toFixed(2)} ms/file)`);
    t = performance.now();
    await store.commit();
    console.log(`commit after replace: ${ms(t)}, index.db ${(statSync(path.join(ws, '.vlt', 'index.db')).size / 1e6).toFixed(1)} MB`);
    store.close();

    t = performance.now();
    store = await IndexStore.open(ws, { mode: 'read' });
    console.log(`open (read, with quick_check): ${ms(t)}`);

    const ids = store.allChunksForIndexing();
    const allIds: number[] = [];
    t = performance.now();
    let textChars = 0;
    for (const c of ids) {
      allIds.push(c.id);
      textChars += c.text.length;
    }
    console.log(`allChunksForIndexing: ${ms(t)} (${allIds.length} chunks, ${(textChars / 1e6).toFixed(1)} M chars)`);

    const sample = Array.from({ length: 10 }, () => allIds[Math.floor(rand() * allIds.length)]!);
    store.getChunks(sample);
    t = performance.now();
    const reps = 200;
    for (let r = 0; r < reps; r++) store.getChunks(Array.from({ length: 10 }, () => allIds[Math.floor(rand() * allIds.length)]!));
    console.log(`getChunks(10 ids): ${((performance.now() - t) / reps).toFixed(3)} ms each`);

    t = performance.now();
    const big = store.getChunks(allIds.slice(0, 1000));
    console.log(`getChunks(1000 ids): ${ms(t)} (${big.length})`);

    t = performance.now();
    for (let r = 0; r < reps; r++) store.findSymbols(pickName());
    console.log(`findSymbols(exact): ${((performance.now() - t) / reps).toFixed(3)} ms each`);
    t = performance.now();
    const pre = store.findSymbols('ident1', { prefix: true, limit: 50 });
    console.log(`findSymbols(prefix, limit 50): ${ms(t)} (${pre.length})`);

    t = performance.now();
    const syms = store.allSymbols();
    console.log(`allSymbols: ${ms(t)} (${syms.length})`);

    t = performance.now();
    const common = store.filesReferencing(vocab[0]!);
    const rare = store.filesReferencing(vocab[30_000]!);
    console.log(`filesReferencing(common, rare): ${ms(t)} (${common.length}, ${rare.length} files)`);
    t = performance.now();
    const locs = store.findRefs(vocab[5]!, 100_000);
    console.log(`findRefs(frequent name): ${ms(t)} (${locs.length} refs)`);

    t = performance.now();
    let decoded = 0;
    for (const f of store.listFiles()) decoded += store.getRefs(f.id).length;
    console.log(`listFiles + getRefs of every file: ${ms(t)} (${decoded} refs)`);
    const check = decodeRefs(encodeRefs(files[0]!.refs));
    if (check.length !== files[0]!.refs.length) throw new Error('refs round trip failed');

    t = performance.now();
    const st = store.stats();
    console.log(`stats: ${ms(t)} ${JSON.stringify({ ...st, languages: undefined })}`);
    store.close();

    t = performance.now();
    const w = await IndexStore.open(ws, { mode: 'write' });
    console.log(`open (write, existing): ${ms(t)}`);
    t = performance.now();
    w.removeFile('src/pkg0/file0.go');
    await w.commit();
    console.log(`removeFile + commit: ${ms(t)}`);
    w.close();

    const mem = process.memoryUsage();
    console.log(`memory: rss ${(mem.rss / 1e6).toFixed(0)} MB, external ${(mem.external / 1e6).toFixed(0)} MB, arrayBuffers ${(mem.arrayBuffers / 1e6).toFixed(0)} MB`);
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
