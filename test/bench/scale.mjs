// `npm run bench -- scale`: a cold `vlt coderag init` of trees of growing size, each in its own
// process (the whole command a user runs), with its time, its peak memory (worker threads
// included) and what it left on disk; then a search in a new process on the index it built (a
// reopen). The trees: the Go standard library, Django, Rust's `library/` (Debian's rust-src), the
// Linux kernel 6.1 without `drivers/` (about half) and whole (Debian's linux-source-6.1, with the
// packaging's `/*` line taken out of its .gitignore). Memory against size gives the growth
// exponent: the slope of log(peak RSS) over log(source bytes). On the kernel trees the engine
// bench then runs in process with test/bench/gold-linux.json: reopen, search p50/p95, the gold
// queries, and one edited file until searchable.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

const SEARCHES = ['parse a configuration value', 'open a file for reading', 'lock'];

function dirBytes(dir, skip = new Set(['.vlt'])) {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (skip.has(e.name)) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) n += dirBytes(p, skip);
    else if (e.isFile()) n += statSync(p).size;
  }
  return n;
}

/** The kernel tree, extracted once from Debian's tarball; `half` drops drivers/. */
function kernelTree(work, half) {
  const dir = path.join(work, half ? 'linux-half' : 'linux');
  if (existsSync(path.join(dir, 'Makefile'))) return dir;
  const tarball = '/usr/src/linux-source-6.1.tar.xz';
  if (!existsSync(tarball)) return undefined;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  console.error(`[scale] extracting ${tarball} → ${dir}`);
  execFileSync('tar', ['xf', tarball, '-C', dir, '--strip-components=1']);
  // Debian's packaging ignores the whole tree (`/*`); a checkout of the kernel has no such line.
  const gi = path.join(dir, '.gitignore');
  writeFileSync(gi, readFileSync(gi, 'utf8').split('\n').filter((l) => l.trim() !== '/*').join('\n'));
  if (half) rmSync(path.join(dir, 'drivers'), { recursive: true, force: true });
  return dir;
}

function copyOnce(src, dest) {
  if (!existsSync(dest)) {
    mkdirSync(path.dirname(dest), { recursive: true });
    cpSync(src, dest, { recursive: true, dereference: true });
  }
  return dest;
}

