/**
 * Locate benchmark: file localization for bug reports, measured two ways.
 *
 * 1. Quality, on the frozen history set (test/bench/locate/history-set.json, rebuilt by
 *    test/bench/locate/build-set.mjs): for each repository whose clone is at
 *    `.bench/history/<name>` (build-set.mjs makes them), the built CLI runs
 *    `vlt eval history --instances <that repository's instances>` as a user would, comparing the
 *    locate mode, search and the whole-file BM25 baseline in the same run. Reported per
 *    repository, overall, and for the instances whose message names no gold file; the targets are
 *    locate Acc@5 and Acc@1 ≥ 1.3× the baseline's, overall and on that subset. A repository
 *    without a clone is listed as skipped, never counted.
 * 2. Latency, in process, on the Go standard library and Django (the copies `npm run bench`
 *    indexes): `Locator.locate` on 20 reports of about 500 words each (a pasted report with a
 *    traceback of corpus files), after the first call, which builds the whole-file index and is
 *    reported apart as the cold call. Target p95 ≤ 300 ms.
 *
 * The result is one JSON object on stdout. Run through `npm run bench -- locate`
 * (test/bench/run.mjs), or alone from the repository root:
 *   npx esbuild test/bench/locate-bench.ts --bundle --platform=node --format=cjs --target=node20 \
 *     --outfile=.bench/locate-bench.cjs && node .bench/locate-bench.cjs [--no-set] [--no-latency] [--no-history]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../../src/core/engine';
import type { EvalMethod, HistoryEvalReport, HistoryInstance, MethodMetrics } from '../../src/core/eval/history';
import { metrics } from '../../src/core/eval/history';
import { locatorFor } from '../../src/core/locate/locate';
import { latency, openCorpus, type Latency } from './oracle-bench';

// Run from the repository root (run.mjs does), as the bundle lives in .bench/.
const repoRoot = process.cwd();
const args = process.argv.slice(2);
const METHODS: readonly EvalMethod[] = ['locate', 'search', 'bm25'];
export const TARGET_RATIO = 1.3;
export const TARGET_P95_MS = 300;

interface SetRepo {
  repo: string;
  language: string;
  head: string;
  candidates: number;
  instances: HistoryInstance[];
}

interface RepoResult {
  repo: string;
  language: string;
  skipped?: string;
  n?: number;
  overall?: Record<EvalMethod, MethodMetrics>;
  wallMs?: number;
}

type Ranked = HistoryEvalReport['instances'][number];

function summary(rows: readonly Ranked[]): Record<EvalMethod, MethodMetrics> {
  return Object.fromEntries(METHODS.map((m) => [m, metrics(rows.map((r) => r.ranks[m] ?? 0))])) as Record<EvalMethod, MethodMetrics>;
}

function ratios(s: Record<EvalMethod, MethodMetrics>): { acc1: number; acc5: number } {
  const r = (a: number, b: number) => (b > 0 ? Number((a / b).toFixed(3)) : 0);
  return { acc1: r(s.locate.acc1, s.bm25.acc1), acc5: r(s.locate.acc5, s.bm25.acc5) };
}

function historySet(): { repos: RepoResult[]; all?: Record<EvalMethod, MethodMetrics>; namesNoGold?: Record<EvalMethod, MethodMetrics>; ratio?: object; ratioNamesNoGold?: object; met?: boolean } {
  const set = JSON.parse(readFileSync(path.join(repoRoot, 'test/bench/locate/history-set.json'), 'utf8')) as { repos: SetRepo[] };
  const cli = path.join(repoRoot, 'dist/cli.js');
  const tmp = mkdtempSync(path.join(tmpdir(), 'vlt-locate-bench-'));
  const repos: RepoResult[] = [];
  const rows: Ranked[] = [];
  try {
    for (const r of set.repos) {
      const dir = path.join(repoRoot, '.bench', 'history', r.repo.split('/')[1]!);
      if (!existsSync(path.join(dir, '.git'))) {
        repos.push({ repo: r.repo, language: r.language, skipped: `no clone at ${path.relative(repoRoot, dir)} (node test/bench/locate/build-set.mjs makes it)` });
        continue;
      }
      process.stderr.write(`[locate] ${r.repo}: ${r.instances.length} fix commits…\n`);
      const env = { ...process.env, VLT_DAEMON: '0', VLT_EMBEDDINGS: 'off' };
      spawnSync(process.execPath, [cli, '-C', dir, 'coderag', 'init', '-q'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
      const instancesFile = path.join(tmp, 'instances.json');
      const outFile = path.join(tmp, 'out.json');
      writeFileSync(instancesFile, JSON.stringify(r.instances));
      const t0 = performance.now();
      const extra = args.includes('--no-history') ? ['--no-history'] : [];
      const run = spawnSync(process.execPath, [cli, '-C', dir, 'eval', 'history', '-q', '--instances', instancesFile, '--max', String(r.instances.length), '--time-limit', '3600', '--out', outFile, ...extra], { env, encoding: 'utf8', stdio: ['ignore', 'ignore', 'inherit'] });
      const wallMs = performance.now() - t0;
      if (run.status !== 0) {
        repos.push({ repo: r.repo, language: r.language, skipped: `vlt eval history exited with ${run.status}` });
        continue;
      }
      const report = JSON.parse(readFileSync(outFile, 'utf8')) as HistoryEvalReport;
      rows.push(...report.instances);
      repos.push({ repo: r.repo, language: r.language, n: report.instances.length, overall: report.overall, wallMs: Math.round(wallMs) });
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  if (rows.length === 0) return { repos };
  const all = summary(rows);
  const namesNoGold = summary(rows.filter((r) => !r.namesGold));
  const ratio = ratios(all);
  const ratioNamesNoGold = ratios(namesNoGold);
  const met = [ratio.acc1, ratio.acc5, ratioNamesNoGold.acc1, ratioNamesNoGold.acc5].every((x) => x >= TARGET_RATIO);
  return { repos, all, namesNoGold, ratio, ratioNamesNoGold, met };
}

/** About 500 words: the corpus's long pasted report, a traceback through corpus files, and prose from one of them. */
function reports(engine: Engine, longQuery: string, n: number): string[] {
  const files = engine.store.listFiles().filter((f) => !engine.isNavigationOnly(f));
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const frames: string[] = [];
    for (let j = 0; j < 8; j++) {
      const f = files[Math.floor(rand() * files.length)]!;
      const syms = engine.store.symbolsOfFile(f.id);
      const s = syms[Math.floor(rand() * syms.length)];
      frames.push(`  File "/srv/app/${f.path}", line ${s?.startLine ?? 1}, in ${s?.name ?? 'run'}`);
    }
    const f = files[Math.floor(rand() * files.length)]!;
    const prose = engine.store
      .chunksOfFile(f.id)
      .map((c) => c.text)
      .join(' ')
      .split(/\s+/)
      .slice(0, 220)
      .join(' ');
    const words = `${longQuery}\nTraceback (most recent call last):\n${frames.join('\n')}\nValueError: unexpected state\n${prose}`.split(/\s+/);
    out.push(words.slice(0, 500).join(' '));
  }
  return out;
}

