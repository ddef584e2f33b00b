/**
 * The code cache of the full CLI bundle: a command in its own process writes V8's cache of
 * cli-main.js to the user's cache folder once and uses it after; a corrupt or foreign cache is
 * rejected and replaced, and a cache folder that cannot be written costs nothing but the time.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir, vlt } from '../helpers/cli';

describe('the code cache of the CLI bundle', () => {
  const cache = tempDir('vlt-cache-');
  const ws = tempDir('vlt-cache-ws-');
  afterAll(() => {
    rmSync(cache, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
  });
  // A command that loads the whole CLI and answers without an index: INDEX_MISSING, exit 1.
  const status = (env: Record<string, string>) => vlt(['coderag', 'status', '-C', ws], { env });

  it('is written once, used after, and replaced when corrupt', async () => {
    const first = await status({ XDG_CACHE_HOME: cache });
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(/no index/);
    const files = readdirSync(path.join(cache, 'vlt'));
    expect(files).toHaveLength(1);
    const file = path.join(cache, 'vlt', files[0]!);
    const written = readFileSync(file);
    expect(written.length).toBeGreaterThan(100_000);
    const second = await status({ XDG_CACHE_HOME: cache });
    expect([second.code, second.stderr]).toEqual([first.code, first.stderr]);
    // Used, not rewritten.
    expect(readFileSync(file).equals(written)).toBe(true);
    // Garbage in the cache: V8 rejects it, the command runs, the cache is written anew.
    writeFileSync(file, Buffer.alloc(4096, 7));
    const third = await status({ XDG_CACHE_HOME: cache });
    expect([third.code, third.stderr]).toEqual([first.code, first.stderr]);
    expect(readFileSync(file).length).toBeGreaterThan(100_000);
  });

  it('costs nothing but time when the cache folder cannot be made', async () => {
    // A file where the folder would go: no folder can be made there, whoever runs the test.
    const blocked = path.join(cache, 'not-a-folder');
    writeFileSync(blocked, '');
    const r = await status({ XDG_CACHE_HOME: blocked });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no index/);
    expect(r.stderr).not.toMatch(/ENOTDIR|EEXIST/);
  });
});
