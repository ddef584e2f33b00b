/**
 * Code-intelligence benchmark: definition precision and reference recall of the navigation
 * chain against gold built from real language servers (test/bench/intel/gold-*.json; see
 * test/bench/intel/README.md), for the fallback chain (no LSP) and the full chain, with
 * latency, and Universal Ctags' own precision on the same gold side by side.
 *
 * The Go standard library (gold from gopls) is measured without a language server only: the
 * fallback chain is what a user without gopls gets, and what the issue's targets are about.
 * `--go-lsp` adds the full chain there too (gopls on a copy of GOROOT/src, outside GOROOT).
 * Where a gold case names its symbol (`qualified`: `fmt.Sprintf`, `http.Server.Serve`), the
 * references are also asked by that name and must be the same as by position; a reference set
 * is also timed as a first page (the CLI's default 200) in this process, a long-lived host, and
 * as a whole `vlt coderag refs --no-lsp --json` process (dist/cli.js, built by `npm run build`).
 *
 * Run through `npm run bench` (test/bench/run.mjs), or alone:
 *   npx esbuild test/bench/intel-bench.ts --bundle --platform=node --format=cjs \
 *     --outfile=.bench/intel-bench.cjs --external:typescript && node .bench/intel-bench.cjs [rxjs|zod|django|go] [--lsp] [--go-lsp]
 */
import { spawnSync } from 'node:child_process';
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
  generator: { tool: string; version: string };
  /** Files the server analysed; references elsewhere are not judged (Go: one build, one module). */
  analysed?: string[];
  definitions: Array<{ id: string; at: GoldPos; name: string; kind: string; gold: GoldPos[] }>;
  references: Array<{ id: string; name: string; qualified?: string; definition: GoldPos; gold: GoldPos[] }>;
}

/** An answer with no location and nothing said about why: what the issue calls silent. */
function silent(a: NavAnswer | undefined): boolean {
  return !!a && a.locations.length === 0 && a.notes.length === 0 && !(a.suggestions?.length ?? 0);
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
  references: {
    cases: number;
    recall: number;
    /** Gold references among the answers in judged files (all files unless the gold has `analysed`). */
    precision: number;
    /** Answers in files the server did not analyse, left out of precision. */
    unjudged: number;
    p50Ms: number;
    p95Ms: number;
    /** The first page (limit 200, the CLI's default) in this long-lived process. */
    firstPage: { p50Ms: number; p95Ms: number; maxMs: number };
    /** Answers with no location and no reason, or that threw, over position and name queries. */
    silent: number;
    errors: number;
    /** Cases with a `qualified` name: asked by name too, and compared with the position answer. */
    byName?: { cases: number; identical: number; p50Ms: number; p95Ms: number; differences: string[] };
    misses: string[];
  };
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
  // The whole GOROOT/src (cmd/ and testdata/ included, 3,800 files indexed), as a user opens it.
  go: { gold: 'gold-go.json', src: () => '/usr/share/go-1.19/src' },
};

/** Whole-process `vlt coderag refs --no-lsp --json` over the gold's reference positions (the index must be closed by this process). */
export interface CliResult {
  cases: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** Exit status other than 0, or a timeout. */
  failed: string[];
  /** Exit 0 with no location and no reason. */
  silent: number;
}

