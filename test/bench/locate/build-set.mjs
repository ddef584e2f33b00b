#!/usr/bin/env node
// Rebuilds test/bench/locate/history-set.json: the frozen localization set of `npm run bench -- locate`.
//
// For each repository of repos.json it makes a clone at .bench/history/<name> checked out at the
// recorded head (from VLT_HISTORY_MIRRORS/<owner>+<name>/repo when that exists, else from GitHub),
// and asks `vlt eval history --list --json --max N` for its sample: fix-like commits that modify
// 1-5 source files, sampled by hash (see src/core/eval/history.ts for the definitions). The set
// keeps each instance's commit, parent, query and gold files, so the bench replays exactly these
// instances whatever the clone's later history.
//
//   node test/bench/locate/build-set.mjs [--max 60]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const maxAt = process.argv.indexOf('--max');
const max = maxAt > 0 ? Number(process.argv[maxAt + 1]) : 60;
const repos = JSON.parse(readFileSync(path.join(here, 'repos.json'), 'utf8'));

/** A clone of `r` at its recorded head under .bench/history, made once. */
export function ensureClone(r) {
  const dir = path.join(root, '.bench', 'history', r.repo.split('/')[1]);
  if (!existsSync(path.join(dir, '.git'))) {
    mkdirSync(path.dirname(dir), { recursive: true });
    const mirror = process.env.VLT_HISTORY_MIRRORS ? path.join(process.env.VLT_HISTORY_MIRRORS, r.repo.replace('/', '+'), 'repo') : undefined;
    const source = mirror && existsSync(mirror) ? mirror : r.url;
    console.error(`cloning ${source} → ${dir}`);
    execFileSync('git', ['clone', '-q', '--no-checkout', source, dir], { stdio: 'inherit' });
  }
  execFileSync('git', ['-C', dir, 'checkout', '-q', '--force', r.head], { stdio: 'inherit' });
  return dir;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const cli = path.join(root, 'dist/cli.js');
  const set = { version: 1, built: new Date().toISOString().slice(0, 10), perRepo: max, repos: [] };
  for (const r of repos) {
    const dir = ensureClone(r);
    const out = execFileSync(process.execPath, [cli, '-C', dir, 'eval', 'history', '--list', '--json', '--max', String(max)], { encoding: 'utf8', env: { ...process.env, VLT_DAEMON: '0' }, maxBuffer: 64 * 1024 * 1024 });
    const { candidates, instances } = JSON.parse(out);
    console.error(`${r.repo}: ${instances.length} of ${candidates} candidates`);
    set.repos.push({ repo: r.repo, language: r.language, head: r.head, candidates, instances });
  }
  writeFileSync(path.join(here, 'history-set.json'), `${JSON.stringify(set, null, 1)}\n`);
  console.error(`wrote ${set.repos.reduce((n, r) => n + r.instances.length, 0)} instances`);
}
