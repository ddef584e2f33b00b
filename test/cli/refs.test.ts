/**
 * `vlt coderag refs` and `def` as a user runs them (the built binary, no language server): a
 * qualified name answers as its position does, the exact total with a page and a cursor for
 * the rest, and every answer either lists locations or says why there are none, with the
 * CLI's exit codes (0 answered, 2 usage).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, vlt } from '../helpers/cli';

describe('vlt coderag refs and def', () => {
  let ws: { dir: string; cleanup: () => void };
  beforeAll(async () => {
    ws = copyFixture('test/fixtures/intel/go');
    const r = await vlt(['coderag', 'init', ws.dir]);
    expect(r.code, r.stderr).toBe(0);
  });
  afterAll(() => ws.cleanup());
  const run = (...args: string[]) => vlt(['-C', ws.dir, 'coderag', ...args, '--no-lsp']);

  it('answers a qualified name as its position, in text and JSON', async () => {
    const byName = await run('refs', 'util.Helper', '--json');
    const byPos = await run('refs', 'util/util.go:4:6', '--json');
    expect(byName.code, byName.stderr).toBe(0);
    const [a, b] = [JSON.parse(byName.stdout), JSON.parse(byPos.stdout)];
    expect(a.total).toBe(3);
    expect(a.locations.map((l: { path: string; line: number; col: number }) => `${l.path}:${l.line}:${l.col}`)).toEqual(
      b.locations.map((l: { path: string; line: number; col: number }) => `${l.path}:${l.line}:${l.col}`),
    );
    const def = await run('def', 'Server.Serve');
    expect(def.stdout).toMatch(/^definition of Server\.Serve: 1$/m);
    expect(def.stdout).toMatch(/srv\/server\.go:13:18 {2}method/);
  });

  it('gives the exact total, the first page and a cursor that reaches the rest', async () => {
    // Pages are cut by size, as find_references cuts them: 100 tokens hold one reference.
    const first = await run('refs', 'util.Helper', '--max-tokens', '100', '--json');
    const page1 = JSON.parse(first.stdout);
    expect(page1.total).toBe(3);
    expect(page1.locations).toHaveLength(1);
    expect(page1.next_cursor).toEqual(expect.any(String));
    const second = await run('refs', 'util.Helper', '--max-tokens', '100', '--cursor', page1.next_cursor);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/^references to util\.Helper: 3 in all, 1 on this page$/m);
    expect(second.stdout).toMatch(/--cursor/);
    // -k caps how many are listed across pages; the total still counts every one.
    const capped = JSON.parse((await run('refs', 'util.Helper', '-k', '2', '--json')).stdout);
    expect(capped).toMatchObject({ total: 3 });
    expect(capped.locations).toHaveLength(2);
    expect(capped.next_cursor).toBeUndefined();
    // A cursor of another request is refused as a usage error.
    const wrong = await run('refs', 'srv.Serve', '--max-tokens', '100', '--cursor', page1.next_cursor);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/cursor belongs to a different search/);
  });

  it('says why an answer is empty, and exits 0 (an answer) or 2 (no symbol at that position)', async () => {
    const undefinedName = await run('refs', 'NoSuchThingAnywhere');
    expect(undefinedName.code).toBe(0);
    expect(undefinedName.stdout).toMatch(/^references to NoSuchThingAnywhere: none \(no definition/m);
    const unused = await run('refs', 'run.go:5:6', '--json');
    expect(unused.code).toBe(0);
    expect(JSON.parse(unused.stdout).reason).toMatchObject({ code: 'no-uses' });
    const blank = await run('refs', 'run.go:2:1');
    expect(blank.code).toBe(2);
    expect(blank.stdout).toBe('');
    expect(blank.stderr).toMatch(/no identifier at run\.go:2:1/);
  });
});
