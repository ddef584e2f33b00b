/**
 * `npm run bench -- context`: the Context Oracle on the Go standard library and Django (the
 * copies and indexes the other suites make under .bench/), in process as a long-lived host
 * answers (the graph built once, then bundles for refs it has not seen), and as whole CLI
 * processes beside ripgrep looking for the same name. Also impact analysis, the workspace's
 * routes, lint, and the git activity read on a clone of this repository (full, then from the
 * file it keeps).
 *
 * Refs are sampled deterministically: every k-th source file, folder with 3 or more files, and
 * type or function definition, in path order.
 *
 * Usage (after `npm run build`): node .bench/context-bench.cjs  → JSON on stdout.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ContextOracle } from '../../src/core/context/context-oracle';
import { ArchitectureGraph } from '../../src/core/context/architecture-graph';
import type { Engine } from '../../src/core/engine';
import { NodeGitActivity } from '../../src/node/git-activity';
import { latency, openCorpus, type Latency } from './oracle-bench';

// run.mjs runs the suites from the repository root.
const repoRoot = process.cwd();
const SAMPLE = { files: 30, folders: 15, symbols: 30, why: 15 };

interface CorpusContextResult {
  files: number;
  graphMs: number;
  bundle: { files: Latency; folders: Latency; symbols: Latency };
  bundleChars: Latency;
  why: Latency;
  routes: { ms: number; count: number; frameworks: Record<string, number> };
  lintMs: number;
  cli: { ref: string; ctxMs: number; daemonMs: number; rgMs: number };
}

function every<T>(list: readonly T[], n: number): T[] {
  if (list.length <= n) return [...list];
  const step = list.length / n;
  return Array.from({ length: n }, (_, i) => list[Math.floor(i * step)]!);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = performance.now();
  const value = await fn();
  return { ms: performance.now() - t, value };
}

async function measure(engine: Engine): Promise<CorpusContextResult> {
  const g0 = await timed(() => ArchitectureGraph.of(engine));
  const oracle = new ContextOracle(engine);
  const files = engine.store.listFiles().filter((f) => f.language !== 'markdown' && !engine.isNavigationOnly(f)).map((f) => f.path).sort();
  const counts = new Map<string, number>();
  for (const f of files) counts.set(path.posix.dirname(f), (counts.get(path.posix.dirname(f)) ?? 0) + 1);
  const folders = [...counts].filter(([, n]) => n >= 3).map(([d]) => d).sort();
  const fileSet = new Set(files);
  const symbols = engine.store
    .allSymbols()
    .filter((s) => ['class', 'struct', 'interface', 'function', 'method'].includes(s.kind) && fileSet.has(s.path))
    .map((s) => `${s.path}#${s.qualifiedName}`)
    .sort();
  const sizes: number[] = [];
  const run = async (refs: string[]) => {
    const ms: number[] = [];
    for (const ref of refs) {
      const r = await timed(() => oracle.buildContext([ref]));
      ms.push(r.ms);
      sizes.push(JSON.stringify(r.value).length);
    }
    return latency(ms);
  };
  const bundle = { files: await run(every(files, SAMPLE.files)), folders: await run(every(folders, SAMPLE.folders)), symbols: await run(every(symbols, SAMPLE.symbols)) };
  const whyMs: number[] = [];
  for (const ref of every(symbols, SAMPLE.why).reverse()) whyMs.push((await timed(() => oracle.why(ref))).ms);
  const routes = await timed(() => oracle.routes());
  const frameworks: Record<string, number> = {};
  for (const r of routes.value) frameworks[r.framework] = (frameworks[r.framework] ?? 0) + 1;
  const lintRun = await timed(() => oracle.lint());
  const ref = every(files, 7)[3]!;
  return {
    files: files.length,
    graphMs: Math.round(g0.ms),
    bundle,
    bundleChars: latency(sizes),
    why: latency(whyMs),
    routes: { ms: Math.round(routes.ms), count: routes.value.length, frameworks },
    lintMs: Math.round(lintRun.ms),
    cli: { ref, ctxMs: 0, daemonMs: 0, rgMs: 0 },
  };
}

/** Whole CLI processes for one file's bundle (in their own process, then through the daemon), beside ripgrep looking for the file's name; run with the corpus closed. */
function cliTimes(root: string, ref: string): { ref: string; ctxMs: number; daemonMs: number; rgMs: number } {
  // A whole CLI process for one file's bundle, beside ripgrep looking for the file's name.
  const cli = path.join(repoRoot, 'dist', 'cli.js');
  const ctxMs: number[] = [];
  const rgMs: number[] = [];
  const stem = path.posix.basename(ref).replace(/\.[^.]+$/, '');
  for (let i = 0; i < 4; i++) {
    let t = performance.now();
    const r = spawnSync(process.execPath, [cli, '-C', root, 'ctx', ref, '--json'], { encoding: 'utf8', env: { ...process.env, VLT_DAEMON: '0' }, maxBuffer: 64 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`vlt ctx failed: ${r.stderr}`);
    if (i > 0) ctxMs.push(performance.now() - t);
    t = performance.now();
    spawnSync('rg', ['-l', '-w', stem, root], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (i > 0) rgMs.push(performance.now() - t);
  }
  // The same through the workspace daemon: the first call starts it, the next ones are timed.
  const daemonEnv = { ...process.env, VLT_DAEMON: '1', CI: '' };
  const daemonMs: number[] = [];
  for (let i = 0; i < 4; i++) {
    const t = performance.now();
    const r = spawnSync(process.execPath, [cli, '-C', root, 'ctx', ref, '--json'], { encoding: 'utf8', env: daemonEnv, maxBuffer: 64 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`vlt ctx through the daemon failed: ${r.stderr}`);
    if (i > 0) daemonMs.push(performance.now() - t);
  }
  spawnSync(process.execPath, [cli, '-C', root, 'daemon', 'stop'], { env: daemonEnv });
  return { ref, ctxMs: Math.round(median(ctxMs)), daemonMs: Math.round(median(daemonMs)), rgMs: Math.round(median(rgMs)) };
}

async function gitActivity(): Promise<{ commits: number; fullMs: number; fromFileMs: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'vlt-ctx-git-'));
  try {
    execFileSync('git', ['clone', '-q', '--no-checkout', repoRoot, dir]);
    const full = await timed(() => new NodeGitActivity(dir).read());
    const again = await timed(() => new NodeGitActivity(dir).read());
    return { commits: full.value?.times.length ?? 0, fullMs: Math.round(full.ms), fromFileMs: Math.round(again.ms) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const out: Record<string, unknown> = {};
  for (const name of ['go', 'django'] as const) {
    process.stderr.write(`[context] ${name}…\n`);
    const c = await openCorpus(name, { repoRoot });
    let result: CorpusContextResult;
    try {
      result = await measure(c.engine);
    } finally {
      await c.engine.close();
    }
    result.cli = cliTimes(c.root, result.cli.ref);
    c.cleanup();
    out[name] = result;
  }
  out.gitActivity = await gitActivity();
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