/** The engine bench (engine-bench.ts, bundled) in process on an indexed tree; undefined when it fails. */
function inProcess(engineBench, tree, gold) {
  const r = spawnSync(process.execPath, [engineBench, tree, gold], { encoding: 'utf8', env: { ...process.env, VLT_EMBEDDINGS: 'off' }, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) {
    console.error(`[scale] engine bench on ${tree} failed: ${r.stderr.trim().split('\n').slice(-3).join(' / ')}`);
    return undefined;
  }
  const b = JSON.parse(r.stdout);
  return { reopenMs: b.reopenMs, firstQueryMs: b.firstQueryMs, search: b.search, edit: b.edit, gold: { pass: b.quality.filter((q) => q.pass).length, of: b.quality.length, misses: b.quality.filter((q) => !q.pass) } };
}

export async function runScale({ root, work, rssProbe, engineBench, only = [] }) {
  const dir = path.join(work, 'scale');
  mkdirSync(dir, { recursive: true });
  const trees = [
    { name: 'go', path: () => copyOnce('/usr/share/go-1.19/src', path.join(dir, 'go')) },
    { name: 'django', path: () => (existsSync('/usr/lib/python3/dist-packages/django') ? path.dirname(copyOnce('/usr/lib/python3/dist-packages/django', path.join(dir, 'django', 'django'))) : undefined) },
    { name: 'rust-library', path: () => (existsSync('/usr/src/rustc-1.63.0/library') ? copyOnce('/usr/src/rustc-1.63.0/library', path.join(dir, 'rust-library')) : undefined) },
    { name: 'linux-half', path: () => kernelTree(dir, true), gold: 'gold-linux.json' },
    { name: 'linux', path: () => kernelTree(dir, false), gold: 'gold-linux.json' },
  ].filter((t) => only.length === 0 || only.includes(t.name));
  const out = { trees: [] };
  for (const t of trees) {
    const tree = t.path();
    if (!tree) {
      console.error(`[scale] ${t.name}: not installed, skipped`);
      continue;
    }
    rmSync(path.join(tree, '.vlt'), { recursive: true, force: true });
    const sourceBytes = dirBytes(tree);
    console.error(`[scale] ${t.name}: cold index of ${(sourceBytes / 2 ** 20).toFixed(0)} MiB…`);
    const rssOut = path.join(dir, `${t.name}.rss`);
    const t0 = performance.now();
    const init = spawnSync(process.execPath, ['--require', rssProbe, path.join(root, 'dist/cli.js'), 'coderag', 'init', tree, '--json'], {
      encoding: 'utf8',
      env: { ...process.env, VLT_RSS_OUT: rssOut, VLT_EMBEDDINGS: 'off', VLT_DAEMON: '0' },
      maxBuffer: 256 * 1024 * 1024,
    });
    const initMs = performance.now() - t0;
    if (init.status !== 0) {
      out.trees.push({ name: t.name, sourceBytes, failed: `exit ${init.status}: ${init.stderr.trim().split('\n').slice(-2).join(' / ')}`, initMs });
      continue;
    }
    const report = JSON.parse(init.stdout);
    const vlt = path.join(tree, '.vlt');
    const files = readdirSync(vlt);
    const sizeOf = (pred) => files.filter(pred).reduce((n, f) => n + statSync(path.join(vlt, f)).size, 0);
    const searchMs = [];
    let searchRss = 0;
    for (const q of SEARCHES) {
      const s0 = performance.now();
      const r = spawnSync(process.execPath, ['--require', rssProbe, path.join(root, 'dist/cli.js'), 'coderag', 'search', q, '-k', '10', '--json', '-C', tree], { encoding: 'utf8', env: { ...process.env, VLT_RSS_OUT: rssOut + '.search', VLT_DAEMON: '0' }, maxBuffer: 64 * 1024 * 1024 });
      searchMs.push(performance.now() - s0);
      if (r.status === 0) searchRss = Math.max(searchRss, Number(readFileSync(rssOut + '.search', 'utf8')));
    }
    out.trees.push({
      name: t.name,
      sourceBytes,
      files: report.filesParsed,
      chunks: report.chunksAdded,
      checkpoints: report.checkpoints ?? 0,
      initMs,
      stageMs: report.ms,
      peakRss: Number(readFileSync(rssOut, 'utf8')),
      disk: {
        indexDb: sizeOf((f) => f === 'index.db'),
        textPacks: sizeOf((f) => f.endsWith('.pack')),
        textSegments: sizeOf((f) => f.startsWith('textseg-')),
        symbols: sizeOf((f) => f.startsWith('symbols-')),
      },
      reopenSearchMs: searchMs.sort((a, b) => a - b)[Math.floor(searchMs.length / 2)],
      reopenSearchRss: searchRss,
      inProcess: t.gold && engineBench ? inProcess(engineBench, tree, path.join(root, 'test/bench', t.gold)) : undefined,
    });
  }
  // Least squares over log(peak RSS) against log(source bytes).
  const ok = out.trees.filter((t) => !t.failed);
  if (ok.length >= 2) {
    const xs = ok.map((t) => Math.log(t.sourceBytes));
    const ys = ok.map((t) => Math.log(t.peakRss));
    const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
    const my = ys.reduce((a, b) => a + b, 0) / ys.length;
    const num = xs.reduce((n, x, i) => n + (x - mx) * (ys[i] - my), 0);
    const den = xs.reduce((n, x) => n + (x - mx) ** 2, 0);
    out.memoryExponent = den > 0 ? num / den : undefined;
  }
  return out;
}

export function scaleLines(s) {
  const mib = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  const sec = (ms) => `${(ms / 1000).toFixed(1)} s`;
  const lines = ['', 'Scale: a cold `vlt coderag init` in its own process, then a search in a new process (the index reopened):', '', '| tree | source | files | cold index | peak RSS | index.db | text packs | text segments | symbol table | search, reopened |', '|---|---|---|---|---|---|---|---|---|---|'];
  for (const t of s.trees) {
    if (t.failed) lines.push(`| ${t.name} | ${mib(t.sourceBytes)} | | failed after ${sec(t.initMs)}: ${t.failed} | | | | | | |`);
    else lines.push(`| ${t.name} | ${mib(t.sourceBytes)} | ${t.files} | ${sec(t.initMs)} | ${mib(t.peakRss)} | ${mib(t.disk.indexDb)} | ${mib(t.disk.textPacks)} | ${mib(t.disk.textSegments)} | ${mib(t.disk.symbols)} | ${sec(t.reopenSearchMs)}, ${mib(t.reopenSearchRss)} |`);
  }
  if (s.memoryExponent !== undefined) lines.push('', `Peak memory grows as source size^${s.memoryExponent.toFixed(2)} (1 is linear).`);
  const measured = s.trees.filter((t) => t.inProcess);
  if (measured.length > 0) {
    const ms = (x) => `${x.toFixed(x < 10 ? 1 : 0)} ms`;
    lines.push('', 'In process on the kernel trees (test/bench/gold-linux.json):', '', '| tree | reopen | first query | search p50 / p95 | gold queries in top-N | one edited file searchable p50 / max | commit p50 |', '|---|---|---|---|---|---|---|');
    for (const t of measured) {
      const b = t.inProcess;
      lines.push(`| ${t.name} | ${ms(b.reopenMs)} | ${ms(b.firstQueryMs)} | ${ms(b.search.p50)} / ${ms(b.search.p95)} | ${b.gold.pass} / ${b.gold.of} | ${ms(b.edit.searchableP50)} / ${ms(b.edit.searchableMax)} | ${ms(b.edit.commitP50)} |`);
    }
  }
  return lines;
}