function runCli(ws: string, gold: Gold, prefix: string, cli: string, timeoutMs: number): CliResult {
  const times: number[] = [];
  const failed: string[] = [];
  let silentAnswers = 0;
  for (const r of gold.references) {
    const q = `${prefix}${r.definition.path}:${r.definition.line}:${r.definition.col}`;
    const t0 = performance.now();
    const p = spawnSync(process.execPath, [cli, '-C', ws, 'coderag', 'refs', q, '--no-lsp', '--json'], {
      encoding: 'utf8',
      timeout: timeoutMs,
      maxBuffer: 256 * 1024 * 1024,
      env: { ...process.env, VLT_EMBEDDINGS: 'off' },
    });
    times.push(performance.now() - t0);
    if (p.status !== 0) {
      failed.push(`${r.id} ${q}: ${p.error ? p.error.message : `exit ${p.status}`} ${p.stderr.trim().split('\n')[0] ?? ''}`.trim());
      continue;
    }
    try {
      if (silent(JSON.parse(p.stdout) as NavAnswer)) silentAnswers++;
    } catch {
      silentAnswers++; // exit 0 and no answer at all
    }
  }
  return { cases: gold.references.length, p50Ms: pct(times, 50), p95Ms: pct(times, 95), maxMs: Math.max(0, ...times), failed, silent: silentAnswers };
}

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
    const pageTimes: number[] = [];
    const refNameTimes: number[] = [];
    let returned = 0;
    let returnedGold = 0;
    let unjudged = 0;
    let silentAnswers = 0;
    let errors = 0;
    const refMisses: string[] = [];
    const differences: string[] = [];
    let named = 0;
    let identical = 0;
    let found = 0;
    let total = 0;
    const analysed = gold.analysed ? new Set(gold.analysed.map((p) => `${prefix}${p}`)) : undefined;
    const ask = async (q: string, limit: number, times: number[]): Promise<NavAnswer | undefined> => {
      const t0 = performance.now();
      const a = await nav.references(q, { noLsp: !useLsp, limit, lspTimeoutMs: 30_000 }).catch(() => undefined);
      times.push(performance.now() - t0);
      if (!a) errors++;
      else if (silent(a)) silentAnswers++;
      return a;
    };
    const locKeys = (a: NavAnswer | undefined): string[] => (a?.locations ?? []).map((l) => `${l.path}:${l.line}:${l.col}`).sort();
    for (const r of gold.references) {
      const position = `${prefix}${r.definition.path}:${r.definition.line}:${r.definition.col}`;
      const a = await ask(position, 10_000, refTimes);
      await ask(position, 200, pageTimes);
      if (r.qualified) {
        named++;
        const b = await ask(r.qualified, 10_000, refNameTimes);
        const x = locKeys(a);
        const y = locKeys(b);
        if (x.length === y.length && x.every((k, i) => k === y[i])) identical++;
        else differences.push(`${r.id} ${r.qualified}: by position ${x.length}, by name ${y.length}${b?.definition ? ` (for ${b.definition.path}:${b.definition.line})` : ''}`);
      }
      const all = new Set(locKeys(a));
      const got = analysed ? new Set([...all].filter((k) => analysed.has(k.slice(0, k.indexOf(':'))))) : all;
      unjudged += all.size - got.size;
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
      references: {
        cases: gold.references.length,
        recall: total ? found / total : 0,
        precision: returned ? returnedGold / returned : 0,
        unjudged,
        p50Ms: pct(refTimes, 50),
        p95Ms: pct(refTimes, 95),
        firstPage: { p50Ms: pct(pageTimes, 50), p95Ms: pct(pageTimes, 95), maxMs: Math.max(0, ...pageTimes) },
        silent: silentAnswers,
        errors,
        ...(named > 0 ? { byName: { cases: named, identical, p50Ms: pct(refNameTimes, 50), p95Ms: pct(refNameTimes, 95), differences } } : {}),
        misses: refMisses,
      },
      byName: { p50Ms: pct(nameTimes, 50), p95Ms: pct(nameTimes, 95) },
    };
  } finally {
    await lsp?.dispose();
  }
}

export interface IntelResult {
  /** The server that built the gold, and its version. */
  gold: { tool: string; version: string };
  fallback: ChainResult;
  full?: ChainResult;
  ctags: BaselineResult;
  /** Whole CLI processes (only where asked: `--cli`). */
  cli?: CliResult;
}

export async function runIntelBench(names: string[], work: string, opts: { lsp: boolean; goLsp?: boolean; cli?: string[]; cliTimeoutMs?: number }): Promise<Record<string, IntelResult>> {
  const out: Record<string, IntelResult> = {};
  for (const name of names) {
    const { engine, prefix, gold } = await openCorpus(name, work);
    const useLsp = name === 'go' ? (opts.goLsp ?? false) : opts.lsp;
    try {
      process.stderr.write(`[intel ${name}] fallback chain…\n`);
      const fallback = await runChain(engine, gold, prefix, false);
      process.stderr.write(`[intel ${name}] ctags alone…\n`);
      const ctags = await ctagsBaseline(loadIntelGold(path.resolve('test/bench/intel', CORPORA[name]!.gold)));
      out[name] = { gold: { tool: gold.generator.tool, version: gold.generator.version }, fallback, ctags };
      if (useLsp) process.stderr.write(`[intel ${name}] full chain with language servers…\n`);
      if (useLsp) out[name].full = await runChain(engine, gold, prefix, true);
    } finally {
      await engine.close();
    }
    if (opts.cli?.includes(name)) {
      process.stderr.write(`[intel ${name}] whole CLI processes…\n`);
      out[name].cli = runCli(engine.root, gold, prefix, path.resolve('dist/cli.js'), opts.cliTimeoutMs ?? 60_000);
    }
  }
  return out;
}

if (process.argv[1]?.endsWith('intel-bench.cjs')) {
  const args = process.argv.slice(2);
  const names = args.filter((a) => !a.startsWith('--'));
  const work = path.resolve('.bench');
  mkdirSync(work, { recursive: true });
  // `--cli=go,django`: also time whole CLI processes on those corpora (needs `npm run build`).
  const cli = args.find((a) => a.startsWith('--cli='))?.slice('--cli='.length).split(',');
  runIntelBench(names.length ? names : ['rxjs', 'zod', 'django', 'go'], work, { lsp: args.includes('--lsp'), goLsp: args.includes('--go-lsp'), ...(cli ? { cli } : {}) })
    .then((r) => {
      process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
      process.exit(0);
    })
    .catch((e: unknown) => {
      process.stderr.write(`${String(e instanceof Error ? e.stack : e)}\n`);
      process.exit(1);
    });
}
