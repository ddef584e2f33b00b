/**
 * Whole-process benchmark: the `vlt` commands a user or an agent runs, timed as whole processes
 * (Node's start-up, the bundle's load, opening the index, the answer, the exit), with the
 * workspace daemon and without it (`VLT_DAEMON=0`), beside ripgrep on the same words in the
 * same run. Medians of `RUNS` runs after a warm-up; then `BACK_TO_BACK` different searches one
 * after another, as an agent makes them.
 *
 * Run: `npm run build && npx esbuild test/bench/process-bench.ts --bundle --platform=node
 * --format=cjs --outfile=.bench/process-bench.cjs && node .bench/process-bench.cjs DIR GOLD CLI
 * SEARCH DEF QUESTION` (DIR: an indexed corpus; GOLD: its gold file, for the back-to-back
 * queries; CLI: dist/cli.js; then the words searched, the name defined and the question asked).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const RUNS = Number(process.env.VLT_BENCH_RUNS ?? 7);
const BACK_TO_BACK = 20;

interface Command {
  name: string;
  args: string[];
}

interface Timing {
  median_ms: number;
  min_ms: number;
  runs: number;
  peak_rss_bytes: number;
}

const [dirArg, goldFile, cliArg, search, def, question] = process.argv.slice(2);
if (!dirArg || !goldFile || !cliArg || !search || !def || !question) {
  process.stderr.write('usage: process-bench DIR GOLD CLI SEARCH DEF QUESTION\n');
  process.exit(2);
}
const dir = path.resolve(dirArg);
const cli = path.resolve(cliArg);
const gold = JSON.parse(readFileSync(goldFile, 'utf8')) as { queries: Array<{ query: string }>; extra_queries: string[] };
const probe = { search, def, question };

// Reports the peak RSS of the process it is preloaded into.
const rssProbe = path.join(tmpdir(), `vlt-rss-probe-${process.pid}.cjs`);
writeFileSync(rssProbe, "process.on('exit', () => { require('fs').writeFileSync(process.env.VLT_RSS_OUT, String(process.resourceUsage().maxRSS * 1024)); });\n");
const rssOut = path.join(tmpdir(), `vlt-rss-${process.pid}`);

function runOnce(cmd: string, args: string[], env: NodeJS.ProcessEnv): { ms: number; rss: number; code: number | null } {
  const t = performance.now();
  const r = spawnSync(cmd, args, { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - t;
  // ripgrep exits 1 when nothing matched; vlt must answer.
  if (r.status !== 0 && !(cmd === 'rg' && r.status === 1)) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  let rss = 0;
  try {
    rss = Number(readFileSync(rssOut, 'utf8'));
  } catch {
    rss = 0;
  }
  return { ms, rss, code: r.status };
}

function time(cmd: string, args: string[], env: NodeJS.ProcessEnv): Timing {
  runOnce(cmd, args, env); // warm-up: the page cache, and the daemon when there is one
  const xs: number[] = [];
  let rss = 0;
  for (let i = 0; i < RUNS; i++) {
    const r = runOnce(cmd, args, env);
    xs.push(r.ms);
    rss = Math.max(rss, r.rss);
  }
  xs.sort((a, b) => a - b);
  return { median_ms: round(xs[Math.floor(xs.length / 2)] ?? 0), min_ms: round(xs[0] ?? 0), runs: RUNS, peak_rss_bytes: rss };
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

const node = process.execPath;
// NODE_EXTRA_CA_CERTS makes Node 20 read and parse the whole certificate bundle before any
// script runs: 60-80 ms more for every process on a machine that sets it (this one does; a
// developer's machine rarely does, one behind a TLS-inspecting proxy may). The table is timed
// without it, and its cost is measured beside, for the commands an agent repeats.
const extraCa = process.env.NODE_EXTRA_CA_CERTS;
const machine: NodeJS.ProcessEnv = { ...process.env, VLT_EMBEDDINGS: 'off', VLT_RSS_OUT: rssOut };
const base: NodeJS.ProcessEnv = { ...machine };
delete base.NODE_EXTRA_CA_CERTS;
const noDaemon = { ...base, VLT_DAEMON: '0' };
const daemon = { ...base, VLT_DAEMON: '1' };
const vlt = (args: string[]) => ['--require', rssProbe, cli, ...args];

const words = (q: string) => q.split(/[^A-Za-z0-9_]+/).filter((w) => w.length > 1);
const rgArgs = (q: string) => ['-i', '-c', ...words(q).flatMap((w) => ['-e', w]), '.'];

const commands: Command[] = [
  { name: '--version', args: ['--version'] },
  { name: 'coderag status', args: ['coderag', 'status'] },
  { name: `coderag def ${probe.def} --no-lsp`, args: ['coderag', 'def', probe.def, '--no-lsp'] },
  { name: `coderag search "${probe.search}"`, args: ['coderag', 'search', probe.search] },
  { name: `oracle --no-llm "${probe.question}"`, args: ['oracle', '--no-llm', probe.question] },
];

const stop = () => spawnSync(node, [cli, 'daemon', 'stop'], { cwd: dir, env: daemon, stdio: 'ignore' });
stop();

/** Starts the daemon and waits until its background warm-up (catch-up, graph, grammars, ctags) is over: steady state. */
const warmDaemon = () => {
  const until = Date.now() + 180_000;
  while (Date.now() < until) {
    const s = spawnSync(node, [cli, 'daemon', 'status', '--json'], { cwd: dir, env: daemon, encoding: 'utf8' });
    const d = (JSON.parse(s.stdout) as { daemon: { warming: boolean } | null }).daemon;
    if (d && !d.warming) return;
    spawnSync('sleep', ['0.5']);
  }
};
// The first command of a workspace without a daemon: it starts one and waits for the index to load.
const firstCall = round(runOnce(node, vlt(['coderag', 'search', probe.search]), daemon).ms);
warmDaemon();

