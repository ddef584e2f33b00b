import { describe, expect, it } from 'vitest';
import { LINE_SLACK, checkCitations, citableLocations, locationsInText, parseCitations } from '../../../src/core/oracle/citations';
import type { AssembledContext, ContextItem, ContextTier, RetrievalResult } from '../../../src/core/oracle/types';

function item(tier: ContextTier, r: Partial<RetrievalResult> & Pick<RetrievalResult, 'source' | 'path' | 'citation'>, text = 'text'): ContextItem {
  const result: RetrievalResult = { key: r.citation, content: text, score: 1, method: 'test', metadata: {}, ...r };
  return { tier, citation: r.citation, text, tokens: 10, evidence: { result, fused: 1, score: 1, ranks: {}, features: {} } };
}

const context: AssembledContext = {
  items: [
    item('primary', { source: 'code', path: 'src/auth/token.ts', startLine: 10, endLine: 30, citation: '[src/auth/token.ts:10-30]' }),
    item('neighbour', { source: 'test', path: 'src/auth/token.test.ts', startLine: 5, endLine: 5, citation: '[src/auth/token.test.ts:5]' }),
    item('primary', { source: 'note', path: 'architecture/auth.md', citation: '[note:architecture/auth.md]' }),
    item('primary', { source: 'thread', path: 'auth-refactor', citation: '[thread:auth-refactor#4]' }),
    item('primary', { source: 'git', path: 'src/auth/legacy.ts', citation: '[commit:abc1234def]' }),
    { tier: 'conversation', citation: '[session:earlier]', text: 'We talked about tokens.', tokens: 5 },
  ],
  repoMap: 'src/auth/session.ts:\n  L5 class Session\n  L40   refresh(): void\nsrc/util.ts\n',
  tokens: 100,
  budget: 1000,
  dropped: [],
};

describe('parseCitations', () => {
  it('finds every form in order of first use, once each', () => {
    const text = [
      'Tokens are parsed in [src/auth/token.ts:12] and checked in [src/auth/token.ts:20-25].',
      'See [note:architecture/auth.md], [thread:auth-refactor#4] and [commit:ABC1234].',
      'Again [src/auth/token.ts:12].',
    ].join('\n');
    expect(parseCitations(text)).toEqual([
      { citation: '[src/auth/token.ts:12]', source: 'code', path: 'src/auth/token.ts', line: 12 },
      { citation: '[src/auth/token.ts:20-25]', source: 'code', path: 'src/auth/token.ts', line: 20 },
      { citation: '[note:architecture/auth.md]', source: 'note', path: 'architecture/auth.md' },
      { citation: '[thread:auth-refactor#4]', source: 'thread', path: 'auth-refactor', line: 4 },
      { citation: '[commit:ABC1234]', source: 'git', path: 'abc1234' },
    ]);
  });

  it('ignores links, footnotes, task boxes, times, slices, prose and fenced code', () => {
    const text = [
      'A [link](src/a.ts:1) and ![img](x.png), a footnote [1], a box [ ] and [x], at [12:30].',
      'Prose [see a.ts:1 later] and a slice arr[i:2].',
      '```python',
      'xs = ys[mod.py:3]',
      '```',
      'Only [src/b.go:7] counts.',
    ].join('\n');
    expect(parseCitations(text).map((c) => c.citation)).toEqual(['[src/b.go:7]']);
  });

  it('splits grouped and adjacent citations and normalises paths', () => {
    expect(parseCitations('x [a/b.ts:1, ./c/d.ts:2; note:My Notes/plan.md][e/f.go:3-3]')).toEqual([
      { citation: '[a/b.ts:1]', source: 'code', path: 'a/b.ts', line: 1 },
      { citation: '[./c/d.ts:2]', source: 'code', path: 'c/d.ts', line: 2 },
      { citation: '[note:My Notes/plan.md]', source: 'note', path: 'My Notes/plan.md' },
      { citation: '[e/f.go:3]', source: 'code', path: 'e/f.go', line: 3 },
    ]);
  });

  it('rejects malformed ranges and non-hash commits', () => {
    expect(parseCitations('[a.ts:0] [a.ts:9-3] [commit:not-a-hash] [thread:has space#1]')).toEqual([]);
  });
});

