/**
 * Code-intelligence benchmark: definition precision and reference recall of the navigation
 * chain against gold built from real language servers (test/bench/intel/gold-*.json; see
 * test/bench/intel/README.md), for the fallback chain (no LSP) and the full chain, with
 * latency, and Universal Ctags' own precision on the same gold side by side.
 *
 * Run through `npm run bench` (test/bench/run.mjs), or alone:
 *   npx esbuild test/bench/intel-bench.ts --bundle --platform=node --format=cjs \
 *     --outfile=.bench/intel-bench.cjs --external:typescript && node .bench/intel-bench.cjs [rxjs|zod|django] [--lsp]
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Engine } from '../../src/core/engine';
import type { NavAnswer } from '../../src/core/intel/navigate';
import { silentLogger } from '../../src/core/ports';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { createLanguageServers } from '../../src/node/lsp';
import { ctagsBaseline, loadIntelGold, type BaselineResult } from './intel/ctags-baseline';

interface GoldPos {
  path: string;
  line: number;
  col: number;
}
interface Gold {
  corpus: string;
  root: string;
  definitions: Array<{ id: string; at: GoldPos; name: string; kind: string; gold: GoldPos[] }>;
  references: Array<{ id: string; name: string; definition: GoldPos; gold: GoldPos[] }>;
}

export interface ChainResult {
  definition: {
    cases: number;
    answered: number;
    /** Top answer correct / cases answered. */
    precision: number;
    /** Correct among answers the chain was sure of (not ambiguous, not low confidence). */
    confidentPrecision: number;
    confident: number;
    coverage: number;
    p50Ms: number;
    p95Ms: number;
    perKind: Record<string, { cases: number; answered: number; correct: number }>;
    misses: string[];
  };
  references: { cases: number; recall: number; precision: number; p50Ms: number; p95Ms: number; misses: string[] };
  /** Definition of a bare name from the index (symbol table lookup and ranking). */
  byName: { p50Ms: number; p95Ms: number };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0;
}

const CORPORA: Record<string, { gold: string; src: () => string; nest?: string }> = {
  rxjs: { gold: 'gold-rxjs.json', src: () => path.resolve('node_modules/rxjs/src') },
  zod: { gold: 'gold-zod.json', src: () => path.resolve('node_modules/zod/src') },
  // Django is indexed from its parent directory, as a project that imports `django.…` is.
  django: { gold: 'gold-django.json', src: () => '/usr/lib/python3/dist-packages/django', nest: 'django' },
};

