/**
 * Search quality on the project's own frozen query set (test/bench/quality/): NDCG@10 and
 * Recall@10 of `vlt coderag search` beside a plain BM25 over the same chunks, per language and
 * per kind of query, on one split (the test half by default; the tuning half with --split tune).
 *
 * A returned chunk is relevant when its file is a gold file and its lines overlap the gold span;
 * each gold span counts once (the first chunk that reaches it), so several chunks of one
 * function do not score as several answers. The ideal ranking puts every gold span first.
 *
 * Each corpus is copied under .bench/quality-work/ and indexed there (no embeddings), so the
 * Debian and npm trees stay untouched. Prints JSON on stdout; progress on stderr.
 *
 *   quality-bench [--split test|tune|all] [--corpus ID,…] [--ablate STAGE,…|all] [--k 10] [--queries FILE] [--dump FILE.jsonl] [--set FACTOR=VALUE,…]
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Oracle } from '../../src/core/oracle/oracle';
import { Engine } from '../../src/core/engine';
import { RANK, RANK_STAGES, STAGES_OFF_BY_DEFAULT, type RankStage } from '../../src/core/search/rank';
import { nodeWorkspaceFs } from '../../src/node/fs';

interface Corpus {
  id: string;
  language: string;
  source: { debian?: string; npm?: string };
  root: string;
}
interface Gold {
  path: string;
  start: number;
  end: number;
}
interface Query {
  id: string;
  corpus: string;
  language: string;
  kind: string;
  query: string;
  gold: Gold[];
  split: 'tune' | 'test';
}
interface Span {
  path: string;
  start: number;
  end: number;
}

// Benchmarks run from the repository root (run.mjs sets the working directory).
const ROOT = process.cwd();
const SET = path.join(ROOT, 'test/bench/quality');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const split = arg('split') ?? 'test';
const onlyCorpora = arg('corpus')?.split(',');
const k = Number(arg('k') ?? 10);
/** `--oracle`: also score the extractive oracle's cited evidence for each query, beside search. */
const withOracle = process.argv.includes('--oracle');
// The default ranking, then each asked-for variant: `all` (no ranking layer), `only-STAGE`, and
// a STAGE name, which is the default without it (or with it, for a stage off by default).
const ablations: Array<{ name: string; disabled: RankStage[] }> = [{ name: 'ranked', disabled: [...STAGES_OFF_BY_DEFAULT] }];
for (const a of arg('ablate')?.split(',') ?? []) {
  if (a === 'all') ablations.push({ name: 'no ranking layer', disabled: [...RANK_STAGES] });
  else if (a.startsWith('only-')) ablations.push({ name: `only ${a.slice(5)}`, disabled: RANK_STAGES.filter((x) => x !== a.slice(5)) });
  else if ((STAGES_OFF_BY_DEFAULT as readonly string[]).includes(a)) ablations.push({ name: `with ${a}`, disabled: STAGES_OFF_BY_DEFAULT.filter((x) => x !== a) });
  else if ((RANK_STAGES as readonly string[]).includes(a)) ablations.push({ name: `without ${a}`, disabled: [...STAGES_OFF_BY_DEFAULT, a as RankStage] });
  else throw new Error(`unknown stage ${a}; stages: ${RANK_STAGES.join(', ')}, all`);
}

// `--set name=value,…` overrides ranking factors for one run (tuning on the tune half only).
for (const kv of arg('set')?.split(',') ?? []) {
  const [name, value] = kv.split('=');
  if (!name || !(name in RANK) || value === undefined) throw new Error(`unknown ranking factor ${kv}; factors: ${Object.keys(RANK).join(', ')}`);
  (RANK as Record<string, number>)[name] = Number(value);
}

/** Where a corpus's files are once install.sh ran. */
function corpusRoot(c: Corpus): string {
  return path.isAbsolute(c.root) ? c.root : path.join(ROOT, '.bench/quality', c.id, c.root);
}

