/**
 * ctags' tags cache (src/node/ctags-cache.ts): one name is read from its own line, the whole
 * map when a host keeps every tag, and a provider in a new process answers a lookup from the
 * cache of its index generation without running ctags or reading the rest of the file.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Tag } from '../../src/core/intel/navigate';
import { silentLogger } from '../../src/core/ports';
import { CtagsProvider } from '../../src/node/ctags';
import { encodeTags, readAllTags, readTagsIndex, readTagsOf, TAGS_CACHE_FILE } from '../../src/node/ctags-cache';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'vlt-ctags-cache-'));
  dirs.push(d);
  return d;
};

const tag = (name: string, file: string, line: number, kind = 'function'): Tag => ({ name, path: file, line, kind });

describe('the ctags cache', () => {
  it('reads one name from its own line, every name at once, and nothing of another layout', async () => {
    const byName = new Map<string, Tag[]>([
      ['Parse', [tag('Parse', 'a.go', 3), tag('Parse', 'b/ü.go', 9, 'method')]],
      ['constructor', [tag('constructor', 'c.ts', 1)]],
      ['Ünïcode', [tag('Ünïcode', 'd.py', 2, 'class')]],
    ]);
    const file = path.join(tmp(), TAGS_CACHE_FILE);
    writeFileSync(file, encodeTags(7, byName));
    const index = await readTagsIndex(file);
    expect(index?.generation).toBe(7);
    for (const [name, tags] of byName) expect(await readTagsOf(file, index!, name)).toEqual(tags);
    // Absent, and names that are properties of every object: no tags.
    expect(await readTagsOf(file, index!, 'Missing')).toEqual([]);
    expect(await readTagsOf(file, index!, 'toString')).toEqual([]);
    expect((await readAllTags(file))?.byName).toEqual(byName);
    writeFileSync(file, JSON.stringify({ version: 1, generation: 7, tags: [] }));
    expect(await readTagsIndex(file)).toBeUndefined();
    expect(await readAllTags(file)).toBeUndefined();
  });

  it('finds the first line when it is longer than one read', async () => {
    const byName = new Map<string, Tag[]>();
    for (let i = 0; i < 60_000; i++) byName.set(`name_${i}_${'x'.repeat(10)}`, [tag(`name_${i}_${'x'.repeat(10)}`, `f${i % 50}.go`, i)]);
    const file = path.join(tmp(), TAGS_CACHE_FILE);
    writeFileSync(file, encodeTags(3, byName));
    const index = await readTagsIndex(file);
    expect(index).toBeDefined();
    expect(index!.bodyStart).toBeGreaterThan(1 << 20);
    expect(await readTagsOf(file, index!, 'name_59999_xxxxxxxxxx')).toEqual([tag('name_59999_xxxxxxxxxx', 'f49.go', 59999)]);
  });

  it("a new process's provider answers from the cache of its generation without running ctags", async () => {
    const root = tmp();
    mkdirSync(path.join(root, '.vlt'));
    const byName = new Map<string, Tag[]>([['Helper', [tag('Helper', 'util/util.go', 4)]]]);
    writeFileSync(path.join(root, '.vlt', TAGS_CACHE_FILE), encodeTags(5, byName));
    // A program that does not exist: any run of ctags would fail.
    const provider = (generation: number) => new CtagsProvider({ root, files: () => ['util/util.go'], generation: () => generation, logger: silentLogger, command: path.join(root, 'no-such-ctags') });
    expect(await provider(5).lookup('Helper')).toEqual(byName.get('Helper'));
    expect(await provider(5).lookup('Absent')).toEqual([]);
    // Another generation: the cache is not used (and running ctags fails here).
    await expect(provider(6).lookup('Helper')).rejects.toThrow();
    expect(readFileSync(path.join(root, '.vlt', TAGS_CACHE_FILE)).length).toBeGreaterThan(0);
  });
});
