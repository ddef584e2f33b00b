import { describe, expect, it } from 'vitest';
import { LazyIdMap } from '../../src/core/search/orama-ids';

/** What Orama's own load builds: every id mapped to its position + 1. */
function eager(ids: readonly string[]): Map<string, number> {
  return new Map(ids.map((id, i) => [id, i + 1]));
}

describe('the lazily filled id map of a loaded search index', () => {
  it('answers as the filled map does, sorted ids by binary search (ids of different lengths included)', () => {
    const ids = ['1', '2', '9', '10', '11', '99', '100', '1000', '20000'];
    const lazy = new LazyIdMap(ids);
    const full = eager(ids);
    for (const probe of [...ids, '0', '3', '12', '101', '999', '20001', '', 'x']) {
      expect(lazy.get(probe), probe).toBe(full.get(probe));
      expect(lazy.has(probe), probe).toBe(full.has(probe));
    }
    expect(lazy.size).toBe(ids.length);
  });

  it('fills itself before a change, so that Orama numbers a new document after the last', () => {
    const ids = ['3', '5', '8'];
    const lazy = new LazyIdMap(ids);
    // Orama's getInternalDocumentId for a new document: size + 1, then set.
    expect(lazy.get('13')).toBeUndefined();
    lazy.set('13', lazy.size + 1);
    expect(lazy.get('13')).toBe(4);
    expect(lazy.get('5')).toBe(2);
    expect([...lazy]).toEqual([...eager([...ids, '13'])]);
    lazy.delete('3');
    expect(lazy.has('3')).toBe(false);
    expect(lazy.size).toBe(3);
  });

  it('fills itself at once for ids out of order, and still answers every one', () => {
    const ids = ['5', '3', '40', '7'];
    const lazy = new LazyIdMap(ids);
    for (const id of ids) expect(lazy.get(id)).toBe(eager(ids).get(id));
    expect([...lazy.keys()]).toEqual(ids);
    lazy.clear();
    expect(lazy.size).toBe(0);
  });
});