/** NDCG@k and Recall@k of one ranked list against the gold spans. */
export function score(hits: Span[], gold: Gold[], cut = k): { ndcg: number; recall: number } {
  const found = new Set<number>();
  let dcg = 0;
  hits.slice(0, cut).forEach((h, i) => {
    const g = gold.findIndex((s, gi) => !found.has(gi) && h.path === s.path && h.start <= s.end && h.end >= s.start);
    if (g < 0) return;
    found.add(g);
    dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(gold.length, cut); i++) ideal += 1 / Math.log2(i + 2);
  return { ndcg: ideal ? dcg / ideal : 0, recall: gold.length ? found.size / gold.length : 0 };
}

type Tally = Record<string, { n: number; ndcg: number; recall: number }>;
const add = (t: Tally, key: string, s: { ndcg: number; recall: number }) => {
  const e = (t[key] ??= { n: 0, ndcg: 0, recall: 0 });
  e.n++;
  e.ndcg += s.ndcg;
  e.recall += s.recall;
};
const mean = (t: Tally) => Object.fromEntries(Object.entries(t).map(([key, e]) => [key, { n: e.n, ndcg: Number((e.ndcg / e.n).toFixed(3)), recall: Number((e.recall / e.n).toFixed(3)) }]));

async function main(): Promise<void> {
  const corpora = (JSON.parse(readFileSync(path.join(SET, 'corpora.json'), 'utf8')) as Corpus[]).filter((c) => !onlyCorpora || onlyCorpora.includes(c.id));
  const queries = readFileSync(arg('queries') ?? path.join(SET, 'queries.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Query)
    .filter((q) => split === 'all' || q.split === split);
  const work = path.join(ROOT, '.bench/quality-work');
  const systems: Record<string, { byLanguage: Tally; byKind: Tally; all: Tally }> = {};
  const sys = (name: string) => (systems[name] ??= { byLanguage: {}, byKind: {}, all: {} });
  const missing: string[] = [];
  const latencies: number[] = [];
  const dumpFile = arg('dump');
  const dump: unknown[] | undefined = dumpFile ? [] : undefined;
  for (const c of corpora) {
    const qs = queries.filter((q) => q.corpus === c.id);
    if (qs.length === 0) continue;
    const src = corpusRoot(c);
    if (!existsSync(src)) {
      missing.push(`${c.id} (${src}; run test/bench/quality/install.sh)`);
      continue;
    }
    const dir = path.join(work, c.id);
    if (!existsSync(path.join(dir, '.copied'))) {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      cpSync(src, dir, { recursive: true, dereference: true, filter: (p) => !p.includes(`${path.sep}.vlt`) });
      cpSync(path.join(SET, 'corpora.json'), path.join(dir, '.copied'));
    }
    process.stderr.write(`[quality] ${c.id}: indexing…\n`);
    const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
    try {
      await engine.index();
      for (const q of qs) {
        for (const a of ablations) {
          const t0 = performance.now();
          const res = await engine.search(q.query, { k, disabledStages: a.disabled });
          if (a.name === 'ranked') latencies.push(performance.now() - t0);
          const s = score(res.hits.map((h) => ({ path: h.path, start: h.start_line, end: h.end_line })), q.gold);
          dump?.push({ id: q.id, system: a.name, query: q.query, kind: q.kind, ndcg: s.ndcg, gold: q.gold, hits: res.hits.map((h) => `${h.path}:${h.start_line}-${h.end_line} ${h.symbol ?? ''} [${h.retrievers.join(',')}]`) });
          const t = sys(a.name);
          add(t.byLanguage, q.language, s);
          add(t.byKind, q.kind, s);
          add(t.all, 'all', s);
        }
        if (withOracle) {
          // The oracle's code citations in the order its brief gives them, scored as search's hits.
          const ans = await new Oracle({ engine }).ask(q.query, { noLlm: true, noLog: true, explain: Boolean(dump) });
          const spans = ans.citations.flatMap((c) => {
            const m = /:(\d+)(?:-(\d+))?\]$/.exec(c.citation);
            return (c.source === 'code' || c.source === 'lsp' || c.source === 'test') && m ? [{ path: c.path, start: Number(m[1]), end: Number(m[2] ?? m[1]) }] : [];
          });
          const so = score(spans.slice(0, k), q.gold);
          dump?.push({ id: q.id, system: 'oracle', query: q.query, kind: q.kind, ndcg: so.ndcg, gold: q.gold, hits: spans.map((h) => `${h.path}:${h.start}-${h.end}`), type: ans.type, ...(ans.noContext ? { why: ans.explain?.threshold.why } : {}) });
          const t = sys('oracle');
          add(t.byLanguage, q.language, so);
          add(t.byKind, q.kind, so);
          add(t.all, 'all', so);
        }
        const bm25 = engine.textHits(q.query, k).map((r) => ({ path: r.path, start: r.startLine, end: r.endLine }));
        const s = score(bm25, q.gold);
        dump?.push({ id: q.id, system: 'plain BM25', query: q.query, kind: q.kind, ndcg: s.ndcg, gold: q.gold, hits: bm25.map((h) => `${h.path}:${h.start}-${h.end}`) });
        const t = sys('plain BM25');
        add(t.byLanguage, q.language, s);
        add(t.byKind, q.kind, s);
        add(t.all, 'all', s);
      }
    } finally {
      await engine.close();
    }
  }
  latencies.sort((a, b) => a - b);
  const p = (x: number) => Number((latencies[Math.min(latencies.length - 1, Math.ceil(x * latencies.length) - 1)] ?? 0).toFixed(1));
  const out = {
    split,
    k,
    queries: queries.filter((q) => corpora.some((c) => c.id === q.corpus)).length,
    corpora: corpora.length,
    missing,
    latency_ms: { p50: p(0.5), p95: p(0.95) },
    systems: Object.fromEntries(Object.entries(systems).map(([name, t]) => [name, { all: mean(t.all).all, byKind: mean(t.byKind), byLanguage: mean(t.byLanguage) }])),
  };
  if (dumpFile && dump) writeFileSync(dumpFile, dump.map((d) => JSON.stringify(d)).join('\n'));
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