const rows: Array<{ command: string; rg?: Timing; no_daemon: Timing; daemon: Timing }> = [];
const rg = time('rg', rgArgs(probe.search), base);
for (const c of commands) {
  process.stderr.write(`[process] ${c.name}…\n`);
  const without = time(node, vlt(c.args), noDaemon);
  const withDaemon = time(node, vlt(c.args), daemon);
  rows.push({ command: c.name, ...(c.args[1] === 'search' ? { rg } : {}), no_daemon: without, daemon: withDaemon });
}

// An agent's session: different searches back to back.
const queries = [...gold.queries.map((q) => q.query), ...gold.extra_queries].slice(0, BACK_TO_BACK);
const total = (cmd: string, argsOf: (q: string) => string[], env: NodeJS.ProcessEnv) => {
  const t = performance.now();
  for (const q of queries) runOnce(cmd, argsOf(q), env);
  return round(performance.now() - t);
};
process.stderr.write(`[process] ${queries.length} searches back to back…\n`);
const backToBack = {
  queries: queries.length,
  rg_ms: total('rg', rgArgs, base),
  // As an agent runs them: without the memory probe preloaded into each process.
  daemon_ms: total(node, (q) => [cli, 'coderag', 'search', q], daemon),
  no_daemon_ms: total(node, (q) => [cli, 'coderag', 'search', q], noDaemon),
};

const status = spawnSync(node, [cli, 'daemon', 'status', '--json'], { cwd: dir, env: daemon, encoding: 'utf8' });
if (status.status !== 0) throw new Error(`vlt daemon status exited ${status.status}: ${status.stderr}`);
const daemonRss = (JSON.parse(status.stdout) as { daemon: { rss_bytes: number } | null }).daemon?.rss_bytes ?? null;

// The same daemon serves both: NODE_EXTRA_CA_CERTS is not part of the environment it answers for.
const withExtraCa = extraCa
  ? {
      node_start_ms: time(node, ['-e', '0'], machine).median_ms,
      search_daemon_ms: time(node, vlt(['coderag', 'search', probe.search]), { ...machine, VLT_DAEMON: '1' }).median_ms,
      def_daemon_ms: time(node, vlt(['coderag', 'def', probe.def, '--no-lsp']), { ...machine, VLT_DAEMON: '1' }).median_ms,
    }
  : null;
stop();

process.stdout.write(`${JSON.stringify({ runs: RUNS, rows, first_call_ms: firstCall, back_to_back: backToBack, daemon_rss_bytes: daemonRss, node_start_ms: time(node, ['-e', '0'], base).median_ms, with_extra_ca_certs: withExtraCa })}\n`);
