/**
 * Repository-map timings on the Go standard library: cold (open the engine on an existing
 * index, then the first map, tokenizer load included) and cached (the graph and the plain
 * ranking reused; a focus re-ranks on the cached graph). Targets (code-intelligence issue):
 * cold ≤ 2 s, cached ≤ 200 ms.
 *
 * `runRepoMapBench(goRoot, indexDir)` indexes a copy of `goRoot` in `indexDir` (default
 * `.bench/go`, the copy `npm run bench` makes) unless it already holds an index: indexing
 * writes `.vlt/` into the workspace, so it never runs on the system's Go tree. Run as a script
 * (bundled like engine-bench.ts) for a truly cold process:
 *
 *   npx esbuild test/bench/repomap-bench.ts --bundle --platform=node --format=cjs --outfile=.bench/repomap-bench.cjs
 *   node .bench/repomap-bench.cjs /usr/share/go-1.19/src [.bench/go]
 *
 * (Debian's golang-1.19-src package puts the tree in /usr/share/go-1.19/src; /usr/lib/go-1.19/src
 * links to it where the toolchain is installed.)
 */
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { Engine } from '../../src/core/engine';
import { RepoMapper, type RepoMapOptions, type RepoMapResult } from '../../src/core/intel/repomap';
import { nodeWorkspaceFs } from '../../src/node/fs';

export interface RepoMapBenchResult {
  files: number;
  entries: number;
  cold: { totalMs: number; openMs: number; firstMapMs: number; graphMs: number; rankMs: number; renderMs: number; iterations: number; tokens: number };
  cachedDefault: { p50: number; max: number; runs: number };
  /** Five different focus sets: each re-ranks on the cached graph. */
  focusRerank: { p50: number; max: number; runs: number; iterationsP50: number };
  /** One focus set repeated: the focused ranking is cached too. */
  focusRepeat: { p50: number; runs: number };
  scoped: { ms: number; scope: string; tokens: number };
  maxBudget: { ms: number; tokens: number; maxTokens: number };
  sample: string;
}

const deps = { fs: nodeWorkspaceFs, embeddingProvider: null } as const;

function p50(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.5 * s.length) - 1)] ?? 0;
}

async function timed(mapper: RepoMapper, opts: RepoMapOptions): Promise<{ ms: number; res: RepoMapResult }> {
  const t = performance.now();
  const res = await mapper.render(opts);
  return { ms: performance.now() - t, res };
}

export async function runRepoMapBench(goRoot: string, indexDir?: string): Promise<RepoMapBenchResult> {
  // The copy `npm run bench` makes (it runs from the repository root).
  const dir = path.resolve(indexDir ?? path.join(process.cwd(), '.bench', 'go'));
  if (!existsSync(path.join(dir, '.vlt', 'index.db'))) {
    if (!existsSync(dir)) {
      process.stderr.write(`copying ${goRoot} → ${dir}\n`);
      mkdirSync(path.dirname(dir), { recursive: true });
      cpSync(goRoot, dir, { recursive: true, dereference: true });
    }
    process.stderr.write(`indexing ${dir}…\n`);
    const writer = await Engine.open(dir, deps, 'write');
    try {
      await writer.index();
    } finally {
      await writer.close();
    }
  }

  const t0 = performance.now();
  const engine = await Engine.open(dir, deps, 'read');
  const openMs = performance.now() - t0;
  try {
    const mapper = new RepoMapper(engine);
    const first = await timed(mapper, {});
    const cold = {
      totalMs: performance.now() - t0,
      openMs,
      firstMapMs: first.ms,
      graphMs: first.res.stats.graphMs,
      rankMs: first.res.stats.rankMs,
      renderMs: first.res.stats.renderMs,
      iterations: first.res.stats.iterations,
      tokens: first.res.tokens,
    };

    const cached: number[] = [];
    for (let i = 0; i < 5; i++) cached.push((await timed(mapper, {})).ms);

    const focusSets: RepoMapOptions[] = [
      { focus: ['net/http'] },
      { focus: ['Reader'] },
      { focus: ['how does json decoding handle struct tags'] },
      { focusFiles: ['crypto/tls/conn.go'] },
      { focusSymbols: ['Context'], focusWords: ['cancel deadline'] },
    ];
    const rerank: number[] = [];
    const iterations: number[] = [];
    for (const f of focusSets) {
      const r = await timed(mapper, f);
      rerank.push(r.ms);
      iterations.push(r.res.stats.iterations);
    }
    const repeat: number[] = [];
    for (let i = 0; i < 5; i++) repeat.push((await timed(mapper, focusSets[0]!)).ms);

    const scoped = await timed(mapper, { scope: 'net/http' });
    const large = await timed(mapper, { maxTokens: 20_000 });
    return {
      files: engine.status().files,
      entries: first.res.stats.entries,
      cold,
      cachedDefault: { p50: p50(cached), max: Math.max(...cached), runs: cached.length },
      focusRerank: { p50: p50(rerank), max: Math.max(...rerank), runs: rerank.length, iterationsP50: p50(iterations) },
      focusRepeat: { p50: p50(repeat), runs: repeat.length },
      scoped: { ms: scoped.ms, scope: 'net/http', tokens: scoped.res.tokens },
      maxBudget: { ms: large.ms, tokens: large.res.tokens, maxTokens: 20_000 },
      sample: first.res.text.split('\n').slice(0, 40).join('\n'),
    };
  } finally {
    await engine.close();
  }
}

if (require.main === module) {
  const [, , goRoot, indexDir] = process.argv;
  if (!goRoot) throw new Error('usage: repomap-bench GO_SRC_DIR [INDEX_DIR]');
  runRepoMapBench(goRoot, indexDir).then(
    (r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`),
    (e: unknown) => {
      process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
      process.exit(1);
    },
  );
}
