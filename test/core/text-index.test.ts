import { describe, expect, it } from 'vitest';
import { CodeTextIndex } from '../../src/core/search/text-index';
import { SearchIndex } from '../../src/core/search/orama-index';
import { identifierParts, tokenize, tokenizeQuery } from '../../src/core/search/tokenizer';

describe('code tokenizer', () => {
  it('keeps whole identifiers and splits camelCase, acronyms and snake_case', () => {
    expect(tokenize('ParseDuration')).toEqual(['parseduration', 'parse', 'duration']);
    expect(identifierParts('HTTPServer')).toEqual(['http', 'server']);
    expect(identifierParts('read_all_bytes')).toEqual(['read', 'all', 'byte']);
    expect(tokenize('the x of a')).toEqual([]);
  });
  it('dedupes query terms in order', () => {
    expect(tokenizeQuery('writer Writer close')).toEqual(['writer', 'close']);
  });
});

describe('CodeTextIndex', () => {
  const build = () => {
    const idx = new CodeTextIndex();
    idx.add(1, { name: ['parseduration', 'parse', 'duration'], body: ['return', 'duration'] });
    idx.add(2, { name: ['formatduration'], body: ['duration', 'duration', 'string'] });
    idx.add(3, { name: ['unrelated'], body: ['nothing', 'here'] });
    return idx;
  };

  it('ranks a name match above body matches (field boosts)', () => {
    const hits = build().search(['parse', 'duration'], { boost: { name: 4, body: 1 } });
    expect(hits.map((h) => h.slot)).toEqual([1, 2]);
    expect(hits[0]!.matchedTerms).toBe(2);
  });

  it('skips removed slots and survives a snapshot round trip', () => {
    const idx = build();
    idx.remove(1);
    const copy = CodeTextIndex.deserialize(idx.serialize());
    for (const i of [idx, copy]) {
      expect(i.search(['duration']).map((h) => h.slot)).toEqual([2]);
      expect(i.size).toBe(2);
    }
    copy.add(4, { name: ['parse'] });
    expect(copy.search(['parse']).map((h) => h.slot)).toEqual([4]);
  });

  it('rejects damaged snapshots', () => {
    const bytes = build().serialize();
    expect(() => CodeTextIndex.deserialize(bytes.subarray(0, 40))).toThrow();
    const bad = bytes.slice();
    bad[0] = 0;
    expect(() => CodeTextIndex.deserialize(bad)).toThrow(/snapshot/);
  });
});

describe('SearchIndex (Orama with the code text component)', () => {
  it('indexes, filters by language, removes and reloads', () => {
    const idx = SearchIndex.create();
    idx.add({ id: 10, path: 'time/format.go', language: 'go', kind: 'function', name: 'ParseDuration', sig: 'func ParseDuration(s string) (Duration, error)', body: 'parses a duration string' });
    idx.add({ id: 11, path: 'lib/duration.py', language: 'python', kind: 'function', name: 'parse_duration', sig: 'def parse_duration(value):', body: 'return timedelta' });
    idx.add({ id: 12, path: 'time/sleep.go', language: 'go', kind: 'function', name: 'Sleep', sig: 'func Sleep(d Duration)', body: 'sleep' });
    expect(idx.searchText('parse duration', { limit: 5 }).map((h) => h.id)).toEqual(expect.arrayContaining([10, 11]));
    expect(idx.searchText('parse duration', { limit: 5, language: 'python' }).map((h) => h.id)).toEqual([11]);
    idx.remove(11);
    const reloaded = SearchIndex.deserialize(idx.serialize());
    expect(reloaded.size).toBe(2);
    const ids = reloaded.searchText('parse duration', { limit: 5 }).map((h) => h.id);
    expect(ids[0]).toBe(10);
    expect(ids).not.toContain(11);
    expect(reloaded.searchText('', { limit: 5 })).toEqual([]);
  });

  it('stores vectors and finds the nearest chunk', () => {
    const idx = SearchIndex.create(3);
    idx.add({ id: 1, path: 'a.go', language: 'go', kind: 'block', name: '', sig: '', body: 'alpha' }, new Float32Array([1, 0, 0]));
    idx.add({ id: 2, path: 'b.go', language: 'go', kind: 'block', name: '', sig: '', body: 'beta' }, new Float32Array([0, 1, 0]));
    expect(idx.searchVector(new Float32Array([0.1, 0.9, 0]), { limit: 1 })[0]!.id).toBe(2);
    const reloaded = SearchIndex.deserialize(idx.serialize());
    expect(reloaded.vectorCount()).toBe(0);
    reloaded.setVector(2, new Float32Array([0, 1, 0]));
    expect(reloaded.searchVector(new Float32Array([0, 1, 0]), { limit: 1 })[0]!.id).toBe(2);
  });
});