async function latencyOn(name: 'go' | 'django'): Promise<{ files: number; coldMs: number; warm: Latency; reportWords: number }> {
  const c = await openCorpus(name, { repoRoot });
  try {
    const long = readFileSync(path.join(repoRoot, `test/bench/long-query-${name}.txt`), 'utf8');
    const rs = reports(c.engine, long, 21);
    const locator = locatorFor(c.engine);
    const t0 = performance.now();
    await locator.locate(rs[0]!);
    const coldMs = performance.now() - t0;
    const times: number[] = [];
    for (const r of rs.slice(1)) {
      const t = performance.now();
      await locator.locate(r);
      times.push(performance.now() - t);
    }
    return { files: c.engine.status().files, coldMs: Math.round(coldMs), warm: latency(times), reportWords: rs[1]!.split(/\s+/).length };
  } finally {
    await c.engine.close();
    c.cleanup();
  }
}

async function main(): Promise<void> {
  const result: Record<string, unknown> = { targets: { ratio: TARGET_RATIO, p95Ms: TARGET_P95_MS } };
  if (!args.includes('--no-set')) result.history = historySet();
  if (!args.includes('--no-latency')) {
    const lat: Record<string, unknown> = {};
    for (const name of ['go', 'django'] as const) {
      process.stderr.write(`[locate] latency on ${name}…\n`);
      lat[name] = await latencyOn(name);
    }
    result.latency = lat;
  }
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
