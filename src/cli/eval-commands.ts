/**
 * `vlt eval history`: file localization measured on the workspace's own git history (see
 * core/eval/history.ts for what is measured). It runs in the process that asked for it, never in
 * the workspace daemon: it indexes a scratch tree of its own for minutes, and the daemon's index
 * is the workspace's, not the history's.
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { VltError } from '../core/errors';
import { ALL_EVAL_METHODS, EVAL_METHODS, LOG_DEPTH, runHistoryEval, sampleInstances, selectInstances, type EvalMethod, type HistoryEvalReport, type HistoryInstance, type MethodMetrics } from '../core/eval/history';
import { GitHistoryRepo } from '../node/history-repo';
import { writeLine } from './io';
import type { CommandContext } from './command-context';
import { listOf, positiveInt } from './options';
import { openScratchEngine } from './runtime';

const parseMethods: (v: string) => EvalMethod[] = listOf(ALL_EVAL_METHODS);

const pct = (x: number) => `${(100 * x).toFixed(1)}%`.padStart(6);

function table(title: string, rows: Record<string, MethodMetrics>): string[] {
  const lines = [title, `  ${'method'.padEnd(8)} ${'n'.padStart(4)}  ${'Acc@1'.padStart(6)} ${'Acc@5'.padStart(6)} ${'Acc@10'.padStart(6)}  ${'MRR'.padStart(5)}`];
  for (const [m, r] of Object.entries(rows)) lines.push(`  ${m.padEnd(8)} ${String(r.n).padStart(4)}  ${pct(r.acc1)} ${pct(r.acc5)} ${pct(r.acc10)}  ${r.mrr.toFixed(3)}`);
  return lines;
}

export function formatHistoryReport(r: HistoryEvalReport): string {
  const lines = [
    `${r.instances.length} fix commits evaluated (of ${r.candidates} candidates) in ${(r.ms / 1000).toFixed(1)} s, ${(r.indexMs / 1000).toFixed(1)} s of it indexing`,
    '',
    ...table('all commits', r.overall),
    '',
    ...table('commits whose message names no changed file', r.namesNoGold),
  ];
  if (r.oracleNoContext) lines.push('', `the oracle declined ${r.oracleNoContext.declined} of ${r.oracleNoContext.n} messages (${pct(r.oracleNoContext.rate).trim()}) as having no relevant context`);
  if (r.skippedForTime > 0) lines.push('', `${r.skippedForTime} sampled commits were not run: the time limit was reached (raise --time-limit)`);
  lines.push('', 'Acc@k: share of commits with a changed file among the first k files; MRR: mean of 1/rank of the first changed file.');
  return lines.join('\n');
}

function parseInstances(text: string, file: string): HistoryInstance[] {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new VltError('USAGE', `${file} is not JSON: ${(e as Error).message}`);
  }
  const list = Array.isArray(v) ? v : (v as { instances?: unknown }).instances;
  if (!Array.isArray(list)) throw new VltError('USAGE', `${file} holds no instances: expected an array, or an object with "instances"`);
  return list.map((x, i) => {
    const o = x as Partial<HistoryInstance>;
    if (typeof o.sha !== 'string' || typeof o.parent !== 'string' || typeof o.query !== 'string' || !Array.isArray(o.gold)) {
      throw new VltError('USAGE', `${file}: instance ${i + 1} needs sha, parent, query and gold`);
    }
    return { sha: o.sha, parent: o.parent, time: Number(o.time ?? 0), query: o.query, gold: o.gold.map(String), namesGold: Boolean(o.namesGold) };
  });
}

export function registerEvalCommands(program: Command, ctx: CommandContext): void {
  const out = (text: string) => writeLine(ctx.io.stdout, text);
  const evalCmd = program.command('eval').description('measure retrieval on this workspace').exitOverride();
  evalCmd
    .command('history')
    .description("file localization on the repository's own fix commits: the message is the query, the changed source files the answer, the parent commit the corpus")
    .option('--max <n>', 'fix commits to evaluate (a deterministic sample)', positiveInt, 100)
    .option('--since <date>', 'only commits after this date (as git log --since)')
    .option('--time-limit <seconds>', 'start no further commit after this long', positiveInt, 600)
    .option('--methods <list>', `methods to compare (${ALL_EVAL_METHODS.join(',')}; default ${EVAL_METHODS.join(',')})`, parseMethods)
    .option('--instances <file>', 'replay these instances (a JSON array or {instances}) instead of sampling the log')
    .option('--list', 'only list the sampled commits (sha, parent, gold files, query); evaluate nothing')
    .option('--out <file>', 'also write the whole report, instance by instance, as JSON')
    .option('--detail', "with --out: the locate mode's first 40 files per commit, with each channel's share of their scores")
    .option('--no-history', "locate without the history channel (the files of past commits with similar messages)")
    .option('--embeddings', 'use the configured embedding endpoint in search and locate (off by default: the eval indexes each parent commit)')
    .option('--json', 'machine-readable output')
    .action(async (o: { list?: boolean; detail?: boolean; history: boolean; max: number; since?: string; timeLimit: number; methods?: EvalMethod[]; instances?: string; out?: string; embeddings?: boolean; json?: boolean }) => {
      ctx.here('eval history');
      const { logger, progress, signal } = ctx.wiring();
      const instances = o.instances ? parseInstances(await readFile(o.instances, 'utf8'), o.instances) : undefined;
      const repo = await GitHistoryRepo.open(ctx.root());
      repo.requireFullHistory();
      if (o.list) {
        const all = selectInstances(await repo.log({ maxCommits: LOG_DEPTH, ...(o.since ? { since: o.since } : {}), ...(signal ? { signal } : {}) }));
        const chosen = sampleInstances(instances ?? all, o.max);
        if (o.json) out(JSON.stringify({ candidates: (instances ?? all).length, instances: chosen }, null, 2));
        else for (const i of chosen) out(`${i.sha.slice(0, 12)}  ${i.gold.join(', ')}${i.namesGold ? '  (named)' : ''}\n    ${i.query.split('\n')[0]}`);
        return;
      }
      try {
        const seeded = await repo.seedIndex();
        logger.debug(seeded ? 'eval: the scratch index starts from the workspace index' : 'eval: the workspace has no index; the first commit is indexed from scratch');
        const report = await runHistoryEval(repo, {
          max: o.max,
          timeLimitMs: o.timeLimit * 1000,
          ...(o.since ? { since: o.since } : {}),
          ...(o.methods ? { methods: o.methods } : {}),
          ...(instances ? { instances } : {}),
          ...(signal ? { signal } : {}),
          onProgress: progress.sink,
          history: o.history,
          detail: Boolean(o.detail && o.out),
          openEngine: (root) => openScratchEngine(root, logger, { embeddings: Boolean(o.embeddings) }),
        });
        if (report.instances.length === 0) logger.warn('no fix-like commit was found: the eval needs commits whose message says fix/bug/crash/wrong… and that modify 1-5 source files');
        if (o.out) await writeFile(o.out, `${JSON.stringify(report, null, 2)}\n`);
        if (o.json) out(JSON.stringify({ candidates: report.candidates, evaluated: report.instances.length, skippedForTime: report.skippedForTime, overall: report.overall, namesNoGold: report.namesNoGold, ...(report.oracleNoContext ? { oracleNoContext: report.oracleNoContext } : {}), ms: report.ms, indexMs: report.indexMs }, null, 2));
        else out(formatHistoryReport(report));
      } finally {
        await repo.dispose();
      }
    });
}
