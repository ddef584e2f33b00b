#!/usr/bin/env node
// Checker for the frozen search-quality benchmark (version 1).
//
//   node test/bench/quality/check.mjs            full check (corpora must be installed: see install.sh)
//   node test/bench/quality/check.mjs --no-files  schema, counts and split rule only
//
// Exits non-zero when any entry is bad. It checks:
//   - corpora.json: fields, unique ids, >= 25 corpora, >= 15 languages, each root present
//   - queries.jsonl: fields, unique ids of the form <corpus>-NNN, known corpus and its language,
//     kind in {symbol, semantic, how, everyday}, "how" queries start with "how",
//     >= 640 queries and >= 20 per corpus with every kind present,
//     1 to 3 gold spans per query, gold files exist under the corpus root and are not tests,
//     1 <= start <= end <= number of lines of the file, the optional "symbol" anchor of a span
//     appears on its first lines (so the span really starts at that definition),
//     split = "test" when the first byte of the id's SHA-1 hex digest is even, else "tune".
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..', '..');
const noFiles = process.argv.includes('--no-files');

const KINDS = ['symbol', 'semantic', 'how', 'everyday'];
const TEST_PATH = /(^|\/)(tests?|__tests__|testdata|spec)\/|_test\.[a-z]+$|\.test\.[a-z]+$|(^|\/)test_[^/]*\.py$|(^|\/)tests\.lisp$/i;

let errors = 0;
const fail = (msg) => {
  errors++;
  if (errors <= 200) console.error('ERROR ' + msg);
};

export function splitOf(id) {
  const hex = createHash('sha1').update(id, 'utf8').digest('hex');
  return parseInt(hex.slice(0, 2), 16) % 2 === 0 ? 'test' : 'tune';
}

export function rootOf(corpus) {
  return isAbsolute(corpus.root) ? corpus.root : join(repo, '.bench', 'quality', corpus.id, corpus.root);
}

// ---- corpora.json ---------------------------------------------------------
const corpora = JSON.parse(readFileSync(join(here, 'corpora.json'), 'utf8'));
const byId = new Map();
if (!Array.isArray(corpora)) fail('corpora.json is not an array');
for (const c of corpora) {
  const where = `corpora.json ${c.id ?? '?'}`;
  for (const k of ['id', 'language', 'source', 'root', 'licence', 'files']) if (c[k] === undefined) fail(`${where}: missing ${k}`);
  if (!/^[a-z0-9]+(-[a-z0-9]+)+$/.test(c.id ?? '')) fail(`${where}: id should look like lang-name`);
  if (byId.has(c.id)) fail(`${where}: duplicate id`);
  byId.set(c.id, c);
  const src = c.source ?? {};
  if (!src.debian && !src.npm) fail(`${where}: source needs "debian" or "npm"`);
  if (src.npm && !/^(@[^/]+\/)?[^@]+@\d+\.\d+\.\d+/.test(src.npm)) fail(`${where}: npm source must pin an exact version`);
  if (src.npm && isAbsolute(c.root)) fail(`${where}: npm root must be relative to the unpacked package`);
  if (src.debian && !src.unzip && !isAbsolute(c.root)) fail(`${where}: debian root must be absolute`);
  if (!Number.isInteger(c.files) || c.files < 20 || c.files > 1500) fail(`${where}: files ${c.files} outside 20..1500`);
  if (!noFiles) {
    const root = rootOf(c);
    if (!existsSync(root) || !statSync(root).isDirectory()) fail(`${where}: root ${root} missing (run install.sh)`);
  }
}
const languages = new Set(corpora.map((c) => c.language));
if (corpora.length < 25) fail(`only ${corpora.length} corpora (need >= 25)`);
if (languages.size < 15) fail(`only ${languages.size} languages (need >= 15)`);

// ---- queries.jsonl --------------------------------------------------------
const lines = readFileSync(join(here, 'queries.jsonl'), 'utf8').split('\n').filter((l) => l.trim() !== '');
const seen = new Set();
const perCorpus = new Map();
const kindCount = Object.fromEntries(KINDS.map((k) => [k, 0]));
const splitCount = { test: 0, tune: 0 };
const fileCache = new Map();
const readLines = (p) => {
  if (!fileCache.has(p)) {
    const text = readFileSync(p, 'utf8');
    const ls = text.split('\n');
    if (ls.length && ls[ls.length - 1] === '') ls.pop();
    fileCache.set(p, ls);
  }
  return fileCache.get(p);
};