describe('checkCitations', () => {
  it('accepts lines inside or near a shown range and rejects the rest', () => {
    const text = `In range [src/auth/token.ts:12], near [src/auth/token.ts:${10 - LINE_SLACK}], too far [src/auth/token.ts:${10 - LINE_SLACK - 1}], range [src/auth/token.ts:28-33], overlong [src/auth/token.ts:12-60], test [src/auth/token.test.ts:6], other file [src/auth/other.ts:12].`;
    const res = checkCitations(text, context);
    expect(res.valid.map((c) => c.citation)).toEqual(['[src/auth/token.ts:12]', '[src/auth/token.ts:7]', '[src/auth/token.ts:28-33]', '[src/auth/token.test.ts:6]']);
    expect(res.unknown).toEqual(['[src/auth/token.ts:6]', '[src/auth/token.ts:12-60]', '[src/auth/other.ts:12]']);
  });

  it('matches notes, thread entries and commits exactly (hash prefixes of at least 7)', () => {
    const text = '[note:architecture/auth.md] [note:architecture/other.md] [thread:auth-refactor#4] [thread:auth-refactor#5] [commit:abc1234] [commit:abc1234def99] [commit:abc12] [commit:fff1234]';
    const res = checkCitations(text, context);
    expect(res.valid.map((c) => c.citation)).toEqual(['[note:architecture/auth.md]', '[thread:auth-refactor#4]', '[commit:abc1234]', '[commit:abc1234def99]']);
    expect(res.unknown).toEqual(['[note:architecture/other.md]', '[thread:auth-refactor#5]', '[commit:abc12]', '[commit:fff1234]']);
  });

  it('accepts repository-map definitions but not lines of a file only a commit names', () => {
    const res = checkCitations('[src/auth/session.ts:40] [src/auth/session.ts:20] [src/auth/legacy.ts:3] [src/util.ts:1]', context);
    expect(res.valid.map((c) => c.citation)).toEqual(['[src/auth/session.ts:40]']);
    expect(res.unknown).toEqual(['[src/auth/session.ts:20]', '[src/auth/legacy.ts:3]', '[src/util.ts:1]']);
  });

  it('accepts extra locations, such as those tools returned', () => {
    const text = 'See [src/auth/refresh.ts:8].';
    expect(checkCitations(text, context).unknown).toEqual(['[src/auth/refresh.ts:8]']);
    expect(checkCitations(text, context, [{ source: 'code', path: 'src/auth/refresh.ts', startLine: 3, endLine: 9 }]).valid).toHaveLength(1);
  });

  it('lists what the context makes citable', () => {
    const locs = citableLocations(context);
    expect(locs).toContainEqual({ source: 'code', path: 'src/auth/token.ts', startLine: 10, endLine: 30, citation: '[src/auth/token.ts:10-30]' });
    expect(locs).toContainEqual({ source: 'code', path: 'src/auth/session.ts', startLine: 5, endLine: 5 });
    expect(locs.some((l) => l.path === 'src/util.ts')).toBe(false);
  });
});

describe('locationsInText', () => {
  it('reads plain locations, bracketed citations and a repository map', () => {
    const text = 'src/a.ts:12 called from ./lib/b.py:3-9 (see [note:x/y.md]); host:80 is not a file.\npkg/server.go:\n  L77 func Serve()\n';
    expect(locationsInText(text)).toEqual([
      { source: 'code', path: 'src/a.ts', startLine: 12, endLine: 12 },
      { source: 'code', path: 'lib/b.py', startLine: 3, endLine: 9 },
      { source: 'note', path: 'x/y.md', citation: '[note:x/y.md]' },
      { source: 'code', path: 'pkg/server.go', startLine: 77, endLine: 77 },
    ]);
  });

  it('reads path and line fields from JSON at any depth', () => {
    const json = JSON.stringify({ results: [{ path: 'src/x.ts', start_line: 4, end_line: 8 }, { file: 'src/y.ts', line: 2 }, { path: 'src/z.ts' }], nested: { def: { path: 'src/w.ts', startLine: 1, endLine: 3 } } });
    expect(locationsInText(json)).toEqual([
      { source: 'code', path: 'src/x.ts', startLine: 4, endLine: 8 },
      { source: 'code', path: 'src/y.ts', startLine: 2, endLine: 2 },
      { source: 'code', path: 'src/w.ts', startLine: 1, endLine: 3 },
    ]);
  });
});
