/**
 * Real-text benchmark: the oracle on text people paste, not on questions written for it.
 *
 * The set is the frozen history set of the locate bench (test/bench/locate/history-set.json):
 * fix commits of 10 public repositories in Python, TypeScript and JavaScript, each with its
 * message and the source files it changed. Both sides of the no-context decision are measured:
 *
 * - **On topic**: each message asked of its own repository at the fix's parent commit, through
 *   the built CLI (`vlt eval history --methods locate,search,oracle`, which replays the commits
 *   in a scratch tree). A decline here is always wrong: the message describes a change to that
 *   code. The oracle's cited files are scored beside `locate`'s and search's (Acc@1/5, a changed
 *   file among the first k), so "evidence never worse than its own retrievers" is checked too.
 * - **Off topic**: fix commits' subjects of two Haskell projects, a document converter and a
 *   containers library (test/bench/oracle/foreign-commits.json, frozen), asked of each repository
 *   at its head in process: they describe code these repositories do not hold. A decline here is
 *   right; generic subjects ("fix typo in manual") are about any project and are not declined.
 *
 * The set is split by instance: even positions are the tuning half (looked at while the rules of
 * oracle/report.ts and decideReport were written), odd positions the test half, which the
 * README reports. `--split tune|test|all` picks one (default test).
 *
 * Needs the clones under .bench/history that test/bench/locate/build-set.mjs makes (from GitHub,
 * or from VLT_HISTORY_MIRRORS); a repository without one is listed as skipped.
 *
 *   npx esbuild test/bench/real-text-bench.ts --bundle --platform=node --format=cjs --target=node20 \
 *     --outfile=.bench/real-text-bench.cjs && node .bench/real-text-bench.cjs [--split test] [--repo NAME] [--no-own] [--no-foreign]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Engine } from '../../src/core/engine';
import type { HistoryEvalReport, HistoryInstance, MethodMetrics } from '../../src/core/eval/history';
import { metrics } from '../../src/core/eval/history';
import { Oracle } from '../../src/core/oracle/oracle';
import { silentLogger } from '../../src/core/ports';
import { nodeWorkspaceFs } from '../../src/node/fs';

const repoRoot = process.cwd();
const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const split = (opt('--split') ?? 'test') as 'tune' | 'test' | 'all';
const onlyRepo = opt('--repo');
export const TARGETS = { ownNoContext: 0.02, foreignNoContext: 0.95 } as const;

interface SetRepo {
  repo: string;
  language: string;
  instances: HistoryInstance[];
}

const inSplit = <T>(xs: readonly T[]) => xs.filter((_, i) => split === 'all' || (split === 'tune' ? i % 2 === 0 : i % 2 === 1));

interface OwnResult {
  n: number;
  declined: number;
  byMethod: Record<'locate' | 'search' | 'oracle', MethodMetrics>;
  declinedExamples: Array<{ query: string; why?: string }>;
  /** The decision's measures for every message (for studying the rule). */
  measures: unknown[];
  wallMs: number;
}

interface ForeignResult {
  n: number;
  declined: number;
  /** Messages answered with evidence, with the first file cited. */
  answeredExamples: Array<{ query: string; from: string; file?: string; threshold?: unknown }>;
  p95Ms: number;
}

function own(r: SetRepo, dir: string, tmp: string): OwnResult | string {
  const cli = path.join(repoRoot, 'dist/cli.js');
  const env = { ...process.env, VLT_DAEMON: '0', VLT_EMBEDDINGS: 'off' };
  const instances = inSplit(r.instances);
  const instancesFile = path.join(tmp, 'instances.json');
  const outFile = path.join(tmp, 'out.json');
  writeFileSync(instancesFile, JSON.stringify(instances));
  const t0 = performance.now();
  const run = spawnSync(process.execPath, [cli, '-C', dir, 'eval', 'history', '-q', '--instances', instancesFile, '--max', String(instances.length), '--time-limit', '3600', '--methods', 'locate,search,oracle', '--out', outFile], { env, encoding: 'utf8', stdio: ['ignore', 'ignore', 'inherit'] });
  if (run.status !== 0) return `vlt eval history exited with ${run.status}`;
  const report = JSON.parse(readFileSync(outFile, 'utf8')) as HistoryEvalReport;
  const rows = report.instances;
  const declined = rows.filter((x) => x.oracle?.noContext);
  return {
    n: rows.length,
    declined: declined.length,
    byMethod: { locate: metrics(rows.map((x) => x.ranks.locate)), search: metrics(rows.map((x) => x.ranks.search)), oracle: metrics(rows.map((x) => x.ranks.oracle)) },
    measures: rows.map((x) => ({ query: x.query.split('\n')[0]!.slice(0, 100), noContext: x.oracle?.noContext, type: x.oracle?.type, threshold: x.oracle?.threshold })),
    declinedExamples: declined.map((x) => ({ query: x.query.split('\n')[0]!.slice(0, 120), ...(x.oracle?.why ? { why: x.oracle.why } : {}) })),
    wallMs: Math.round(performance.now() - t0),
  };
}