lines.forEach((line, i) => {
  const where = `queries.jsonl:${i + 1}`;
  let q;
  try {
    q = JSON.parse(line);
  } catch (e) {
    fail(`${where}: not JSON (${e.message})`);
    return;
  }
  for (const k of ['id', 'corpus', 'language', 'kind', 'query', 'gold', 'split']) if (q[k] === undefined) fail(`${where}: missing ${k}`);
  if (seen.has(q.id)) fail(`${where}: duplicate id ${q.id}`);
  seen.add(q.id);
  const c = byId.get(q.corpus);
  if (!c) {
    fail(`${where}: unknown corpus ${q.corpus}`);
    return;
  }
  if (!new RegExp(`^${q.corpus}-\\d{3}$`).test(q.id)) fail(`${where}: id ${q.id} should be ${q.corpus}-NNN`);
  if (q.language !== c.language) fail(`${where}: language ${q.language} != corpus language ${c.language}`);
  if (!KINDS.includes(q.kind)) fail(`${where}: bad kind ${q.kind}`);
  else kindCount[q.kind]++;
  if (typeof q.query !== 'string' || q.query.trim().length < 3) fail(`${where}: empty query`);
  if (q.kind === 'how' && !/^how\b/i.test(q.query)) fail(`${where}: "how" query must start with "how"`);
  const expected = splitOf(q.id);
  if (q.split !== expected) fail(`${where}: split ${q.split}, the rule gives ${expected}`);
  else splitCount[q.split]++;
  const pc = perCorpus.get(q.corpus) ?? { n: 0, kinds: new Set() };
  pc.n++;
  pc.kinds.add(q.kind);
  perCorpus.set(q.corpus, pc);

  if (!Array.isArray(q.gold) || q.gold.length < 1 || q.gold.length > 3) {
    fail(`${where}: gold must hold 1 to 3 spans`);
    return;
  }
  for (const g of q.gold) {
    const gw = `${where} (${q.id}) gold ${g.path}:${g.start}-${g.end}`;
    if (typeof g.path !== 'string' || g.path.startsWith('/') || g.path.includes('..')) fail(`${gw}: path must be relative to the corpus root`);
    if (!Number.isInteger(g.start) || !Number.isInteger(g.end) || g.start < 1 || g.end < g.start) fail(`${gw}: bad line range`);
    if (TEST_PATH.test(g.path ?? '')) fail(`${gw}: gold points at a test file`);
    if (noFiles) continue;
    const full = join(rootOf(c), g.path);
    if (!existsSync(full) || !statSync(full).isFile()) {
      fail(`${gw}: file missing`);
      continue;
    }
    const ls = readLines(full);
    if (g.end > ls.length) {
      fail(`${gw}: end beyond the file's ${ls.length} lines`);
      continue;
    }
    if (g.symbol !== undefined) {
      const head = ls.slice(g.start - 1, Math.min(g.end, g.start + 2)).join('\n');
      if (!head.includes(g.symbol) && !head.toLowerCase().includes(String(g.symbol).toLowerCase())) {
        fail(`${gw}: symbol "${g.symbol}" not on the span's first lines: ${JSON.stringify(ls[g.start - 1].slice(0, 80))}`);
      }
    }
    if (ls.slice(g.start - 1, g.end).every((l) => l.trim() === '')) fail(`${gw}: span is blank`);
  }
});

if (lines.length < 640) fail(`only ${lines.length} queries (need >= 640)`);
for (const c of corpora) {
  const pc = perCorpus.get(c.id);
  if (!pc || pc.n < 20) fail(`corpus ${c.id}: ${pc?.n ?? 0} queries (need >= 20)`);
  else for (const k of KINDS) if (!pc.kinds.has(k)) fail(`corpus ${c.id}: no ${k} query`);
}

const pct = (n) => ((100 * n) / Math.max(1, lines.length)).toFixed(1) + '%';
console.log(`corpora: ${corpora.length}, languages: ${languages.size}, queries: ${lines.length}`);
console.log('kinds: ' + KINDS.map((k) => `${k} ${kindCount[k]} (${pct(kindCount[k])})`).join(', '));
console.log(`split: test ${splitCount.test}, tune ${splitCount.tune}`);
if (noFiles) console.log('(files not checked: --no-files)');
if (errors) {
  console.error(`${errors} error(s)`);
  process.exit(1);
}
console.log('OK');
