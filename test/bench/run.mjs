#!/usr/bin/env node
// `npm run bench`: indexes real code nobody here wrote (the Go standard library and Django,
// both from Debian) and measures it side by side with ripgrep on the same queries.
// Results: a table on stdout, JSON in .bench/results.json, markdown in .bench/results.md.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, statSync, readdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { runScale, scaleLines } from './scale.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const work = path.join(root, '.bench');
mkdirSync(work, { recursive: true });
// Suites: go, django (the corpus measurements), process, intel, repomap, memory, oracle, nocontext, locate, context, vscode, chat, quality, soak, scale; none named = all.
// `--model`: the nocontext suite answers with the model the user configured (it calls it once per question).
const only = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--split' && all[i - 1] !== '--trees');
const withModel = process.argv.includes('--model');
const want = (suite) => only.length === 0 || only.includes(suite);
const GO_SRC = '/usr/share/go-1.19/src';
// Every suite runs its commands in processes of their own; the process suite measures the
// workspace daemon where it asks for it.
process.env.VLT_DAEMON ??= '0';

const CORPORA = [
  { name: 'go', pkg: 'golang-1.19-src', src: GO_SRC, dest: 'go', gold: 'gold-go.json' },
  { name: 'django', pkg: 'python3-django', src: '/usr/lib/python3/dist-packages/django', dest: 'django/django', gold: 'gold-django.json' },
].filter((c) => want(c.name));

function ensureDebian(pkgs) {
  const missing = pkgs.filter((p) => spawnSync('dpkg', ['-s', p], { stdio: 'ignore' }).status !== 0);
  if (missing.length === 0) return;
  console.error(`installing ${missing.join(' ')} from Debian…`);
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', ...missing], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}
ensureDebian(['ripgrep', ...CORPORA.map((c) => c.pkg)]);

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? 0;
}

function dirBytes(dir) {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    n += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return n;
}

