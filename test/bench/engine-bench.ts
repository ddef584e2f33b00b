/**
 * In-process measurements on an already indexed corpus, run by run.mjs as a child process:
 * reopen time, search latency per query (warm), quality against the gold file, and the time
 * from editing one file until it is searchable. Prints one JSON object on stdout.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Engine } from '../../src/core/engine';
import { nodeWorkspaceFs } from '../../src/node/fs';

interface Gold {
  queries: Array<{ query: string; path: string; symbol: string; line: number; top: number }>;
  extra_queries: string[];
}

const [, , dir, goldFile, longQueryFile] = process.argv;
if (!dir || !goldFile) throw new Error('usage: engine-bench DIR GOLD.json [LONG_QUERY.txt]');
const gold = JSON.parse(readFileSync(goldFile, 'utf8')) as Gold;
const deps = { fs: nodeWorkspaceFs, embeddingProvider: null };

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? 0;
}

async function main() {
  const t0 = performance.now();
  const reader = await Engine.open(dir!, deps, 'read');
  const reopenMs = performance.now() - t0;
  // The first query also loads the symbol table lazily; report it apart from warm latency.
  const tFirst = performance.now();
  await reader.search('warm up query', { k: 10 });
  const firstQueryMs = performance.now() - tFirst;

  const queries = [...gold.queries.map((q) => q.query), ...gold.extra_queries];
  const latencies: number[] = [];
  const perQuery: Record<string, number> = {};
  for (let round = 0; round < 3; round++) {
    for (const q of queries) {
      const t = performance.now();
      await reader.search(q, { k: 10 });
      const ms = performance.now() - t;
      if (round > 0) latencies.push(ms);
      perQuery[q] = Math.min(perQuery[q] ?? Infinity, ms);
    }
  }

  const quality = [];
  for (const g of gold.queries) {
    const res = await reader.search(g.query, { k: 10 });
    const rank = res.hits.findIndex((h) => h.path === g.path && h.start_line <= g.line && g.line <= h.end_line);
    quality.push({ query: g.query, expect: `${g.path}:${g.line} ${g.symbol}`, rank: rank < 0 ? null : rank + 1, top: g.top, pass: rank >= 0 && rank < g.top, got: res.hits.slice(0, 3).map((h) => `${h.path}:${h.start_line} ${h.symbol ?? ''}`) });
  }

  let longQuery: { words: number; p50: number; p95: number; top: string[] } | undefined;
  if (longQueryFile) {
    const text = readFileSync(longQueryFile, 'utf8');
    const ms: number[] = [];
    let top: string[] = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      const r = await reader.search(text, { k: 5 });
      ms.push(performance.now() - t);
      top = r.hits.map((h) => `${h.path}:${h.start_line} ${h.symbol ?? ''}`);
    }
    longQuery = { words: text.split(/\s+/).length, p50: pct(ms, 50), p95: pct(ms, 95), top };
  }
  await reader.close();

  // One edited file until searchable: the writer is open (as in the editor or `vlt serve`),
  // the file changes, index() runs, and the new symbol is found.
  const writer = await Engine.open(dir!, deps, 'write');
  await writer.index();
  const target = path.join(dir!, gold.queries[0]!.path);
  const original = readFileSync(target, 'utf8');
  const marker = `BenchFreshSymbol${Date.now()}`;
  const edit = target.endsWith('.py') ? `\n\ndef ${marker}():\n    return 1\n` : /\.[ch]$/.test(target) ? `\n\nint ${marker}(void) { return 1; }\n` : `\n\nfunc ${marker}() int { return 1 }\n`;
  const commitTimes: number[] = [];
  const searchableTimes: number[] = [];
  for (let i = 0; i < 5; i++) {
    appendFileSync(target, edit.replace(marker, `${marker}${i}`));
    const t = performance.now();
    const rep = await writer.index({ persist: false, paths: [gold.queries[0]!.path] });
    const hits = await writer.search(`${marker}${i}`, { k: 1 });
    const ms = performance.now() - t;
    if (rep.filesParsed !== 1 || hits.hits[0]?.path !== gold.queries[0]!.path) throw new Error(`edit not picked up: ${JSON.stringify(rep)}`);
    searchableTimes.push(ms);
    const tc = performance.now();
    await writer.commit();
    commitTimes.push(performance.now() - tc);
  }
  writeFileSync(target, original);
  await writer.index();
  await writer.close();

  process.stdout.write(
    JSON.stringify({
      reopenMs,
      firstQueryMs,
      search: { n: latencies.length, p50: pct(latencies, 50), p95: pct(latencies, 95), max: Math.max(...latencies) },
      perQuery,
      quality,
      longQuery,
      edit: { searchableP50: pct(searchableTimes, 50), searchableMax: Math.max(...searchableTimes), commitP50: pct(commitTimes, 50) },
    }),
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
