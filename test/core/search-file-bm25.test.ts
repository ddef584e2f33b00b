import { describe, expect, it } from 'vitest';
import { FileBm25, topFiles } from '../../src/core/search/file-bm25';

describe('FileBm25', () => {
  it('ranks by BM25 over whole files, rarer terms weighing more', () => {
    const idx = new FileBm25();
    idx.set('a.py', 'h1', ['timezone', 'parse', 'parse', 'date']);
    idx.set('b.py', 'h2', ['parse', 'string']);
    idx.set('c.py', 'h3', ['render', 'template']);
    expect(idx.search(['timezone', 'parse'], 3).map((f) => f.path)).toEqual(['a.py', 'b.py']);
    expect(idx.idf('timezone')).toBeGreaterThan(idx.idf('parse'));
    expect(idx.search(['missing'], 3)).toEqual([]);
  });

  it('keeps a file indexed with the same hash, replaces one with another, and forgets a deleted one', () => {
    const idx = new FileBm25();
    idx.set('a.py', 'h1', ['alpha']);
    idx.set('a.py', 'h1', ['beta']);
    expect(idx.docFrequency('alpha')).toBe(1);
    idx.set('a.py', 'h2', ['beta', 'beta']);
    expect(idx.docFrequency('alpha')).toBe(0);
    expect(idx.lengthOf('a.py')).toBe(2);
    idx.delete('a.py');
    expect(idx.size).toBe(0);
    expect(idx.hashOf('a.py')).toBeUndefined();
    expect(idx.averageLength).toBe(0);
    idx.set('b.py', 'h3', ['gamma']);
    expect([...idx.paths()]).toEqual(['b.py']);
  });

  it('counts a repeated query term once per occurrence and scales a term by its weight', () => {
    const idx = new FileBm25();
    idx.set('a.py', 'h', ['x', 'y']);
    idx.set('b.py', 'h', ['y', 'z']);
    idx.set('c.py', 'h', ['q']);
    const once = idx.scores(['x', 'z']);
    expect(once.get('a.py')).toBeCloseTo(once.get('b.py')!);
    const twice = idx.scores(['x', 'x', 'z']);
    expect(twice.get('a.py')!).toBeGreaterThan(twice.get('b.py')!);
    const weighted = idx.scores(['x', 'z'], new Map([['z', 3]]));
    expect(weighted.get('b.py')!).toBeGreaterThan(weighted.get('a.py')!);
  });

  it('breaks score ties by path', () => {
    expect(topFiles(new Map([['b', 1], ['a', 1], ['c', 2]]), 2)).toEqual([{ path: 'c', score: 2 }, { path: 'a', score: 1 }]);
  });
});
