/**
 * The ranking layer's stages, each alone on hand-made candidates: what a stage must move, and
 * that switching it off leaves the fused order alone.
 */
import { rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/core/engine';
import { fuse, type RetrieverRun } from '../../src/core/search/hybrid';
import { analyzeQuery } from '../../src/core/search/query';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { tempDir } from '../helpers/cli';
import { abbreviationExpansions, chunkIsKind, fileKindOf, queryIntent, rankCandidates, RANK_STAGES, stemExpansions, type RankCandidate, type RankStage } from '../../src/core/search/rank';

const cand = (id: number, score: number, path: string, extra: Partial<RankCandidate> = {}): RankCandidate => ({
  id,
  score,
  path,
  language: path.endsWith('.md') ? 'markdown' : 'go',
  kind: 'function',
  symbol: undefined,
  matchedSymbol: undefined,
  ...extra,
});

/** Runs only `stage` (every other stage off) and returns the paths in the new order. */
function only(stage: RankStage, cands: RankCandidate[], query: string): string[] {
  const q = analyzeQuery(query);
  const off = new Set(RANK_STAGES.filter((s) => s !== stage));
  return rankCandidates(cands, q, queryIntent(q), off).ranked.map((c) => `${c.path}#${c.id}`);
}

describe('query intent', () => {
  it.each([
    ['ParseDuration', 'symbol'],
    ['http.HandlerFunc', 'symbol'],
    ['g', 'symbol'],
    ['how does the router match a path', 'sentence'],
    ['how does the radix tree match a path', 'sentence'],
    ['radix tree path matching', 'mixed'],
    ['where is ServeHTTP called for a request', 'mixed'],
  ])('%s → %s', (query, intent) => {
    expect(queryIntent(analyzeQuery(query))).toBe(intent);
  });
});

describe('file kinds', () => {
  it.each([
    ['net/http/server.go', 'go', 'code'],
    ['tree_test.go', 'go', 'test'],
    ['tests/test_views.py', 'python', 'test'],
    ['src/__tests__/a.ts', 'typescript', 'test'],
    ['src/zod.test.ts', 'typescript', 'test'],
    ['spec/cart_spec.rb', 'ruby', 'test'],
    ['README.md', 'markdown', 'docs'],
    ['docs/guide/routing.go', 'go', 'docs'],
    ['examples/basic/main.go', 'go', 'example'],
    ['api/v1/user.pb.go', 'go', 'generated'],
    ['stdlib/list.mli', 'ocaml', 'declaration'],
    ['types/index.d.ts', 'typescript', 'declaration'],
  ])('%s is %s', (path, language, kind) => {
    expect(fileKindOf(path, language)).toBe(kind);
  });
});

describe('ranking stages', () => {
  it('file-kind: implementation above its test and the docs, unless the query asks for tests', () => {
    const cands = [cand(1, 1.0, 'tree_test.go'), cand(2, 0.9, 'README.md'), cand(3, 0.7, 'tree.go')];
    expect(only('file-kind', cands, 'radix tree path matching')[0]).toBe('tree.go#3');
    expect(only('file-kind', cands, 'tests of radix tree path matching')[0]).toBe('tree_test.go#1');
    expect(only('file-kind', cands, 'what does the readme say about radix trees')[0]).toBe('README.md#2');
  });

  it('definition: the chunk that defines the named thing above a chunk that mentions it', () => {
    const cands = [cand(1, 1.0, 'coerce.ts', { symbol: 'string' }), cand(2, 0.85, 'regexes.ts', { symbol: 'email' })];
    expect(only('definition', cands, 'email validation')).toEqual(['regexes.ts#2', 'coerce.ts#1']);
    // In a sentence, one word names what it talks about, not the definition it wants.
    expect(only('definition', cands, 'where do we check that an address looks like an email')).toEqual(['coerce.ts#1', 'regexes.ts#2']);
  });

  it('stems: other forms of the query words that the index holds, at a lower weight', () => {
    const q = analyzeQuery('how are multipart bodies parsed');
    const index = new Set(['parse', 'parsing', 'parser', 'multipart']);
    const out = stemExpansions(q, (t) => index.has(t));
    expect([...out.keys()].sort()).toEqual(['parse', 'parsing']);
    expect([...out.values()].every((w) => w > 0 && w < 1)).toBe(true);
  });

  it('abbrev: the short forms code names things with, when the index holds them', () => {
    const index = new Set(['diff', 'differ', 'buf', 'msg', 'str', 'date']);
    const out = abbreviationExpansions(analyzeQuery('difference between two dates in a buffer message string'), (t) => index.has(t));
    // The list (buffer → buf, message → msg, string → str), and a word's longest start the
    // index holds: "difference" → differ, not diff as well.
    expect([...out.keys()].sort()).toEqual(['buf', 'differ', 'msg', 'str']);
    expect([...out.values()].every((w) => w > 0 && w < 1)).toBe(true);
    expect([...abbreviationExpansions(analyzeQuery('decode'), (t) => t === 'dec' || t === 'de').keys()]).toEqual(['dec']);
    // A start is at least three letters and leaves at least two off.
    expect(abbreviationExpansions(analyzeQuery('date'), (t) => t === 'da' || t === 'dat').size).toBe(0);
    // Forms the stems stage already added, or the query already has, are not added twice.
    expect(abbreviationExpansions(analyzeQuery('difference'), (t) => t === 'differ', new Set(['differ'])).size).toBe(0);
    expect(abbreviationExpansions(analyzeQuery('str string'), (t) => t === 'str').size).toBe(0);
  });

  it('path-words: a file named with the query words', () => {
    const cands = [cand(1, 1.0, 'path_rewrite.go'), cand(2, 0.95, 'tree.go')];
    expect(only('path-words', cands, 'radix tree matching')[0]).toBe('tree.go#2');
  });

  it('coherence: a file with several good chunks ranks its best one higher', () => {
    const cands = [cand(1, 1.0, 'a.go'), cand(2, 0.9, 'b.go'), cand(3, 0.8, 'b.go'), cand(4, 0.7, 'b.go')];
    expect(only('coherence', cands, 'scheduler picks next task')[0]).toBe('b.go#2');
  });

  it("diversity: a file's second chunk gives way to another file's best", () => {
    const cands = [cand(1, 1.0, 'a.go'), cand(2, 0.95, 'a.go'), cand(3, 0.8, 'b.go')];
    expect(only('diversity', cands, 'scheduler picks next task')).toEqual(['a.go#1', 'b.go#3', 'a.go#2']);
  });

  it('with every stage off, the fused order stands', () => {
    const cands = [cand(1, 1.0, 'tree_test.go'), cand(2, 0.9, 'README.md'), cand(3, 0.7, 'tree.go')];
    const q = analyzeQuery('radix tree');
    expect(rankCandidates(cands, q, queryIntent(q), new Set(RANK_STAGES)).ranked.map((c) => c.id)).toEqual([1, 2, 3]);
  });
});

describe('intent in fusion', () => {
  const runs = (): RetrieverRun[] => [
    { name: 'symbol', ms: 0, hits: [{ id: 1, score: 4, wordOnly: true }] },
    { name: 'bm25', ms: 0, hits: [{ id: 2, score: 30 }, { id: 1, score: 5 }] },
  ];
  it('a sentence does not let a one-word name match outrank the text match', () => {
    expect(fuse(runs())[0]?.id).toBe(1);
    expect(fuse(runs(), 'sentence')[0]?.id).toBe(2);
  });
  it('a bare name keeps its name match first', () => {
    expect(fuse(runs(), 'symbol')[0]?.id).toBe(1);
  });
});

describe('a one-letter name', () => {
  it('is looked up as a name (Flask-style `g`), not dropped as too short a word', async () => {
    const dir = tempDir('vlt-one-letter-');
    try {
      writeFileSync(path.join(dir, 'globals.py'), 'from werkzeug.local import LocalProxy\n\ng = LocalProxy(_lookup_app_object)\n');
      writeFileSync(path.join(dir, 'other.py'), 'def helper():\n    go = 1\n    return go\n');
      const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
      try {
        await engine.index();
        const hits = (await engine.search('g')).hits;
        expect(hits[0]).toMatchObject({ path: 'globals.py', symbol: 'g' });
        // Qualified, the short last part is still the name asked for (`flask.g`, `np.e`).
        expect((await engine.search('flask.g')).hits[0]).toMatchObject({ path: 'globals.py', symbol: 'g' });
      } finally {
        await engine.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the explain trace', () => {
  it('names the words the text retriever added to the query, with their weights', async () => {
    const dir = tempDir('vlt-explain-stems-');
    try {
      writeFileSync(path.join(dir, 'body.go'), 'package body\n\n// parse reads a multipart body.\nfunc parse(b []byte) error { return nil }\n');
      writeFileSync(path.join(dir, 'buf.go'), 'package body\n\nfunc freeBuf(buf []byte) { pool.Put(buf) }\n');
      const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
      try {
        await engine.index();
        const res = await engine.search('how are multipart bodies parsed');
        const stems = res.explain.rank.stages.find((s) => s.stage === 'stems');
        expect(stems?.note).toMatch(/\bparse 0\.50\b/);
        // A short form the code uses for a word of the query: "buffer" → `buf`.
        const short = await engine.search('where is the message buffer freed');
        expect(short.explain.rank.stages.find((s) => s.stage === 'abbrev')?.note).toMatch(/\bbuf 0\.50\b/);
        expect(short.hits[0]?.path).toBe('buf.go');
      } finally {
        await engine.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('kind filters', () => {
  it('tell definitions by kind, tests and docs by file', () => {
    const c = (kind: string, path: string, language = 'go') => ({ kind, path, language });
    expect(chunkIsKind('function', c('function', 'a.go'))).toBe(true);
    expect(chunkIsKind('function', c('method', 'a.go'))).toBe(false);
    expect(chunkIsKind('method', c('method', 'a.go'))).toBe(true);
    expect(chunkIsKind('class', c('struct', 'a.go'))).toBe(true);
    expect(chunkIsKind('type', c('interface', 'a.ts', 'typescript'))).toBe(true);
    expect(chunkIsKind('type', c('class', 'a.ts', 'typescript'))).toBe(false);
    expect(chunkIsKind('test', c('function', 'a_test.go'))).toBe(true);
    expect(chunkIsKind('test', c('function', 'a.go'))).toBe(false);
    expect(chunkIsKind('doc', c('section', 'README.md', 'markdown'))).toBe(true);
    expect(chunkIsKind('doc', c('function', 'a.go'))).toBe(false);
  });

  it('narrow a search to those kinds, inside the retrievers', async () => {
    const dir = tempDir('vlt-kind-');
    try {
      // Definitions long enough to be chunks of their own: a filter reads a chunk's main definition.
      const body = Array.from({ length: 25 }, (_, i) => `\tx${i} := len(s) + ${i}\n\t_ = x${i}\n`).join('');
      writeFileSync(path.join(dir, 'parse.go'), `package p\n\n// Parser parses.\ntype Parser struct {\n${Array.from({ length: 30 }, (_, i) => `\tfield${i} int\n`).join('')}}\n\n// Parse parses input.\nfunc Parse(s string) string {\n${body}\treturn s\n}\n\n// Parse parses input with the parser.\nfunc (p Parser) Parse(s string) string {\n${body}\treturn s\n}\n`);
      writeFileSync(path.join(dir, 'parse_test.go'), 'package p\n\nimport "testing"\n\nfunc TestParse(t *testing.T) { Parse("x") }\n');
      writeFileSync(path.join(dir, 'README.md'), '# Parse\n\nParse parses input.\n');
      const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
      try {
        await engine.index();
        const kinds = async (k: Parameters<typeof chunkIsKind>[0]) => (await engine.search('parse', { kinds: [k] })).hits.map((h) => `${h.path}:${h.kind}`);
        expect((await kinds('function')).sort()).toEqual(['parse.go:function', 'parse_test.go:function']);
        expect(await kinds('method')).toEqual(['parse.go:method']);
        expect(await kinds('test')).toEqual(['parse_test.go:function']);
        expect((await kinds('doc')).every((h) => h.startsWith('README.md'))).toBe(true);
        expect((await kinds('doc')).length).toBeGreaterThan(0);
      } finally {
        await engine.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

