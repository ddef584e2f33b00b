/**
 * The navigation tree cache: trees by content hash kept across calls within a size bound,
 * never freed while a call holds them, freed (deleted) exactly once on eviction or clear.
 */
import { describe, expect, it } from 'vitest';
import type { Node } from 'web-tree-sitter';
import { TreeCache } from '../../src/core/intel/sources';

function fakeTrees() {
  const made: string[] = [];
  const freed: string[] = [];
  const make = (key: string) => () => {
    made.push(key);
    return { root: { type: key } as unknown as Node, scopes: undefined, dispose: () => freed.push(key) };
  };
  return { made, freed, make };
}

describe('TreeCache', () => {
  it('hands out the same tree for the same key across calls, parsing once', () => {
    const cache = new TreeCache(1000);
    const t = fakeTrees();
    const a = cache.acquire('go:h1', 100, t.make('h1'));
    cache.release('go:h1');
    const b = cache.acquire('go:h1', 100, t.make('h1'));
    cache.release('go:h1');
    expect(b.root).toBe(a.root);
    expect(t.made).toEqual(['h1']);
    expect(t.freed).toEqual([]);
  });

  it('frees the least recently used trees beyond its size, but never one a call holds', () => {
    const cache = new TreeCache(250);
    const t = fakeTrees();
    cache.acquire('a', 100, t.make('a'));
    cache.acquire('b', 100, t.make('b'));
    cache.release('b');
    cache.acquire('c', 100, t.make('c'));
    // Over the bound: b is free to go, a is still held.
    cache.release('c');
    expect(t.freed).toEqual(['b']);
    cache.release('a');
    expect(t.freed).toEqual(['b']);
    cache.acquire('d', 100, t.make('d'));
    cache.release('d');
    // a is now the least recently used.
    expect(t.freed).toEqual(['b', 'a']);
    expect(cache.size).toBe(2);
  });

  it('with no room keeps nothing once released (the one-shot behaviour), and clear frees each tree once', () => {
    const none = new TreeCache(0);
    const t = fakeTrees();
    none.acquire('x', 10, t.make('x'));
    expect(t.freed).toEqual([]);
    none.release('x');
    expect(t.freed).toEqual(['x']);
    const cache = new TreeCache(1000);
    cache.acquire('y', 10, t.make('y'));
    cache.acquire('z', 10, t.make('z'));
    cache.release('z');
    cache.clear();
    expect(t.freed).toEqual(['x', 'z']);
    cache.release('y');
    cache.clear();
    cache.clear();
    expect(t.freed).toEqual(['x', 'z', 'y']);
  });
});
