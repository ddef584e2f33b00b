/**
 * The repository map: PageRank against hand-computed values, golden maps of small multi-file
 * repositories per language (regenerate with `UPDATE_GOLDEN=1 npx vitest run
 * test/core/repomap.test.ts` and read the diff: the most used definitions must come first),
 * the token budget, scope, paging, focus, the cache, and the get_repo_map tool.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/core/engine';
import { isVltError } from '../../src/core/errors';
import { pageRank, RankGraphBuilder } from '../../src/core/intel/pagerank';
import { identifierWeight, isTestPath, loadTokenCounter, RepoMapper, type RepoMapResult, type RepoMapSource, type TokenCounter } from '../../src/core/intel/repomap';
import type { SymbolRow } from '../../src/core/store/store';
import type { LanguageId, SymbolKind } from '../../src/core/types';
import { invokeTool, type ToolContext } from '../../src/core/tools/definitions';
import { repoMapTool } from '../../src/core/tools/repomap-tool';
import { silentLogger } from '../../src/core/ports';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { CLI, ROOT, tempDir, vlt } from '../helpers/cli';

const FIXTURES = path.join(ROOT, 'test/fixtures/repomap');
const GOLDEN = path.join(ROOT, 'test/golden/repomap');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const deps = { fs: nodeWorkspaceFs, embeddingProvider: null } as const;

/** A private, indexed copy of a directory; closed and removed by `done`. */
async function indexedCopy(src: string): Promise<{ dir: string; engine: Engine; done: () => Promise<void> }> {
  const dir = tempDir('vlt-map-');
  cpSync(src, dir, { recursive: true });
  const engine = await Engine.open(dir, deps, 'write');
  await engine.index();
  return {
    dir,
    engine,
    done: async () => {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function mapError(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (isVltError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a VltError');
}

/** The (path, line) of every ranked definition a page shows. */
function shown(res: RepoMapResult): string[] {
  return res.files.flatMap((f) => f.symbols.map((s) => `${f.path}:${s.line}`));
}

describe('pageRank', () => {
  it('matches the hand-computed stationary distribution of a small cycle', () => {
    // A→B, A→C, B→C, C→A with damping 0.85: solve x = 0.05 + 0.85 M x by hand (or numpy).
    const b = new RankGraphBuilder(3);
    b.addEdge(0, 1, 1);
    b.addEdge(0, 2, 1);
    b.addEdge(1, 2, 1);
    b.addEdge(2, 0, 1);
    const r = pageRank(b.build(), { tolerance: 1e-12, maxIterations: 1000 });
    expect(r.converged).toBe(true);
    expect([...r.rank].map((x) => x.toFixed(6))).toEqual(['0.387790', '0.214811', '0.397400']);
  });

  it('sends the rank of a dangling node along the teleport distribution', () => {
    // A→B, B has no out-links: x = [0.350877, 0.649123] (B's mass spreads uniformly).
    const b = new RankGraphBuilder(2);
    b.addEdge(0, 1, 1);
    const r = pageRank(b.build(), { tolerance: 1e-12, maxIterations: 1000 });
    expect([...r.rank].map((x) => x.toFixed(6))).toEqual(['0.350877', '0.649123']);
  });

  it('teleports only to the personalised nodes', () => {
    const b = new RankGraphBuilder(3);
    b.addEdge(0, 1, 1);
    b.addEdge(0, 2, 1);
    b.addEdge(1, 2, 1);
    b.addEdge(2, 0, 1);
    const r = pageRank(b.build(), { personalization: Float64Array.from([1, 0, 0]), tolerance: 1e-12, maxIterations: 1000 });
    expect([...r.rank].map((x) => x.toFixed(6))).toEqual(['0.452233', '0.192199', '0.355568']);
  });

  it('lets the unused part of a weakly linked node teleport (minOutWeight)', () => {
    // A→B weighs 0.5, B→A 2; with minOutWeight 1, A passes half its rank and teleports half.
    const b = new RankGraphBuilder(2);
    b.addEdge(0, 1, 0.5);
    b.addEdge(1, 0, 2);
    const r = pageRank(b.build(), { minOutWeight: 1, tolerance: 1e-12, maxIterations: 1000 });
    expect(r.rank[0]).toBeCloseTo(0.5648855, 6);
    expect(r.rank[1]).toBeCloseTo(0.4351145, 6);
    // Without it, the same graph is a plain two-cycle.
    expect([...pageRank(b.build(), { tolerance: 1e-12 }).rank].map((x) => x.toFixed(6))).toEqual(['0.500000', '0.500000']);
  });

  it('ranks an identifier group exactly as the expanded referencer × definer edges', () => {
    // Nodes 0,1 use a name that 2 and 3 define (weight 3); 4 uses one that 0 defines (weight 1); 2 → 4 is a plain edge.
    const grouped = new RankGraphBuilder(5);
    grouped.addGroup(3, [0, 1], [2, 3]);
    grouped.addGroup(1, [4], [0]);
    grouped.addEdge(2, 4, 2);
    const expanded = new RankGraphBuilder(5);
    for (const r of [0, 1]) for (const d of [2, 3]) expanded.addEdge(r, d, 3);
    expanded.addEdge(4, 0, 1);
    expanded.addEdge(2, 4, 2);
    const a = pageRank(grouped.build(), { tolerance: 1e-13, maxIterations: 1000 });
    const e = pageRank(expanded.build(), { tolerance: 1e-13, maxIterations: 1000 });
    for (let i = 0; i < 5; i++) expect(a.rank[i]).toBeCloseTo(e.rank[i]!, 10);
    // Nodes 0 and 1 each split their rank over two equal links into group 0, so each definer gets (x0 + x1) / 2.
    expect(a.groupFlow[0]).toBeCloseTo((a.rank[0]! + a.rank[1]!) / 2, 10);
  });

  it('rejects malformed graphs', () => {
    const b = new RankGraphBuilder(2);
    expect(() => b.addEdge(0, 2, 1)).toThrow(/out of range/);
    expect(() => b.addEdge(0, 1, -1)).toThrow(/non-negative/);
    expect(() => b.addGroup(Number.NaN, [0], [1])).toThrow(/finite/);
  });
});

describe('isTestPath', () => {
  it('knows the test conventions of the indexed languages', () => {
    for (const p of ['net/http/server_test.go', 'pkg/tests/test_models.py', 'test_api.py', 'src/a.test.ts', 'web/__tests__/x.js', 'src/test/java/a/OrderTest.java', 'conftest.py']) {
      expect(isTestPath(p)).toBe(true);
    }
    for (const p of ['testing/testing.go', 'src/contest.ts', 'internal/testenv/testenv.go', 'src/attestation.py', 'src/main/java/a/Tester.java']) {
      expect(isTestPath(p)).toBe(false);
    }
  });
});

describe('identifierWeight (Aider’s multipliers)', () => {
  it('favours long compound names and penalises private and widely defined ones', () => {
    expect(identifierWeight('parse_config', 1)).toBe(10);
    expect(identifierWeight('runWithRetry', 1)).toBe(10);
    expect(identifierWeight('Store', 1)).toBe(1);
    expect(identifierWeight('_private_helper', 1)).toBeCloseTo(1, 10);
    expect(identifierWeight('close', 6)).toBeCloseTo(0.1, 10);
    expect(identifierWeight('close', 5)).toBe(1);
    // Short member names collide with the standard library's (`.get()`, `.push()`); long ones do not.
    expect(identifierWeight('push', 1, true)).toBeCloseTo(0.1, 10);
    expect(identifierWeight('flushPostings', 1, true)).toBe(10);
    expect(identifierWeight('r', 1)).toBeCloseTo(0.1, 10);
  });
});

/**
 * A store with the given files, each defining `defs` (name, kind, optional container and
 * signature) and using `uses`, for testing the graph rules without parsing anything.
 */
function fakeSource(spec: Record<string, { lang?: LanguageId; defs?: Array<[string, SymbolKind, string?, string?]>; uses?: string[] }>): RepoMapSource {
  const paths = Object.keys(spec);
  const files = paths.map((p, i) => ({ id: i + 1, path: p, language: spec[p]!.lang ?? 'go' }));
  let id = 0;
  const symbols: SymbolRow[] = paths.flatMap((p, i) =>
    (spec[p]!.defs ?? []).map(([name, kind, container, signature], j) => ({
      id: ++id,
      fileId: i + 1,
      path: p,
      name,
      kind,
      qualifiedName: container ? `${container}.${name}` : name,
      signature: signature ?? `${kind} ${name}`,
      startLine: 10 * (j + 1),
      endLine: 10 * (j + 1) + 5,
      ...(container ? { container } : {}),
    })),
  );
  const byName = new Map<string, number[]>();
  paths.forEach((p, i) => {
    for (const u of spec[p]!.uses ?? []) byName.set(u, [...(byName.get(u) ?? []), i + 1]);
  });
  return {
    root: '/nowhere',
    stateVersion: '1.0',
    store: { listFiles: () => files, allSymbols: () => symbols, allRefPostings: () => [...byName].map(([name, fileIds]) => ({ name, fileIds })) },
  };
}

/** Every definition's rank, by `path:name`. */
async function ranks(source: RepoMapSource): Promise<Map<string, number>> {
  const res = await new RepoMapper(source, { countTokens: (t) => t.length / 4 }).render({ maxTokens: 20_000 });
  return new Map(res.files.flatMap((f) => f.symbols.map((s) => [`${f.path}:${s.name}`, s.rank] as const)));
}

describe('graph rules (where the map departs from Aider, and why it must)', () => {
  it("keeps Go's unexported names inside their package", async () => {
    const lib = { defs: [['limit', 'struct'], ['Helper', 'function']] as Array<[string, SymbolKind]> };
    // Used from another package: `limit` there is some local variable, `Helper` is ours.
    const other = await ranks(fakeSource({ 'lib/util.go': lib, 'app/a.go': { uses: ['limit', 'Helper'] }, 'app/b.go': { uses: ['limit', 'Helper'] } }));
    expect(other.get('lib/util.go:limit')! * 20).toBeLessThan(other.get('lib/util.go:Helper')!);
    // Used from the same package: both are ours, and rank alike.
    const same = await ranks(fakeSource({ 'lib/util.go': lib, 'lib/a.go': { uses: ['limit', 'Helper'] }, 'lib/b.go': { uses: ['limit', 'Helper'] } }));
    expect(same.get('lib/util.go:limit')! / same.get('lib/util.go:Helper')!).toBeCloseTo(1, 4);
  });

  it('never links code outside the tests to a definition in a test file, nor any file to its own', async () => {
    const r = await ranks(
      fakeSource({
        'lib/util_test.go': { defs: [['Fixture', 'function']] },
        'lib/util.go': { defs: [['Shared', 'function'], ['Lonely', 'function']], uses: ['Shared', 'Lonely'] },
        'lib/a.go': { uses: ['Fixture', 'Shared'] },
        'lib/b_test.go': { uses: ['Fixture', 'Shared'] },
      }),
    );
    // Fixture is reached by the one test file only; Shared by both users (its own use is dropped).
    expect(r.get('lib/util.go:Shared')! / r.get('lib/util_test.go:Fixture')!).toBeGreaterThan(1.5);
    // Used by its own file only: a private helper, ranked as unreferenced.
    expect(r.get('lib/util.go:Lonely')! * 20).toBeLessThan(r.get('lib/util_test.go:Fixture')!);
  });

  it("ignores uses of a language's predeclared names and of `private` members", async () => {
    const r = await ranks(
      fakeSource({
        'builtin/builtin.go': { defs: [['int', 'type'], ['Integer', 'type']] },
        'app/a.go': { uses: ['int', 'Integer', 'touch'] },
        'app/b.go': { uses: ['int', 'Integer', 'touch'] },
        'src/cache.ts': { lang: 'typescript', defs: [['Cache', 'class'], ['touch', 'method', 'Cache', 'private touch(key: string): void']] },
      }),
    );
    expect(r.get('builtin/builtin.go:int')! * 20).toBeLessThan(r.get('builtin/builtin.go:Integer')!);
    expect(r.get('src/cache.ts:touch')! * 20).toBeLessThan(r.get('builtin/builtin.go:Integer')!);
  });

  it('splits a use among the files defining the name', async () => {
    const twice = await ranks(
      fakeSource({
        'a/one.go': { defs: [['Render', 'function']] },
        'b/two.go': { defs: [['Render', 'function']] },
        'c/once.go': { defs: [['Paint', 'function']] },
        'd/user.go': { uses: ['Render', 'Paint'] },
      }),
    );
    expect(twice.get('a/one.go:Render')! / twice.get('c/once.go:Paint')!).toBeCloseTo(0.5, 4);
  });
});

describe('repository map golden output per language', () => {
  for (const lang of ['typescript', 'python', 'go', 'rust', 'java']) {
    it(`${lang}: ranks the most used definitions first`, async () => {
      const ws = await indexedCopy(path.join(FIXTURES, lang));
      try {
        const mapper = new RepoMapper(ws.engine);
        const full = await mapper.render({ maxTokens: 1024 });
        const small = await mapper.render({ maxTokens: 120 });
        expect(full.truncated).toBe(false);
        expect(small.truncated).toBe(true);
        // The small map is a prefix of the ranking: every definition it shows is in the full map.
        expect(shown(full)).toEqual(expect.arrayContaining(shown(small)));
        const text = `== max_tokens=1024 (${full.tokens} tokens)\n${full.text}== max_tokens=120 (${small.tokens} tokens)\n${small.text}`;
        const file = path.join(GOLDEN, `${lang}.txt`);
        if (UPDATE || !existsSync(file)) {
          mkdirSync(GOLDEN, { recursive: true });
          writeFileSync(file, text);
        }
        expect(text).toBe(readFileSync(file, 'utf8'));
      } finally {
        await ws.done();
      }
    });
  }
});

describe('repository map of a real tree', () => {
  let ws: Awaited<ReturnType<typeof indexedCopy>>;
  let count: TokenCounter;
  beforeAll(async () => {
    // The engine's own sources: large enough that no budget below 5000 holds the whole map.
    const src = tempDir('vlt-map-src-');
    cpSync(path.join(ROOT, 'src/core'), path.join(src, 'src/core'), { recursive: true });
    ws = await indexedCopy(src);
    rmSync(src, { recursive: true, force: true });
    count = await loadTokenCounter();
  }, 120_000);
  afterAll(async () => {
    await ws?.done();
  });

  it('never exceeds the budget, counted with the real tokenizer', async () => {
    const mapper = new RepoMapper(ws.engine);
    const budgets = [50, 64, 100, 137, 256, 400, 512, 777, 1000, 1024, 1500, 2048, 3000, 4096, 5000];
    let seed = 7;
    for (let i = 0; i < 8; i++) budgets.push(50 + ((seed = (seed * 48271) % 2147483647) % 4951));
    let previous = 0;
    for (const budget of budgets.sort((a, b) => a - b)) {
      const res = await mapper.render({ maxTokens: budget });
      expect(count(res.text)).toBe(res.tokens);
      expect(res.tokens).toBeLessThanOrEqual(budget);
      expect(res.truncated).toBe(true);
      // The budget is used, not wasted: a larger budget never shows fewer definitions.
      expect(shown(res).length).toBeGreaterThanOrEqual(previous);
      previous = shown(res).length;
      const escaped = await mapper.render({ maxTokens: budget, countJsonEscaped: true, focus: ['store'] });
      expect(count(JSON.stringify(escaped.text))).toBeLessThanOrEqual(budget);
    }
    // Fills it closely, too: at 4096 tokens the map is within 5% of the budget.
    expect((await mapper.render({ maxTokens: 4096 })).tokens).toBeGreaterThan(4096 * 0.95);
  });

  it('rejects budgets outside the limits with a usage error', async () => {
    const mapper = new RepoMapper(ws.engine);
    expect(await mapError(mapper.render({ maxTokens: 0 }))).toMatchObject({ code: 'USAGE' });
    expect(await mapError(mapper.render({ maxTokens: 20_001 }))).toMatchObject({ code: 'USAGE', message: expect.stringContaining('20000') });
    const large = await mapper.render({ maxTokens: 30_000, allowLarge: true });
    expect(large.tokens).toBeLessThanOrEqual(30_000);
  });

  it('pages through the ranking with a cursor: the next definitions, none repeated', async () => {
    const mapper = new RepoMapper(ws.engine);
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < 4; page++) {
      const res = await mapper.render({ maxTokens: 300, ...(cursor ? { cursor } : {}) });
      const items = shown(res);
      expect(items.length).toBeGreaterThan(0);
      for (const item of items) {
        expect(seen.has(item)).toBe(false);
        seen.add(item);
      }
      expect(res.next_cursor).toBeDefined();
      cursor = res.next_cursor;
    }
    // Four pages of 300 tokens hold the same definitions as the first 1200-ish of one page, in rank order.
    const big = await mapper.render({ maxTokens: 5000 });
    const bigItems = new Set(shown(big));
    expect([...seen].every((s) => bigItems.has(s))).toBe(true);
    // A cursor only continues the map it came from.
    expect(await mapError(mapper.render({ maxTokens: 300, cursor: cursor!, focus: ['Engine'] }))).toMatchObject({ code: 'USAGE', message: expect.stringContaining('different scope or focus') });
    expect(await mapError(mapper.render({ cursor: 'garbage!' }))).toMatchObject({ code: 'USAGE' });
  });

  it('shows only files under the scope, ranked by the whole graph', async () => {
    const mapper = new RepoMapper(ws.engine);
    const full = await mapper.render({ maxTokens: 20_000 });
    const scoped = await mapper.render({ scope: 'src/core/search/', maxTokens: 2000 });
    expect(scoped.files.length).toBeGreaterThan(0);
    expect(scoped.files.every((f) => f.path.startsWith('src/core/search/'))).toBe(true);
    const rankOf = new Map(full.files.map((f) => [f.path, f.rank]));
    for (const f of scoped.files) expect(f.rank).toBe(rankOf.get(f.path));
    // One file works as a scope too; an absolute path inside the workspace is accepted.
    const one = await mapper.render({ scope: path.join(ws.dir, 'src/core/engine.ts') });
    expect(one.files.map((f) => f.path)).toEqual(['src/core/engine.ts']);
    const bad = await mapError(mapper.render({ scope: 'src/core/serch' }));
    expect(bad.code).toBe('USAGE');
    expect(bad.message).toContain('src/core/search');
  });

  it('personalises the ranking toward the focus, and notes focus that matches nothing', async () => {
    const mapper = new RepoMapper(ws.engine);
    const plain = await mapper.render({ maxTokens: 20_000 });
    const focused = await mapper.render({ maxTokens: 20_000, focusFiles: ['src/core/search/tokenizer.ts'] });
    const rank = (r: RepoMapResult, p: string) => r.files.find((f) => f.path === p)!.rank;
    expect(rank(focused, 'src/core/search/tokenizer.ts')).toBeGreaterThan(rank(plain, 'src/core/search/tokenizer.ts') * 2);
    // The definitions the focus file uses rise too: `identifierParts` is defined there and used elsewhere;
    // `IndexStore` is used by engine.ts, which tokenizer.ts does not reach, so it falls behind.
    const position = (r: RepoMapResult, name: string) => r.files.flatMap((f) => f.symbols.map((s) => s.name)).indexOf(name);
    const sym = await mapper.render({ maxTokens: 20_000, focusSymbols: ['identifierParts'] });
    expect(position(sym, 'identifierParts')).toBeLessThan(position(plain, 'identifierParts'));
    // Among the map's first definitions: the constants it uses (LOWER_WORD, NO_PARTS) rise with it.
    expect(position(sym, 'identifierParts')).toBeLessThan(10);
    // A small map (the whole one is over 30,000 tokens); the tree is this project's own sources, so
    // the budget leaves room for their growth: the focus lifts decodeCursor from far below it.
    const words = await mapper.render({ maxTokens: 800, focus: ['how is a cursor decoded'] });
    expect((await mapper.render({ maxTokens: 800 })).text).not.toMatch(/decodeCursor/);
    expect(words.text).toMatch(/decodeCursor/);
    const unknown = await mapper.render({ maxTokens: 400, focus: ['no/such/file.ts', 'NoSuchSymbolAnywhere'] });
    expect(unknown.notes).toEqual(['focus "no/such/file.ts" matches no indexed file or symbol', 'focus "NoSuchSymbolAnywhere" is not a defined symbol; its words were matched instead']);
    expect((await mapper.render({ focus: ['qwzxv'] })).notes).toEqual(['focus "qwzxv" matches no indexed file, symbol, identifier part or path segment']);
    expect(unknown.text.startsWith('note: focus "no/such/file.ts" matches no indexed file or symbol\n')).toBe(true);
    // With no match at all the ranking is the plain one.
    const none = await mapper.render({ maxTokens: 400, focus: ['qwzxv', 'no/such/dir/'] });
    expect(none.stats.iterations).toBe(0);
    expect(shown(await mapper.render({ maxTokens: 400 }))).toEqual(expect.arrayContaining(shown(none)));
  });
});

describe('repository map cache', () => {
  it('reuses the graph until the index changes, committed or not', async () => {
    const ws = await indexedCopy(path.join(FIXTURES, 'typescript'));
    try {
      const mapper = new RepoMapper(ws.engine);
      const first = await mapper.render();
      expect(first.stats.cached).toBe(false);
      const second = await mapper.render({ focus: ['src/cache.ts'] });
      expect(second.stats.cached).toBe(true);
      expect(second.stats.graphMs).toBe(0);
      expect((await mapper.render()).stats.rankMs).toBe(0);

      writeFileSync(path.join(ws.dir, 'src/extra.ts'), "import { normalizeKey } from './util/strings';\nexport function freshlyAddedHelper(k: string): string {\n  return normalizeKey(k);\n}\n");
      await ws.engine.index({ persist: false });
      const third = await mapper.render();
      expect(third.stats.cached).toBe(false);
      expect(third.text).toContain('freshlyAddedHelper');
      // A cursor from before the change no longer applies.
      const paged = await mapper.render({ maxTokens: 60 });
      await ws.engine.commit();
      expect(await mapError(mapper.render({ maxTokens: 60, cursor: paged.next_cursor! }))).toMatchObject({ code: 'USAGE', message: expect.stringContaining('index changed') });
    } finally {
      await ws.done();
    }
  });
});

describe('get_repo_map tool', () => {
  it('answers within max_tokens, JSON included, and pages with next_cursor', async () => {
    const ws = await indexedCopy(path.join(FIXTURES, 'java'));
    const count = await loadTokenCounter();
    const ctx: ToolContext = { getEngine: () => Promise.resolve(ws.engine), fs: nodeWorkspaceFs, logger: silentLogger };
    try {
      const first = await invokeTool(repoMapTool, ctx, { max_tokens: 100 });
      if (!first.ok) throw first.error;
      expect(count(JSON.stringify(first.value))).toBeLessThanOrEqual(100);
      expect(first.value.map).toContain('Order');
      expect(first.value.next_cursor).toBeDefined();
      const next = await invokeTool(repoMapTool, ctx, { max_tokens: 100, cursor: first.value.next_cursor });
      if (!next.ok) throw next.error;
      expect(next.value.map).not.toBe(first.value.map);
      const whole = await invokeTool(repoMapTool, ctx, { focus: ['OrderService'] });
      if (!whole.ok) throw whole.error;
      expect(whole.value.truncated).toBe(false);
      expect(whole.value.map.split('\n')[0]).toContain('OrderService.java');

      const badArg = await invokeTool(repoMapTool, ctx, { max_tokens: 100, scop: 'src' });
      expect(badArg).toMatchObject({ ok: false, error: { code: 'USAGE' } });
      const tooLarge = await invokeTool(repoMapTool, ctx, { max_tokens: 20_001 });
      expect(tooLarge).toMatchObject({ ok: false, error: { code: 'USAGE' } });
      const badScope = await invokeTool(repoMapTool, ctx, { scope: 'nowhere' });
      expect(badScope).toMatchObject({ ok: false, error: { code: 'USAGE' } });
    } finally {
      await ws.done();
    }
  });
});

describe('vlt coderag map', () => {
  it.skipIf(!existsSync(CLI))('prints the map, its JSON, and exits 2 on a bad scope', async () => {
    const dir = tempDir('vlt-map-cli-');
    cpSync(path.join(FIXTURES, 'python'), dir, { recursive: true });
    try {
      const text = await vlt(['-C', dir, 'coderag', 'map', '--tokens', '60']);
      expect(text.code).toBe(0);
      expect(text.stdout.split('\n')[0]).toBe('shop/util.py:');
      expect(text.stderr).toContain('--cursor m1-');
      const res = await vlt(['-C', dir, 'coderag', 'map', '--json', '--focus', 'shop/checkout.py', '--focus', 'ProductCatalog']);
      expect(res.code).toBe(0);
      const out = JSON.parse(res.stdout) as RepoMapResult;
      expect(out.truncated).toBe(false);
      expect(out.files[0]?.symbols[0]?.name).toBe('ProductCatalog');
      const bad = await vlt(['-C', dir, 'coderag', 'map', '--scope', 'shp']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('did you mean shop?');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