async function foreign(dir: string, messages: ReadonlyArray<{ query: string; from: string }>): Promise<ForeignResult> {
  const picked = messages;
  const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null, logger: silentLogger }, 'read');
  try {
    const oracle = new Oracle({ engine });
    const ms: number[] = [];
    let declined = 0;
    const answeredExamples: ForeignResult['answeredExamples'] = [];
    for (const m of picked) {
      const t0 = performance.now();
      const ans = await oracle.ask(m.query, { noLlm: true, noLog: true, explain: true });
      ms.push(performance.now() - t0);
      if (ans.noContext) declined++;
      else answeredExamples.push({ query: m.query.split('\n')[0]!.slice(0, 120), from: m.from, ...(ans.files[0] ? { file: ans.files[0] } : {}), threshold: ans.explain?.threshold });
    }
    ms.sort((a, b) => a - b);
    return { n: picked.length, declined, answeredExamples, p95Ms: Math.round(ms[Math.max(0, Math.ceil(ms.length * 0.95) - 1)] ?? 0) };
  } finally {
    await engine.close();
  }
}

async function main(): Promise<void> {
  const set = JSON.parse(readFileSync(path.join(repoRoot, 'test/bench/locate/history-set.json'), 'utf8')) as { repos: SetRepo[] };
  const foreignSet = JSON.parse(readFileSync(path.join(repoRoot, 'test/bench/oracle/foreign-commits.json'), 'utf8')) as { sources: Array<{ repo: string; messages: string[] }> };
  const foreignMessages = foreignSet.sources.flatMap((src) => src.messages.map((query) => ({ query, from: src.repo })));
  const tmp = mkdtempSync(path.join(tmpdir(), 'vlt-real-text-'));
  const repos: Array<{ repo: string; language: string; skipped?: string; own?: OwnResult | string; foreign?: ForeignResult }> = [];
  try {
    for (const r of set.repos) {
      if (onlyRepo && !r.repo.endsWith(`/${onlyRepo}`)) continue;
      const dir = path.join(repoRoot, '.bench', 'history', r.repo.split('/')[1]!);
      if (!existsSync(path.join(dir, '.git'))) {
        repos.push({ repo: r.repo, language: r.language, skipped: `no clone at ${path.relative(repoRoot, dir)} (node test/bench/locate/build-set.mjs makes it)` });
        continue;
      }
      process.stderr.write(`[real-text] ${r.repo}…\n`);
      spawnSync(process.execPath, [path.join(repoRoot, 'dist/cli.js'), '-C', dir, 'coderag', 'init', '-q'], { env: { ...process.env, VLT_DAEMON: '0', VLT_EMBEDDINGS: 'off' }, stdio: ['ignore', 'ignore', 'inherit'] });
      const row: (typeof repos)[number] = { repo: r.repo, language: r.language };
      if (!args.includes('--no-own')) row.own = own(r, dir, tmp);
      if (!args.includes('--no-foreign')) row.foreign = await foreign(dir, inSplit(foreignMessages));
      repos.push(row);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const owned = repos.flatMap((r) => (r.own && typeof r.own !== 'string' ? [r.own] : []));
  const foreigns = repos.flatMap((r) => (r.foreign ? [r.foreign] : []));
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const weighted = (m: 'locate' | 'search' | 'oracle', k: 'acc1' | 'acc5') => {
    const n = sum(owned.map((o) => o.n));
    return n ? Number((sum(owned.map((o) => o.byMethod[m][k] * o.n)) / n).toFixed(3)) : 0;
  };
  const ownN = sum(owned.map((o) => o.n));
  const foreignN = sum(foreigns.map((f) => f.n));
  const summary = {
    split,
    own: { n: ownN, declined: sum(owned.map((o) => o.declined)), rate: ownN ? Number((sum(owned.map((o) => o.declined)) / ownN).toFixed(4)) : 0, acc1: { locate: weighted('locate', 'acc1'), search: weighted('search', 'acc1'), oracle: weighted('oracle', 'acc1') }, acc5: { locate: weighted('locate', 'acc5'), search: weighted('search', 'acc5'), oracle: weighted('oracle', 'acc5') } },
    foreign: { n: foreignN, declined: sum(foreigns.map((f) => f.declined)), rate: foreignN ? Number((sum(foreigns.map((f) => f.declined)) / foreignN).toFixed(4)) : 0 },
    targets: TARGETS,
  };
  process.stdout.write(`${JSON.stringify({ summary, repos }, null, 2)}\n`);
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