// The engine bench runs as its own process so that its memory and timings are its own.
const engineBench = path.join(work, 'engine-bench.cjs');
await esbuild.build({ entryPoints: [path.join(root, 'test/bench/engine-bench.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: engineBench, logLevel: 'warning' });
const mcpBench = path.join(work, 'mcp-bench.cjs');
await esbuild.build({ entryPoints: [path.join(root, 'test/bench/mcp-bench.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: mcpBench, logLevel: 'warning' });
// Reports the peak RSS of the process it is preloaded into (worker threads included).
const rssProbe = path.join(work, 'rss-probe.cjs');
writeFileSync(rssProbe, "process.on('exit', () => { require('fs').writeFileSync(process.env.VLT_RSS_OUT, String(process.resourceUsage().maxRSS * 1024)); });\n");

const results = { machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`, date: new Date().toISOString().slice(0, 10), corpora: {} };

for (const c of CORPORA) {
  const dir = path.join(work, c.name);
  const target = path.join(work, c.dest);
  if (!existsSync(target)) {
    console.error(`copying ${c.src} → ${target}`);
    mkdirSync(path.dirname(target), { recursive: true });
    cpSync(c.src, target, { recursive: true, dereference: true });
  }
  rmSync(path.join(dir, '.vlt'), { recursive: true, force: true });

  console.error(`[${c.name}] cold index…`);
  const rssOut = path.join(work, `${c.name}.rss`);
  const t0 = performance.now();
  const init = spawnSync(process.execPath, ['--require', rssProbe, path.join(root, 'dist/cli.js'), 'coderag', 'init', dir, '--json'], {
    encoding: 'utf8',
    env: { ...process.env, VLT_RSS_OUT: rssOut, VLT_EMBEDDINGS: 'off' },
    maxBuffer: 64 * 1024 * 1024,
  });
  const coldMs = performance.now() - t0;
  if (init.status !== 0) throw new Error(`init failed: ${init.stderr}`);
  const report = JSON.parse(init.stdout);
  const peakRss = Number(readFileSync(rssOut, 'utf8'));
  const status = JSON.parse(execFileSync(process.execPath, [path.join(root, 'dist/cli.js'), 'coderag', 'status', '--json', '-C', dir], { encoding: 'utf8' }));

  console.error(`[${c.name}] engine measurements…`);
  const gold = JSON.parse(readFileSync(path.join(root, 'test/bench', c.gold), 'utf8'));
  const longQuery = path.join(root, 'test/bench', `long-query-${c.name}.txt`);
  const eng = JSON.parse(
    execFileSync(process.execPath, [engineBench, dir, path.join(root, 'test/bench', c.gold), ...(existsSync(longQuery) ? [longQuery] : [])], {
      encoding: 'utf8',
      env: { ...process.env, VLT_EMBEDDINGS: 'off' },
      maxBuffer: 64 * 1024 * 1024,
    }),
  );

  console.error(`[${c.name}] MCP tool-call overhead…`);
  const mcp = JSON.parse(execFileSync(process.execPath, [mcpBench, dir, path.join(root, 'test/bench', c.gold), path.join(root, 'dist/cli.js')], { encoding: 'utf8' }));

  console.error(`[${c.name}] ripgrep on the same queries…`);
  const queries = [...gold.queries.map((q) => q.query), ...gold.extra_queries];
  const rgTimes = [];
  for (const q of queries) {
    // The fairest grep equivalent of a ranked search: any query word, case-insensitive.
    const words = q.split(/[^A-Za-z0-9_]+/).filter((w) => w.length > 1);
    const args = ['-n', '-i', '--no-heading', '-c', ...words.flatMap((w) => ['-e', w]), '.'];
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      spawnSync('rg', args, { cwd: dir, stdio: 'ignore' });
      best = Math.min(best, performance.now() - t);
      if (i === 0) continue;
      rgTimes.push(performance.now() - t);
    }
  }
  const rg = { p50: pct(rgTimes, 50), p95: pct(rgTimes, 95) };

  results.corpora[c.name] = {
    files: report.filesParsed,
    chunks: report.chunksAdded,
    corpusBytes: dirBytes(target),
    coldMs,
    phases: report.ms,
    filesPerSec: report.filesParsed / (coldMs / 1000),
    chunksPerSec: report.chunksAdded / (coldMs / 1000),
    peakRss,
    bytesOnDisk: status.bytes_on_disk,
    symbols: status.symbols,
    references: status.references,
    ...eng,
    rg,
    mcp,
    speedupVsRg: { p50: rg.p50 / eng.search.p50, p95: rg.p95 / eng.search.p95 },
  };
}

// Whole processes, as a user or an agent runs them: each command with the workspace daemon and
// without it, beside ripgrep on the same words; and 20 different searches back to back.
if (want('process')) {
  ensureDebian(['ripgrep', 'golang-1.19-src', 'python3-django']);
  const processBench = path.join(work, 'process-bench.cjs');
  await esbuild.build({ entryPoints: [path.join(root, 'test/bench/process-bench.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: processBench, logLevel: 'warning' });
  const clientsBench = path.join(work, 'clients-bench.cjs');
  await esbuild.build({ entryPoints: [path.join(root, 'test/bench/clients-bench.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: clientsBench, logLevel: 'warning' });
  const probes = {
    go: { src: GO_SRC, dest: 'go', gold: 'gold-go.json', search: 'parse duration string', def: 'ParseDuration', question: 'How does ParseDuration handle units?' },
    django: { src: '/usr/lib/python3/dist-packages/django', dest: 'django/django', gold: 'gold-django.json', search: 'get object or 404', def: 'get_object_or_404', question: 'How does get_object_or_404 handle a missing object?' },
  };
  results.process = {};
  for (const [name, p] of Object.entries(probes)) {
    const dir = path.join(work, name);
    const target = path.join(work, p.dest);
    if (!existsSync(target)) {
      mkdirSync(path.dirname(target), { recursive: true });
      cpSync(p.src, target, { recursive: true, dereference: true });
    }
    if (!existsSync(path.join(dir, '.vlt', 'index.db'))) {
      console.error(`[process] indexing ${name}…`);
      execFileSync(process.execPath, [path.join(root, 'dist/cli.js'), 'coderag', 'init', dir], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, VLT_EMBEDDINGS: 'off' } });
    }
    console.error(`[process] ${name}: whole processes, with and without the daemon…`);
    results.process[name] = JSON.parse(
      execFileSync(process.execPath, [processBench, dir, path.join(root, 'test/bench', p.gold), path.join(root, 'dist/cli.js'), p.search, p.def, p.question], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }),
    );
    // The editor, an agent and the terminal together: one index in memory, or three.
    results.process[name].clients = JSON.parse(execFileSync(process.execPath, [clientsBench, dir, path.join(root, 'dist/cli.js'), p.search], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
  }
}

// Code intelligence: definitions and references against language-server gold (test/bench/intel),
// the fallback chain and the full chain with language servers, and Universal Ctags alone.
const onlyIntel = only.length === 0 || only.includes('intel');
if (onlyIntel) {
  ensureDebian(['universal-ctags', 'python3-django', 'golang-1.19-src']);
  const intelBench = path.join(work, 'intel-bench.cjs');
  await esbuild.build({ entryPoints: [path.join(root, 'test/bench/intel-bench.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: intelBench, external: ['typescript'], logLevel: 'warning' });
  // Go (gold from gopls) is measured without a language server, and also as whole CLI processes.
  console.error('[intel] definitions and references on rxjs, zod, Django and the Go standard library…');
  results.intel = JSON.parse(
    execFileSync(process.execPath, [intelBench, 'rxjs', 'zod', 'django', 'go', '--lsp', '--cli=go'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * 1024 * 1024 }),
  );
}

/** Bundles one bench script into .bench/ and runs it from the repository root; its stdout is JSON. */
async function runBench(name, args = [], opts = {}) {
  const out = path.join(work, `${name}.cjs`);
  await esbuild.build({ entryPoints: [path.join(root, `test/bench/${name}.ts`)], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: out, logLevel: 'warning', ...opts });
  return JSON.parse(
    execFileSync(process.execPath, [out, ...args], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, VLT_EMBEDDINGS: 'off' }, maxBuffer: 256 * 1024 * 1024 }),
  );
}

// Search quality on the project's frozen query set (test/bench/quality): NDCG@10 and Recall@10
// per language and kind, beside the index's BM25 alone, on the test half; each ranking stage
// measured by ablation. `--split tune` measures the tuning half instead.
if (want('quality')) {
  console.error('[quality] installing the corpora (Debian and npm)…');
  execFileSync('bash', [path.join(root, 'test/bench/quality/install.sh')], { stdio: 'inherit' });
  const splitArg = process.argv.includes('--split') ? process.argv[process.argv.indexOf('--split') + 1] : 'test';
  results.quality = await runBench('quality-bench', ['--split', splitArg, '--oracle', '--ablate', 'all,intent,file-kind,definition,path-words,coherence,diversity']);
}

// The repository map on the Go standard library, on the copy (and index) the go corpus made;
// it indexes that copy itself when the go corpus did not run.
// Scale: cold builds of trees up to the Linux kernel, their memory and what they leave on disk.
// `--trees go,django` limits it to some trees.
// Soak: mixed tool calls from an MCP client to the workspace daemon on the Go standard library
// while files change; errors, memory slope and steady latency. `VLT_SOAK_CALLS` sets the count.
if (want('soak')) {
  ensureDebian(['golang-1.19-src']);
  const dir = path.join(work, 'soak', 'go');
  if (!existsSync(dir)) {
    mkdirSync(path.dirname(dir), { recursive: true });
    cpSync(GO_SRC, dir, { recursive: true, dereference: true });
  }
  rmSync(path.join(dir, '.vlt'), { recursive: true, force: true });
  const cli = path.join(root, 'dist/cli.js');
  console.error('[soak] indexing the Go standard library…');
  execFileSync(process.execPath, [cli, 'coderag', 'init', dir, '--json'], { env: { ...process.env, VLT_EMBEDDINGS: 'off', VLT_DAEMON: '0' }, stdio: ['ignore', 'ignore', 'inherit'] });
  const soakBench = path.join(work, 'soak-bench.cjs');
  await esbuild.build({ entryPoints: [path.join(root, 'test/bench/soak-bench.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: soakBench, logLevel: 'warning' });
  const daemonEnv = { ...process.env, VLT_EMBEDDINGS: 'off' };
  delete daemonEnv.VLT_DAEMON;
  console.error(`[soak] ${process.env.VLT_SOAK_CALLS ?? 10000} tool calls through the daemon while files change…`);
  try {
    results.soak = JSON.parse(execFileSync(process.execPath, [soakBench, dir, cli, process.env.VLT_SOAK_CALLS ?? '10000'], { env: daemonEnv, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
  } finally {
    spawnSync(process.execPath, [cli, '-C', dir, 'daemon', 'stop'], { env: daemonEnv, stdio: 'ignore' });
  }
}

if (want('scale')) {
  ensureDebian(['golang-1.19-src', 'python3-django', 'rust-src', 'linux-source-6.1']);
  const at = process.argv.indexOf('--trees');
  results.scale = await runScale({ root, work, rssProbe, engineBench, only: at > 0 ? (process.argv[at + 1] ?? '').split(',').filter(Boolean) : [] });
}

if (want('repomap')) {
  ensureDebian(['golang-1.19-src']);
  console.error('[repomap] repository map on the Go standard library…');
  results.repomap = await runBench('repomap-bench', [GO_SRC, path.join(work, 'go')]);
}

// Memory: thread push and notes search on a generated vault, in process and through the CLI.
if (want('memory')) {
  console.error('[memory] thread push and notes search…');
  results.memory = await runBench('memory-bench');
}

// The oracle: cited-file recall on the hand-verified question set (test/bench/oracle), ripgrep
// on the same questions, latency extractive and with a fake model, and concurrent asks.
if (want('oracle')) {
  ensureDebian(['golang-1.19-src', 'ripgrep']);
  console.error('[oracle] questions on the Go standard library and on this repository…');
  results.oracle = await runBench('oracle-bench', ['--go-dir', path.join(work, 'go')]);
}

// The oracle's "no relevant context" decision on questions it was not calibrated on
// (test/bench/oracle/no-context.json): off-topic and on-topic questions on the Go standard
// library, Django and this repository, on the copies (and indexes) the go and django corpora made.
if (want('nocontext')) {
  ensureDebian(['golang-1.19-src', 'python3-django']);
  console.error('[nocontext] off-topic and on-topic questions on the Go standard library, Django, this repository, zod, RxJS, Python\'s and Rust\'s standard libraries…');
  results.nocontext = await runBench('no-context-bench', ['--go-dir', path.join(work, 'go'), '--django-dir', path.join(work, 'django'), '--bench-dir', work, ...(withModel ? ['--model'] : [])]);
}

// Real text, both sides of the no-context decision and the oracle's files beside its own
// retrievers: the history set's commit messages asked of their own repositories (at the parent
// commit), and frozen fix-commit subjects of two Haskell projects asked of the same repositories
// (test/bench/real-text-bench.ts); on the clones build-set.mjs makes under .bench/history.
if (want('nocontext') || want('oracle')) {
  const splitArg = process.argv.includes('--split') ? process.argv[process.argv.indexOf('--split') + 1] : 'test';
  console.error(`[real-text] commit messages on their own and on foreign repositories (${splitArg} half)…`);
  results.realText = await runBench('real-text-bench', ['--split', splitArg]);
}

// File localization: the frozen history set (test/bench/locate/history-set.json) on the clones
// build-set.mjs makes under .bench/history, and the locate mode's latency on Go and Django.
if (want('locate')) {
  ensureDebian(['golang-1.19-src', 'python3-django']);
  console.error('[locate] the history set and locate latency…');
  results.locate = await runBench('locate-bench');
}

// The Context Oracle: bundles for sampled files, folders and symbols, impact analysis, routes and
// lint on the Go standard library and Django, in process and as a whole CLI beside ripgrep; the
// git activity read on a clone of this repository.
if (want('context')) {
  ensureDebian(['golang-1.19-src', 'python3-django', 'ripgrep']);
  console.error('[context] bundles, impact, routes and lint on Go and Django…');
  results.context = await runBench('context-bench');
}

// The extension in a real VS Code (code-server + chromium from test/e2e/install.sh): activation,
// first index of the Go standard library in the server, the extension host's event loop, save
// to searchable, and "Where Is This Used?" beside VS Code's own TypeScript server on rxjs.
if (want('vscode')) {
  ensureDebian(['golang-1.19-src']);
  console.error('[vscode] the extension in code-server…');
  results.vscode = await runBench('vscode-bench', [GO_SRC], { external: ['playwright-core', 'esbuild'] });
}

// The chat UI in chromium on the page `vlt serve` serves (the VS Code view's bundle): the
// evidence brief after Enter, the first streamed token, and long tasks while a long answer renders.
if (want('chat')) {
  ensureDebian(['golang-1.19-src']);
  console.error('[chat] the chat page on the Go standard library…');
  results.chat = await runBench('chat-bench', [GO_SRC], { external: ['playwright-core', 'esbuild'] });
}

const mb = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;
const ms = (n) => (n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${n.toFixed(n < 10 ? 1 : 0)} ms`);
const lines = [];
lines.push(`Machine: ${results.machine}; ${results.date}; no embeddings.`);
lines.push('');
const hasCorpora = Object.keys(results.corpora).length > 0;
if (hasCorpora) {
  lines.push(`| | ${Object.keys(results.corpora).join(' | ')} |`);
  lines.push(`|---|${Object.keys(results.corpora).map(() => '---').join('|')}|`);
}
// Rows of the corpus table; nothing when only other suites ran.
const row = (label, f) => hasCorpora && lines.push(`| ${label} | ${Object.values(results.corpora).map(f).join(' | ')} |`);
row('files / chunks / symbols', (r) => `${r.files} / ${r.chunks} / ${r.symbols}`);
row('cold index (wall, incl. process start)', (r) => ms(r.coldMs));
row('files/s, chunks/s', (r) => `${r.filesPerSec.toFixed(0)}, ${r.chunksPerSec.toFixed(0)}`);
row('peak RSS', (r) => mb(r.peakRss));
row('size on disk (.vlt)', (r) => mb(r.bytesOnDisk));
row('reopen (engine open, read mode)', (r) => ms(r.reopenMs));
row('first query (loads symbol table)', (r) => ms(r.firstQueryMs));
row('edit one file → searchable (p50 / max)', (r) => `${ms(r.edit.searchableP50)} / ${ms(r.edit.searchableMax)}`);
row('…then durable (commit p50)', (r) => ms(r.edit.commitP50));
row(`search p50 / p95 (${Object.values(results.corpora)[0]?.search.n ?? 0} runs)`, (r) => `${ms(r.search.p50)} / ${ms(r.search.p95)}`);
row('ripgrep, same queries, p50 / p95', (r) => `${ms(r.rg.p50)} / ${ms(r.rg.p95)}`);
row('speed-up vs rg (p50 / p95)', (r) => `${r.speedupVsRg.p50.toFixed(1)}× / ${r.speedupVsRg.p95.toFixed(1)}×`);
row('long bug-report query p50 / p95', (r) => (r.longQuery ? `${ms(r.longQuery.p50)} / ${ms(r.longQuery.p95)} (${r.longQuery.words} words)` : '-'));
row('search_code over MCP stdio p50 / p95 (overhead vs engine)', (r) => `${ms(r.mcp.mcp.p50)} / ${ms(r.mcp.mcp.p95)} (+${ms(r.mcp.overhead.p50)} / +${ms(r.mcp.overhead.p95)})`);
row('gold queries in top-N', (r) => `${r.quality.filter((q) => q.pass).length} / ${r.quality.length}`);
if (hasCorpora) lines.push('');
for (const [name, r] of Object.entries(results.corpora)) {
  lines.push(`Quality, ${name}:`);
  for (const q of r.quality) lines.push(`- ${q.pass ? 'pass' : 'FAIL'} "${q.query}" → ${q.expect}: rank ${q.rank ?? '>10'} (needs ≤ ${q.top})${q.pass ? '' : `; got ${q.got.join(', ')}`}`);
  if (r.longQuery) lines.push(`- long query top hits: ${r.longQuery.top.slice(0, 3).join(', ')}`);
}
if (results.intel) {
  const pc = (x) => `${(100 * x).toFixed(1)}%`;
  const names = Object.keys(results.intel);
  lines.push('');
  lines.push('Code intelligence against language-server gold (300 definitions and 40 reference sets per corpus; test/bench/intel):');
  lines.push('');
  lines.push(`| | ${names.join(' | ')} |`);
  lines.push(`|---|${names.map(() => '---').join('|')}|`);
  const irow = (label, f) => lines.push(`| ${label} | ${names.map((n) => f(results.intel[n])).join(' | ')} |`);
  irow('definition precision, full chain (LSP first)', (r) => (r.full ? pc(r.full.definition.precision) : '-'));
  irow('definition precision, no LSP: all answers / confident ones (share)', (r) => `${pc(r.fallback.definition.precision)} / ${pc(r.fallback.definition.confidentPrecision)} (${pc(r.fallback.definition.confident / r.fallback.definition.cases)})`);
  irow('definition precision, Universal Ctags alone (coverage)', (r) => `${pc(r.ctags.definitionPrecision)} (${pc(r.ctags.definitionCoverage)})`);
  irow('definition latency p50 / p95: full chain', (r) => (r.full ? `${ms(r.full.definition.p50Ms)} / ${ms(r.full.definition.p95Ms)}` : '-'));
  irow('definition latency p50 / p95: no LSP, at a position', (r) => `${ms(r.fallback.definition.p50Ms)} / ${ms(r.fallback.definition.p95Ms)}`);
  irow('definition latency p50 / p95: by name from the index', (r) => `${ms(r.fallback.byName.p50Ms)} / ${ms(r.fallback.byName.p95Ms)}`);
  irow('reference recall / precision: full chain', (r) => (r.full ? `${pc(r.full.references.recall)} / ${pc(r.full.references.precision)}` : '-'));
  irow('reference recall / precision: no LSP', (r) => `${pc(r.fallback.references.recall)} / ${pc(r.fallback.references.precision)}`);
  irow('reference recall / precision: ctags + word grep', (r) => `${pc(r.ctags.referenceRecallMicro)} / ${pc(r.ctags.referencePrecision)}`);
  irow('references p50 / p95: full chain / no LSP', (r) => `${r.full ? `${ms(r.full.references.p50Ms)} / ${ms(r.full.references.p95Ms)}` : '-'}; ${ms(r.fallback.references.p50Ms)} / ${ms(r.fallback.references.p95Ms)}`);
  irow('references, first page (200), no LSP, in process p50 / p95', (r) => `${ms(r.fallback.references.firstPage.p50Ms)} / ${ms(r.fallback.references.firstPage.p95Ms)}`);
  irow('references as a whole CLI process (`vlt coderag refs --no-lsp --json`) p50 / p95 (failed)', (r) => (r.cli ? `${ms(r.cli.p50Ms)} / ${ms(r.cli.p95Ms)} (${r.cli.failed.length})` : '-'));
  irow('references by name = by position, no LSP', (r) => (r.fallback.references.byName ? `${r.fallback.references.byName.identical} / ${r.fallback.references.byName.cases}` : '-'));
  irow('silent answers (no location, no reason), no LSP', (r) => `${r.fallback.references.silent}${r.cli ? `; CLI ${r.cli.silent}` : ''}`);
  irow('gold from', (r) => `${r.gold.tool} ${r.gold.version}`);
}
const pc = (x) => `${(100 * x).toFixed(1)}%`;
if (results.process) {
  for (const [name, r] of Object.entries(results.process)) {
    lines.push('');
    const ca = r.with_extra_ca_certs;
    lines.push(`Whole processes on ${name} (median of ${r.runs} runs after a warm-up; \`node -e 0\` takes ${ms(r.node_start_ms)} here${ca ? `, timed without this machine's NODE_EXTRA_CA_CERTS, which Node reads at every start: ${ms(ca.node_start_ms)} with it` : ''}):`);
    lines.push('');
    lines.push('| command | ripgrep | no daemon | peak RSS | with the daemon | client RSS |');
    lines.push('|---|---|---|---|---|---|');
    for (const row of r.rows) lines.push(`| \`${row.command}\` | ${row.rg ? ms(row.rg.median_ms) : ''} | ${ms(row.no_daemon.median_ms)} | ${mb(row.no_daemon.peak_rss_bytes)} | ${ms(row.daemon.median_ms)} | ${mb(row.daemon.peak_rss_bytes)} |`);
    const b = r.back_to_back;
    lines.push(`| ${b.queries} different searches back to back | ${ms(b.rg_ms)} | ${ms(b.no_daemon_ms)} | | ${ms(b.daemon_ms)} | daemon ${r.daemon_rss_bytes ? mb(r.daemon_rss_bytes) : '?'} |`);
    lines.push(`| first search, starting the daemon | | | | ${ms(r.first_call_ms)} | |`);
    if (ca) lines.push(`| with NODE_EXTRA_CA_CERTS set: \`node -e 0\`, search, def | | ${ms(ca.node_start_ms)} | | ${ms(ca.search_daemon_ms)}, ${ms(ca.def_daemon_ms)} | |`);
    const c = r.clients;
    if (c) {
      lines.push('');
      lines.push(`Memory of an editor (\`vlt lsp\`), an agent (\`vlt mcp\`) and a terminal search open together on ${name}, each after one search (resident; the terminal's is its peak):`);
      lines.push('');
      lines.push('| | editor | agent | terminal | daemon | all together |');
      lines.push('|---|---|---|---|---|---|');
      for (const [label, t] of [['each in its own process (no daemon)', c.separate], [`through the daemon${c.shared.editor_shared ? ', one index' : ' (the editor did not share it)'}`, c.shared]]) {
        lines.push(`| ${label} | ${mb(t.editor_bytes)} | ${mb(t.agent_bytes)} | ${mb(t.terminal_peak_bytes)} | ${t.daemon_bytes ? mb(t.daemon_bytes) : '-'} | ${mb(t.total_bytes)} |`);
      }
    }
  }
}
if (results.repomap) {
  const r = results.repomap;
  lines.push('');
  lines.push(`Repository map on the Go standard library (${r.files} files, ${r.entries} entries):`);
  lines.push('');
  lines.push('| | measured | target |');
  lines.push('|---|---|---|');
  lines.push(`| cold: open + first map (open / graph / rank / render) | ${ms(r.cold.totalMs)} (${ms(r.cold.openMs)} / ${ms(r.cold.graphMs)} / ${ms(r.cold.rankMs)} / ${ms(r.cold.renderMs)}) | ≤ 2 s |`);
  lines.push(`| cached default map p50 / max (${r.cachedDefault.runs} runs) | ${ms(r.cachedDefault.p50)} / ${ms(r.cachedDefault.max)} | ≤ 200 ms |`);
  lines.push(`| new focus, re-ranked on the cached graph p50 / max (${r.focusRerank.runs} focus sets) | ${ms(r.focusRerank.p50)} / ${ms(r.focusRerank.max)} | ≤ 200 ms |`);
  lines.push(`| same focus again p50 | ${ms(r.focusRepeat.p50)} | |`);
  lines.push(`| scoped to ${r.scoped.scope} | ${ms(r.scoped.ms)}, ${r.scoped.tokens} tokens | |`);
  lines.push(`| ${r.maxBudget.maxTokens}-token map | ${ms(r.maxBudget.ms)}, ${r.maxBudget.tokens} tokens | |`);
}
if (results.memory) {
  const r = results.memory;
  lines.push('');
  lines.push('Memory (generated 1,000-note vault):');
  lines.push('');
  lines.push('| | measured | target |');
  lines.push('|---|---|---|');
  lines.push(`| thread push p50 / p95, in process | ${ms(r.push_p50_ms)} / ${ms(r.push_p95_ms)} | p95 ≤ 50 ms |`);
  lines.push(`| notes search p50 / p95, in process | ${ms(r.notes_search_p50_ms)} / ${ms(r.notes_search_p95_ms)} | p95 ≤ 30 ms |`);
  lines.push(`| notes search re-checking every mtime p50 / p95 | ${ms(r.notes_search_rescan_p50_ms)} / ${ms(r.notes_search_rescan_p95_ms)} | |`);
  lines.push(`| vault index build (wall / CPU) | ${ms(r.vault_index_build_ms)} / ${ms(r.vault_index_build_cpu_ms)} | |`);
  if (r.cli_push_p50_ms !== undefined) lines.push(`| \`vlt thread push\` through the CLI p50 / p95 (\`vlt --version\` p50) | ${ms(r.cli_push_p50_ms)} / ${ms(r.cli_push_p95_ms)} (${ms(r.cli_version_p50_ms)}) | |`);
}
if (results.oracle) {
  const o = results.oracle;
  const names = Object.keys(o.corpora);
  const cols = [...names, 'all'];
  const cell = (f, all) => [...names.map((n) => f(o.corpora[n])), all].join(' | ');
  const frac = (a, b) => (b ? `${a} / ${b}` : '-');
  lines.push('');
  lines.push(`Oracle on the hand-verified question set (test/bench/oracle: ${o.questions.answerable} answerable, ${o.questions.noAnswer} with no answer in the corpus); extractive (no model) unless noted:`);
  lines.push('');
  lines.push(`| | ${cols.join(' | ')} |`);
  lines.push(`|---|${cols.map(() => '---').join('|')}|`);
  lines.push(`| files per corpus | ${cell((c) => String(c.files), '')} |`);
  lines.push(`| Recall@5 of cited files, oracle | ${cell((c) => pc(c.recallAt5), pc(o.extractive.recallAt5))} |`);
  lines.push(`| Recall@5, ripgrep (content words, files by match count) | ${cell((c) => pc(c.rgRecallAt5), pc(o.extractive.rgRecallAt5))} |`);
  lines.push(`| no-context on no-answer questions | ${cell((c) => frac(c.noContextCorrect, c.noAnswer), pc(o.extractive.noContextAccuracy))} |`);
  lines.push(`| false no-context on answerable questions | ${cell((c) => frac(c.falseNoContext, c.answerable), pc(o.extractive.falseNoContextRate))} |`);
  lines.push(`| latency p50 / p95 (${o.extractive.rounds} rounds after a warm-up) | ${cell((c) => `${ms(c.latency.p50)} / ${ms(c.latency.p95)}`, `${ms(o.extractive.latency.p50)} / ${ms(o.extractive.latency.p95)}`)} |`);
  lines.push(`| ripgrep p50 / p95, same questions | ${cell((c) => `${ms(c.rgLatency.p50)} / ${ms(c.rgLatency.p95)}`, `${ms(o.extractive.rgLatency.p50)} / ${ms(o.extractive.rgLatency.p95)}`)} |`);
  lines.push('');
  lines.push(`| Recall@5 by question type | ${Object.keys(o.extractive.perType).join(' | ')} |`);
  lines.push(`|---|${Object.keys(o.extractive.perType).map(() => '---').join('|')}|`);
  lines.push(`| oracle | ${Object.values(o.extractive.perType).map((t) => `${pc(t.recallAt5)} (${t.n})`).join(' | ')} |`);
  lines.push(`| ripgrep | ${Object.values(o.extractive.perType).map((t) => pc(t.rgRecallAt5)).join(' | ')} |`);
  lines.push('');
  lines.push('| target | measured | |');
  lines.push('|---|---|---|');
  const p95 = o.extractive.latency.p95;
  lines.push(`| extractive answer p95 ≤ 1 s | ${ms(p95)} (errors: ${o.extractive.errors}) | ${p95 <= 1000 && o.extractive.errors === 0 ? 'met' : 'not met'} |`);
  if (o.llm) {
    const ov = o.llm.overhead;
    lines.push(`| with a model: time beyond the model's ≤ 200 ms (p50 / p95 over ${o.llm.modelAnswered} answers; model p50 ${ms(o.llm.model.p50)}) | ${ms(ov.p50)} / ${ms(ov.p95)} (errors: ${o.llm.errors}, degraded: ${o.llm.degraded}) | ${ov.n > 0 && ov.p95 <= 200 && o.llm.errors === 0 ? 'met' : 'not met'} |`);
  }
  if (o.concurrency) {
    const c = o.concurrency;
    lines.push(`| ${c.concurrent} concurrent asks (${c.corpus}, ${c.asks} in all): 0 errors, p95 ≤ 3× single | ${c.errors} errors, p95 ${ms(c.latency.p95)} = ${c.ratioP95.toFixed(2)}× single (${ms(c.singleP95)}) | ${c.errors === 0 && c.ratioP95 <= 3 ? 'met' : 'not met'} |`);
  }
}
if (results.nocontext) {
  const n = results.nocontext;
  const names = Object.keys(n.corpora);
  const frac = (t) => `${t.noContext} / ${t.n} (${pc(t.n ? t.noContext / t.n : 0)})`;
  const met = (ok) => (ok ? 'met' : 'not met');
  lines.push('');
  lines.push(`The oracle's "no relevant context" on questions it was not calibrated on (test/bench/oracle/no-context.json), ${n.model ? `answered by ${n.model}` : 'extractive'}:`);
  lines.push('');
  lines.push(`| | ${names.join(' | ')} | all |`);
  lines.push(`|---|${names.map(() => '---').join('|')}|---|`);
  const cell = (f, all) => [...names.map((x) => f(n.corpora[x])), all].join(' | ');
  lines.push(`| off-topic answered "no context" (target ≥ ${pc(n.targets.offTopicNoContext)}) | ${cell((c) => `${frac(c.offTopic)}, ${met(c.met.offTopic)}`, frac(n.all.offTopic))} |`);
  for (const cat of ['other-product', 'other-framework', 'general-knowledge', 'near-miss']) {
    lines.push(`| …${cat} | ${cell((c) => (c.offTopic.perCategory[cat] ? frac(c.offTopic.perCategory[cat]) : '-'), '')} |`);
  }
  lines.push(`| on-topic answered "no context" (target ≤ ${pc(n.targets.onTopicFalseNoContext)}) | ${cell((c) => `${frac(c.onTopic)}, ${met(c.met.onTopic)}`, frac(n.all.onTopic))} |`);
  if (n.model) lines.push(`| …of them the model's verdict (off-topic / on-topic) | ${cell((c) => `${c.modelVerdicts.offTopic} / ${c.modelVerdicts.onTopic}`, '')} |`);
  lines.push(`| latency p50 / p95 | ${cell((c) => `${ms(c.latency.p50)} / ${ms(c.latency.p95)}`, '')} |`);
  for (const [name, c] of Object.entries(n.corpora)) {
    for (const w of c.wrong.onTopicNoContext) lines.push(`- ${name}: on-topic ${w.id} answered "no context": "${w.question}"`);
  }
}
if (results.realText) {
  const R = results.realText;
  const s = R.summary;
  const ran = R.repos.filter((r) => !r.skipped);
  lines.push('');
  lines.push(`The oracle on real text (${s.split} half; ${ran.length} of ${R.repos.length} repositories have a clone under .bench/history):`);
  if (ran.length > 0) {
    lines.push('');
    lines.push('| | messages | answered "no context" | target | oracle Acc@1 / Acc@5 | locate Acc@1 / Acc@5 | search Acc@1 / Acc@5 |');
    lines.push('|---|---|---|---|---|---|---|');
    lines.push(`| own fix commits, at the parent commit | ${s.own.n} | ${s.own.declined} (${pc(s.own.rate)}) | ≤ ${pc(s.targets.ownNoContext)} | ${s.own.acc1.oracle.toFixed(3)} / ${s.own.acc5.oracle.toFixed(3)} | ${s.own.acc1.locate.toFixed(3)} / ${s.own.acc5.locate.toFixed(3)} | ${s.own.acc1.search.toFixed(3)} / ${s.own.acc5.search.toFixed(3)} |`);
    lines.push(`| foreign fix commits (Haskell projects) | ${s.foreign.n} | ${s.foreign.declined} (${pc(s.foreign.rate)}) | ≥ ${pc(s.targets.foreignNoContext)} | | | |`);
  }
}
if (results.context) {
  const C = results.context;
  const ms = (x) => `${Math.round(x)} ms`;
  lines.push('');
  lines.push('Context Oracle (in process after the graph is built; bundles for refs not asked before):');
  lines.push('| corpus | graph built | bundle p50 / p95: files | folders | symbols | bundle size p50 / p95 | why p50 / p95 | all routes | lint | `vlt ctx FILE`: own process / daemon (rg -l -w) |');
  lines.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const name of ['go', 'django']) {
    const c = C[name];
    if (!c) continue;
    const l = (x) => `${ms(x.p50)} / ${ms(x.p95)}`;
    lines.push(`| ${name} (${c.files} files) | ${ms(c.graphMs)} | ${l(c.bundle.files)} | ${l(c.bundle.folders)} | ${l(c.bundle.symbols)} | ${(c.bundleChars.p50 / 1000).toFixed(1)} / ${(c.bundleChars.p95 / 1000).toFixed(1)} K chars | ${l(c.why)} | ${ms(c.routes.ms)} (${c.routes.count}) | ${ms(c.lintMs)} | ${ms(c.cli.ctxMs)} / ${ms(c.cli.daemonMs)} (${ms(c.cli.rgMs)}) |`);
  }
  if (C.gitActivity) lines.push(`git activity of this repository (${C.gitActivity.commits} commits): ${ms(C.gitActivity.fullMs)} read in full, ${ms(C.gitActivity.fromFileMs)} from .vlt/git-activity.json`);
}

if (results.locate) {
  const L = results.locate;
  const met = (ok) => (ok ? 'met' : 'not met');
  const h = L.history ?? { repos: [] };
  lines.push('');
  lines.push('File localization on fix commits (test/bench/locate/history-set.json; Acc@1 / Acc@5 / MRR):');
  lines.push('');
  lines.push('| repository | n | locate | search | BM25 whole files |');
  lines.push('|---|---|---|---|---|');
  const cell = (m) => `${pc(m.acc1)} / ${pc(m.acc5)} / ${m.mrr.toFixed(3)}`;
  for (const r of h.repos) {
    if (r.skipped) lines.push(`| ${r.repo} | - | skipped: ${r.skipped} | | |`);
    else lines.push(`| ${r.repo} (${r.language}) | ${r.n} | ${cell(r.overall.locate)} | ${cell(r.overall.search)} | ${cell(r.overall.bm25)} |`);
  }
  if (h.all) {
    lines.push(`| **all** | ${h.all.locate.n} | ${cell(h.all.locate)} | ${cell(h.all.search)} | ${cell(h.all.bm25)} |`);
    lines.push(`| **message names no gold file** | ${h.namesNoGold.locate.n} | ${cell(h.namesNoGold.locate)} | ${cell(h.namesNoGold.search)} | ${cell(h.namesNoGold.bm25)} |`);
    lines.push('');
    lines.push(`locate ÷ BM25 (target ≥ ${L.targets.ratio}×): Acc@1 ${h.ratio.acc1}×, Acc@5 ${h.ratio.acc5}×; names no gold file: Acc@1 ${h.ratioNamesNoGold.acc1}×, Acc@5 ${h.ratioNamesNoGold.acc5}× — ${met(h.met)}`);
  }
  if (L.latency) {
    for (const [name, l] of Object.entries(L.latency)) {
      lines.push(`locate on ${name} (${l.files} files), ${l.reportWords}-word reports: p50 ${ms(l.warm.p50)}, p95 ${ms(l.warm.p95)} (target ≤ ${L.targets.p95Ms} ms: ${met(l.warm.p95 <= L.targets.p95Ms)}); first call ${ms(l.coldMs)}`);
    }
  }
}
if (results.vscode && !results.vscode.skipped) {
  const v = results.vscode;
  const f = v.go.first;
  const lsp = v.rxjs.whereUsedLsp;
  const met = (ok) => (ok ? 'met' : 'not met');
  lines.push('');
  lines.push(`The extension in VS Code 1.100.3 (code-server, chromium), built .vsix; Go standard library (${f.files} files) without a Go language server, rxjs with VS Code's TypeScript server:`);
  lines.push('');
  lines.push('| target | measured | |');
  lines.push('|---|---|---|');
  lines.push(`| activation → ready status, indexed workspace ≤ 1 s | ${ms(v.go.reopen.activationToReadyMs)} (Go) | ${met(v.go.reopen.activationToReadyMs <= 1000)} |`);
  lines.push(`| …and to the first search answered (after the catch-up of changes made while closed) | ${ms(v.go.reopen.activationToFirstSearchMs)} | |`);
  lines.push(`| first index of the Go stdlib in the server (activation → ready) | ${ms(f.activationToReadyMs)} | |`);
  lines.push(`| extension host event-loop delay during that index p99 ≤ 50 ms | p50 ${ms(f.extHostLoopDelayMs.p50)}, p99 ${ms(f.extHostLoopDelayMs.p99)}, max ${ms(f.extHostLoopDelayMs.max)} | ${met(f.extHostLoopDelayMs.p99 <= 50)} |`);
  lines.push(`| save → searchable p95 ≤ 300 ms (${f.saveToSearchableMs.n} saves) | p50 ${ms(f.saveToSearchableMs.p50)}, p95 ${ms(f.saveToSearchableMs.p95)} | ${met(f.saveToSearchableMs.p95 <= 300)} |`);
  lines.push(`| \`vlt lsp\` RSS on the Go stdlib ≤ 1 GB | peak ${mb(f.serverRss.peak)}, 10 s after the index ${mb(f.serverRss.afterIndex)} | ${met(f.serverRss.peak <= 2 ** 30)} |`);
  lines.push(`| "Where Is This Used?" after the TypeScript server is ready ≤ 1.5 s (rxjs, ${lsp.ours.n} symbols) | p50 ${ms(lsp.ours.p50)}, p95 ${ms(lsp.ours.p95)}; \`executeReferenceProvider\` alone p50 ${ms(lsp.direct.p50)}, p95 ${ms(lsp.direct.p95)} | ${met(lsp.ours.p95 <= 1500)} |`);
  for (const w of f.whereUsedIndex) lines.push(`| "Where Is This Used?" from the index: ${w.symbol.split(':').slice(1).join(':')} | ${ms(w.ms)}, ${w.locations} locations (${w.provenance.join(', ') || 'none'}) | |`);
}
if (results.chat && !results.chat.skipped) {
  const c = results.chat;
  const met = (ok) => (ok ? 'met' : 'not met');
  lines.push('');
  lines.push(`The chat UI in chromium (the page \`vlt serve\` serves; the same bundle as the VS Code view), Go standard library, fake model on 127.0.0.1:`);
  lines.push('');
  lines.push('| target | measured | |');
  lines.push('|---|---|---|');
  lines.push(`| the evidence brief rendered ≤ 1 s p95 after Enter (${c.brief.n} questions) | p50 ${ms(c.brief.p50)}, p95 ${ms(c.brief.p95)} | ${met(c.brief.p95 <= 1000)} |`);
  lines.push(`| first streamed token in the view ≤ 300 ms after the model's (${c.firstToken.n} answers) | p50 ${ms(c.firstToken.p50)}, p95 ${ms(c.firstToken.p95)} | ${met(c.firstToken.p95 <= 300)} |`);
  lines.push(`| a 5,000-token answer (${c.long.chars} characters) streams with no frame over 50 ms | ${c.long.longTasks} long tasks, longest ${ms(c.long.maxLongTaskMs)}; streamed in ${ms(c.long.streamMs)} | ${met(c.long.longTasks === 0)} |`);
  lines.push(`| the chat bundle ≤ 150 KB minified | ${(c.bundleBytes / 1024).toFixed(0)} KB | ${met(c.bundleBytes <= 150 * 1024)} |`);
}
if (results.soak) {
  const k = results.soak;
  lines.push('', `Soak: ${k.calls} MCP tool calls to the workspace daemon on the Go standard library (search, definitions, references, the oracle without a model, the map) while ${k.edits} file edits came and went, in ${k.seconds.toFixed(0)} s:`, '');
  lines.push('| | measured |', '|---|---|');
  lines.push(`| failed calls | ${k.errors}${k.firstErrors.length ? ` (${k.firstErrors.join('; ')})` : ''} |`);
  lines.push(`| latency p50 / p95 / max | ${ms(k.p50)} / ${ms(k.p95)} / ${ms(k.max)} |`);
  lines.push(`| p95 per thousand calls | ${k.windows.map((w) => ms(w.p95)).join(', ')} |`);
  for (const tool of Object.keys(k.tools)) lines.push(`| ${tool}: p95 per thousand calls | ${k.windows.map((w) => ms(w.tools[tool] ?? 0)).join(', ')} |`);
  lines.push(`| daemon RSS first / peak / last | ${k.rssMiB.first.toFixed(0)} / ${k.rssMiB.peak.toFixed(0)} / ${k.rssMiB.last.toFixed(0)} MiB |`);
  lines.push(`| RSS slope over the second half | ${k.rssSlopeMiBPerThousandCalls.toFixed(2)} MiB per thousand calls |`);
  for (const [tool, t] of Object.entries(k.tools)) lines.push(`| ${tool} (${t.calls} calls) p50 / p95 | ${ms(t.p50)} / ${ms(t.p95)} |`);
}
if (results.scale) lines.push(...scaleLines(results.scale));
const md = lines.join('\n');
writeFileSync(path.join(work, 'results.json'), JSON.stringify(results, null, 2));
writeFileSync(path.join(work, 'results.md'), md + '\n');
console.log(md);