/** A writable copy of the corpus (the index lives in it), indexed. Returns the engine and the path prefix of gold paths. */
async function openCorpus(name: string, work: string): Promise<{ engine: Engine; prefix: string; gold: Gold }> {
  const c = CORPORA[name];
  if (!c) throw new Error(`unknown corpus ${name}`);
  const gold = JSON.parse(readFileSync(path.resolve('test/bench/intel', c.gold), 'utf8')) as Gold;
  const ws = path.join(work, `intel-${name}`);
  const dest = c.nest ? path.join(ws, c.nest) : ws;
  if (!existsSync(dest)) {
    mkdirSync(path.dirname(dest), { recursive: true });
    cpSync(c.src(), dest, { recursive: true, dereference: true });
  }
  // zod imports itself by package name (`zod/v4/core`) and resolves that to its sources through
  // its repository's build setup; the npm package ships no tsconfig. Without one, a copy's
  // self-imports resolve to the installed package outside the workspace, for the language
  // server and for the index alike. This gives the copy what zod's own repository gives it.
  if (name === 'zod') {
    const tsconfig = {
      compilerOptions: {
        target: 'ESNext',
        module: 'ESNext',
        moduleResolution: 'bundler',
        strict: true,
        lib: ['esnext', 'dom'],
        types: ['node'],
        skipLibCheck: true,
        noEmit: true,
        baseUrl: '.',
        paths: { zod: ['./index.ts'], 'zod/*': ['./*', './*/index.ts'] },
      },
      include: ['**/*.ts'],
    };
    writeFileSync(path.join(dest, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
  }
  // rxjs's `src/` ships `tsconfig.base.json` (plus build variants) and no `tsconfig.json`, which
  // its repository has one level up. Without one, the language server builds an inferred
  // project from the files it has opened and their imports, and a reference search misses
  // every file outside it (the barrels, to begin with). The gold was built from
  // `tsconfig.base.json` with `types: []`; the copy gets exactly that as its `tsconfig.json`.
  if (name === 'rxjs') {
    const tsconfig = { extends: './tsconfig.base.json', compilerOptions: { types: [], noEmit: true } };
    writeFileSync(path.join(dest, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
  }
  const engine = await Engine.open(ws, { fs: nodeWorkspaceFs, logger: silentLogger, embeddingProvider: null }, 'write');
  await engine.index();
  return { engine, prefix: c.nest ? `${c.nest}/` : '', gold };
}

function matches(a: { path: string; line: number }, g: GoldPos, prefix: string): boolean {
  return a.path === `${prefix}${g.path}` && a.line === g.line;
}

export async function runChain(engine: Engine, gold: Gold, prefix: string, useLsp: boolean): Promise<ChainResult> {
  const lsp = useLsp ? createLanguageServers({ root: engine.root, logger: silentLogger }) : undefined;
  const nav = engine.navigator(lsp ? { lsp } : {});
  const perKind: ChainResult['definition']['perKind'] = {};
  const times: number[] = [];
  let answered = 0;
  let correct = 0;
  let confident = 0;
  let confidentCorrect = 0;
  const misses: string[] = [];
  try {
    // The first call pays for building the graph and loading grammars; it is not a query.
    await nav.definition(`${prefix}${gold.definitions[0]!.at.path}:${gold.definitions[0]!.at.line}:${gold.definitions[0]!.at.col}`, { noLsp: !useLsp, lspTimeoutMs: 20_000 });
    for (const d of gold.definitions) {
      const k = (perKind[d.kind] ??= { cases: 0, answered: 0, correct: 0 });
      k.cases++;
      const t0 = performance.now();
      let a: NavAnswer | undefined;
      try {
        a = await nav.definition(`${prefix}${d.at.path}:${d.at.line}:${d.at.col}`, { noLsp: !useLsp, lspTimeoutMs: 20_000 });
      } catch (e) {
        misses.push(`${d.id} error ${String(e)}`);
      }
      times.push(performance.now() - t0);
      const top = a?.locations[0];
      if (!a || !top) continue;
      answered++;
      k.answered++;
      const ok = d.gold.some((g) => matches(top, g, prefix));
      if (ok) {
        correct++;
        k.correct++;
      } else if (misses.length < 400) misses.push(`${d.id} ${d.kind} ${d.name} at ${d.at.path}:${d.at.line}:${d.at.col} → ${top.path}:${top.line} (${top.provenance}, ${top.confidence}, ${top.how}); gold ${d.gold.map((g) => `${g.path}:${g.line}`).join(' ')}`);
      if (!a.ambiguous && top.confidence !== 'low') {
        confident++;
        if (ok) confidentCorrect++;
      }
    }
    // Definition by name straight from the index (no position, no language server).
    const nameTimes: number[] = [];
    if (!useLsp) {
      for (const d of gold.definitions) {
        const t0 = performance.now();
        await nav.definition(d.name, { noLsp: true });
        nameTimes.push(performance.now() - t0);
      }
    }
    const refTimes: number[] = [];
    let returned = 0;
    let returnedGold = 0;
    const refMisses: string[] = [];
    let found = 0;
    let total = 0;
    for (const r of gold.references) {
      const t0 = performance.now();
      const a = await nav.references(`${prefix}${r.definition.path}:${r.definition.line}:${r.definition.col}`, { noLsp: !useLsp, limit: 10_000, lspTimeoutMs: 30_000 }).catch(() => undefined);
      refTimes.push(performance.now() - t0);
      const got = new Set((a?.locations ?? []).map((l) => `${l.path}:${l.line}:${l.col}`));
      const goldSet = new Set(r.gold.map((g) => `${prefix}${g.path}:${g.line}:${g.col}`));
      returned += got.size;
      for (const k of got) if (goldSet.has(k)) returnedGold++;
      total += r.gold.length;
      const missed: string[] = [];
      for (const g of r.gold) {
        if (got.has(`${prefix}${g.path}:${g.line}:${g.col}`)) found++;
        else missed.push(`${g.path}:${g.line}:${g.col}`);
      }
      if (missed.length > 0 && refMisses.length < 100) refMisses.push(`${r.id} ${r.name} ${r.definition.path}:${r.definition.line}: missed ${missed.length}/${r.gold.length}, got ${got.size}: ${missed.slice(0, 4).join(' ')}`);
    }
    return {
      definition: {
        cases: gold.definitions.length,
        answered,
        precision: answered ? correct / answered : 0,
        confidentPrecision: confident ? confidentCorrect / confident : 0,
        confident,
        coverage: answered / gold.definitions.length,
        p50Ms: pct(times, 50),
        p95Ms: pct(times, 95),
        perKind,
        misses,
      },
      references: { cases: gold.references.length, recall: total ? found / total : 0, precision: returned ? returnedGold / returned : 0, p50Ms: pct(refTimes, 50), p95Ms: pct(refTimes, 95), misses: refMisses },
      byName: { p50Ms: pct(nameTimes, 50), p95Ms: pct(nameTimes, 95) },
    };
  } finally {
    await lsp?.dispose();
  }
}

export async function runIntelBench(names: string[], work: string, useLsp: boolean): Promise<Record<string, { fallback: ChainResult; full?: ChainResult; ctags: BaselineResult }>> {
  const out: Record<string, { fallback: ChainResult; full?: ChainResult; ctags: BaselineResult }> = {};
  for (const name of names) {
    const { engine, prefix, gold } = await openCorpus(name, work);
    try {
      process.stderr.write(`[intel ${name}] fallback chain…\n`);
      const fallback = await runChain(engine, gold, prefix, false);
      process.stderr.write(`[intel ${name}] ctags alone…\n`);
      const ctags = await ctagsBaseline(loadIntelGold(path.resolve('test/bench/intel', CORPORA[name]!.gold)));
      out[name] = { fallback, ctags };
      if (useLsp) process.stderr.write(`[intel ${name}] full chain with language servers…\n`);
      if (useLsp) out[name].full = await runChain(engine, gold, prefix, true);
    } finally {
      await engine.close();
    }
  }
  return out;
}

if (process.argv[1]?.endsWith('intel-bench.cjs')) {
  const args = process.argv.slice(2);
  const names = args.filter((a) => !a.startsWith('--'));
  const work = path.resolve('.bench');
  mkdirSync(work, { recursive: true });
  runIntelBench(names.length ? names : ['rxjs', 'zod', 'django'], work, args.includes('--lsp'))
    .then((r) => {
      process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
      process.exit(0);
    })
    .catch((e: unknown) => {
      process.stderr.write(`${String(e instanceof Error ? e.stack : e)}\n`);
      process.exit(1);
    });
}
