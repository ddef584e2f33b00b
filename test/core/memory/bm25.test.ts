import { describe, expect, it } from 'vitest';
import { Bm25Index, textTokens } from '../../../src/core/memory/bm25';

describe('Bm25Index', () => {
  it('ranks by BM25F: rarer terms and heavier fields count more', () => {
    const ix = new Bm25Index<string>({ title: 3, body: 1 });
    ix.set('a', { title: 'Cache design', body: 'how the store works' });
    ix.set('b', { title: 'Store', body: 'the cache sits in front of the store' });
    ix.set('c', { title: 'Unrelated', body: 'nothing to see' });
    expect(ix.search('cache', 10).map((h) => h.key)).toEqual(['a', 'b']);
    expect(ix.search('store', 10).map((h) => h.key)).toEqual(['b', 'a']);
    expect(ix.search('nothing here', 10).map((h) => h.key)).toEqual(['c']);
    expect(ix.search('', 10)).toEqual([]);
  });

  it('replaces and deletes documents, also across compaction', () => {
    // Letters only, so that no two words share an identifier part.
    const word = (i: number) => `w${i.toString(26).replace(/\d/g, (d) => 'qrstuvwxyz'[Number(d)]!)}`;
    const ix = new Bm25Index<number>({ body: 1 });
    for (let i = 0; i < 3000; i++) ix.set(i, { body: `common ${word(i)}` });
    ix.set(5, { body: 'replaced text' });
    expect(ix.search(word(5), 10)).toEqual([]);
    expect(ix.search('replaced', 10).map((h) => h.key)).toEqual([5]);
    for (let i = 10; i < 3000; i++) ix.delete(i);
    expect(ix.size).toBe(10);
    expect(ix.search('common', 100).map((h) => h.key).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 6, 7, 8, 9]);
    expect(ix.search(word(2999), 10)).toEqual([]);
    ix.set(2999, { body: `${word(2999)} is back` });
    expect(ix.search(word(2999), 10).map((h) => h.key)).toEqual([2999]);
  });

  it('filters before scoring', () => {
    const ix = new Bm25Index<string>({ body: 1 });
    ix.set('x/1', { body: 'alpha' });
    ix.set('y/2', { body: 'alpha' });
    expect(ix.search('alpha', 10, (k) => k.startsWith('y/')).map((h) => h.key)).toEqual(['y/2']);
  });

  it('tokenizes identifiers into parts and keeps non-ASCII words whole', () => {
    expect(textTokens('parseConfigFile')).toEqual(['parseconfigfile', 'parse', 'config', 'file']);
    expect(textTokens('Le café à Zürich')).toEqual(expect.arrayContaining(['café', 'zürich']));
  });
});
