/**
 * Files are parsed concurrently by the worker pool, but stored in path order: chunk ids (and with
 * them the order of equal search scores) are the same on every run, whichever parse finishes
 * first. A large first file, parsed beside small ones, would otherwise be stored last.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IndexStore } from '../../src/core/store/store';
import { ensureBuilt } from '../helpers/mcp-client';
import { tempDir, vlt } from '../helpers/cli';

describe('index order', () => {
  let dir: string;
  beforeAll(() => {
    ensureBuilt();
    dir = tempDir();
    mkdirSync(path.join(dir, 'pkg'));
    // a_big.py takes the longest to parse and comes first by path.
    const big = Array.from({ length: 3000 }, (_, i) => `def function_${i}(value):\n    """Doubles value number ${i}."""\n    return value * ${i}\n`).join('\n');
    writeFileSync(path.join(dir, 'pkg/a_big.py'), big);
    for (const c of 'bcdefghijk') writeFileSync(path.join(dir, `pkg/${c}_small.py`), `def small_${c}():\n    return "${c}"\n`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('stores files in path order whatever order their parses finish in', async () => {
    const r = await vlt(['-C', dir, 'coderag', 'init', '--json'], { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const store = await IndexStore.open(dir, { mode: 'read' });
    try {
      const firstChunk = store.listFiles().map((f) => ({ path: f.path, id: Math.min(...store.chunksOfFile(f.id).map((c) => c.id)) }));
      const byId = [...firstChunk].sort((a, b) => a.id - b.id).map((f) => f.path);
      expect(byId).toEqual(firstChunk.map((f) => f.path).sort());
    } finally {
      store.close();
    }
  }, 120_000);
});
