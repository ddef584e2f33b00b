import { describe, expect, it } from 'vitest';
import { analyzeQuery } from '../../src/core/search/query';
import { fuse } from '../../src/core/search/hybrid';

describe('analyzeQuery', () => {
  it('finds identifiers, dotted members and word joins', () => {
    const q = analyzeQuery('why does http.HandlerFunc call ServeHTTP on parse_duration');
    expect(q.identifiers).toEqual(expect.arrayContaining(['http.HandlerFunc', 'ServeHTTP', 'parse_duration']));
    expect(q.words).toEqual(expect.arrayContaining(['HandlerFunc', 'ServeHTTP']));
    expect(analyzeQuery('parse duration string').joins).toEqual(['parseduration', 'durationstring']);
    expect(analyzeQuery('parse duration string').joins3).toEqual(['parsedurationstring']);
    expect(q.isLong).toBe(false);
  });

  it('extracts paths, Go stack frames and Python traceback frames with lines', () => {
    const q = analyzeQuery(
      'panic in\n\t/usr/local/go/src/net/http/server.go:1150 +0x2f5\n  File "/srv/venv/site-packages/django/db/models/query.py", line 941, in filter\nsee src/app.ts',
    );
    expect(q.paths).toEqual(
      expect.arrayContaining([
        { path: 'usr/local/go/src/net/http/server.go', line: 1150 },
        { path: 'srv/venv/site-packages/django/db/models/query.py', line: 941 },
        { path: 'src/app.ts' },
      ]),
    );
  });

  it('flags pasted documents as long', () => {
    expect(analyzeQuery('word '.repeat(60)).isLong).toBe(true);
  });
});

describe('weighted reciprocal-rank fusion', () => {
  it('rewards agreement between retrievers and keeps per-retriever ranks', () => {
    const fused = fuse([
      { name: 'symbol', ms: 0, hits: [{ id: 1, score: 9 }, { id: 2, score: 9 }] },
      { name: 'bm25', ms: 0, hits: [{ id: 3, score: 20 }, { id: 2, score: 10 }] },
    ]);
    expect(fused.map((f) => f.id)).toEqual([2, 1, 3]);
    expect(fused[0]!.ranks).toEqual({ symbol: 2, bm25: 2 });
  });

  it('scales the precise retrievers by confidence: a weak second symbol match loses to a strong first', () => {
    const fused = fuse([
      { name: 'symbol', ms: 0, hits: [{ id: 1, score: 9 }, { id: 2, score: 3 }] },
      { name: 'bm25', ms: 0, hits: [{ id: 2, score: 20 }, { id: 1, score: 10 }] },
    ]);
    expect(fused.map((f) => f.id)).toEqual([1, 2]);
  });

  it('is deterministic on ties', () => {
    const a = fuse([{ name: 'bm25', ms: 0, hits: [{ id: 5, score: 1 }] }, { name: 'vector', ms: 0, hits: [{ id: 4, score: 1 }] }]);
    expect(a.map((f) => f.id)).toEqual([4, 5]);
  });
});
