/**
 * `vlt eval history` and `vlt coderag locate` through the built CLI on a small git repository
 * made here: fix commits whose changed files are known, so the report's numbers can be checked,
 * and the user's repository must come out untouched (no worktree, no index change, no files).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/mcp-client';
import { tempDir, vlt } from '../helpers/cli';

const ENV = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, env: { ...process.env, ...ENV }, encoding: 'utf8' });
}

function write(dir: string, rel: string, text: string): void {
  mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  writeFileSync(path.join(dir, rel), text);
}

describe('vlt eval history', () => {
  let dir: string;
  beforeAll(() => {
    ensureBuilt();
    dir = tempDir();
    git(dir, 'init', '-q', '-b', 'main');
    write(dir, 'lib/dates.py', 'def parse_date(text):\n    """Parse an ISO date."""\n    year, month, day = text.split("-")\n    return int(year), int(month), int(day)\n');
    write(dir, 'lib/money.py', 'def format_amount(cents, currency):\n    """Format an amount of money."""\n    return f"{cents / 100:.2f} {currency}"\n');
    write(dir, 'lib/http.py', 'def fetch(url, timeout=10):\n    """Fetch a URL with retries."""\n    return url, timeout\n');
    write(dir, 'tests/test_dates.py', 'from lib.dates import parse_date\n\n\ndef test_parse_date():\n    assert parse_date("2020-01-02") == (2020, 1, 2)\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'Initial import of the date, money and http helpers');
    write(dir, 'lib/dates.py', 'def parse_date(text):\n    """Parse an ISO date."""\n    year, month, day = text.strip().split("-")\n    return int(year), int(month), int(day)\n');
    write(dir, 'tests/test_dates.py', 'from lib.dates import parse_date\n\n\ndef test_parse_date():\n    assert parse_date(" 2020-01-02") == (2020, 1, 2)\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'Fix crash when the ISO date text has surrounding whitespace');
    write(dir, 'lib/money.py', 'def format_amount(cents, currency):\n    """Format an amount of money."""\n    return f"{cents / 100:.2f} {currency.upper()}"\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'Fix wrong currency case in formatted money amounts');
    write(dir, 'lib/http.py', 'def fetch(url, timeout=30):\n    """Fetch a URL with retries."""\n    return url, timeout\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'Raise the default timeout of fetch');
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('evaluates the fix commits with every method and leaves the repository as it was', async () => {
    const before = git(dir, 'status', '--porcelain');
    const scratchBefore = readdirSync(tmpdir()).filter((n) => n.startsWith('vlt-eval-')).length;
    const out = path.join(tempDir(), 'report.json');
    const r = await vlt(['-C', dir, 'eval', 'history', '--json', '--out', out], { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { candidates: number; evaluated: number; overall: Record<string, { n: number; acc5: number }> };
    // The timeout change says no fix word; the two fixes count.
    expect(summary.candidates).toBe(2);
    expect(summary.evaluated).toBe(2);
    expect(Object.keys(summary.overall).sort()).toEqual(['bm25', 'locate', 'search']);
    expect(summary.overall.locate).toMatchObject({ n: 2, acc5: 1 });
    const report = JSON.parse((await import('node:fs')).readFileSync(out, 'utf8')) as { instances: Array<{ query: string; gold: string[]; ranks: Record<string, number> }> };
    expect(report.instances.map((i) => i.gold[0]).sort()).toEqual(['lib/dates.py', 'lib/money.py']);
    expect(report.instances.every((i) => (i.ranks.locate ?? 0) >= 1)).toBe(true);
    expect(git(dir, 'status', '--porcelain')).toBe(before);
    expect(git(dir, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
    expect(readdirSync(tmpdir()).filter((n) => n.startsWith('vlt-eval-')).length).toBe(scratchBefore);
  }, 120_000);

  it('prints a table by default and replays a frozen set of instances', async () => {
    const set = path.join(tempDir(), 'set.json');
    const head = git(dir, 'rev-parse', 'HEAD~1').trim();
    const parent = git(dir, 'rev-parse', 'HEAD~2').trim();
    writeFileSync(set, JSON.stringify({ instances: [{ sha: head, parent, time: 1, query: 'currency is printed in lower case', gold: ['lib/money.py'], namesGold: false }] }));
    const r = await vlt(['-C', dir, 'eval', 'history', '--instances', set, '--methods', 'locate,bm25'], { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('1 fix commits evaluated (of 1 candidates)');
    expect(r.stdout).toMatch(/locate\s+1\s+100\.0%/);
    expect(r.stdout).not.toMatch(/^\s+search/m);
  }, 120_000);

  it("starts from the workspace's own index, with the files it names (snapshots, text segments, chunk text packs)", async () => {
    const init = await vlt(['-C', dir, 'coderag', 'init'], { timeoutMs: 60_000 });
    expect(init.code, init.stderr).toBe(0);
    try {
      const r = await vlt(['-C', dir, 'eval', 'history', '--json', '--verbose'], { timeoutMs: 120_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('the scratch index starts from the workspace index');
      expect(JSON.parse(r.stdout)).toMatchObject({ evaluated: 2, overall: { locate: { n: 2, acc5: 1 } } });
    } finally {
      rmSync(path.join(dir, '.vlt'), { recursive: true, force: true });
    }
  }, 120_000);

  it('says what is wrong outside a repository, in a shallow clone, and with a bad set file', async () => {
    const plain = tempDir();
    const r = await vlt(['-C', plain, 'eval', 'history']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not in a git repository/);
    const bad = path.join(plain, 'bad.json');
    writeFileSync(bad, '{"instances": [{"sha": 1}]}');
    const b = await vlt(['-C', dir, 'eval', 'history', '--instances', bad]);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/instance 1 needs sha, parent, query and gold/);
    const shallow = tempDir();
    execFileSync('git', ['clone', '-q', '--depth', '1', `file://${dir}`, shallow]);
    const s = await vlt(['-C', shallow, 'eval', 'history']);
    expect(s.code).toBe(1);
    expect(s.stderr).toMatch(/shallow clone/);
  }, 60_000);
});

describe('vlt coderag locate', () => {
  it('reads the report from stdin and prints files with reasons, or JSON', async () => {
    ensureBuilt();
    const dir = tempDir();
    write(dir, 'pkg/store.py', 'class Store:\n    def put(self, key, value):\n        if key is None:\n            raise KeyError("the key must not be None")\n        return key\n');
    write(dir, 'pkg/other.py', 'def unrelated():\n    return 42\n');
    expect((await vlt(['-C', dir, 'coderag', 'init', '-q'])).code).toBe(0);
    const report = path.join(dir, 'report.txt');
    writeFileSync(report, 'Calling put fails with KeyError: the key must not be None\n');
    const r = await vlt(['-C', dir, 'coderag', 'locate', '-'], { stdinFile: report });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^ 1\. pkg\/store\.py/);
    expect(r.stdout).toContain('holds the message "the key must not be None"');
    const j = await vlt(['-C', dir, 'coderag', 'locate', '--json', 'KeyError', 'the key must not be None']);
    const parsed = JSON.parse(j.stdout) as { files: Array<{ path: string; reasons: string[] }> };
    expect(parsed.files[0]?.path).toBe('pkg/store.py');
    const empty = await vlt(['-C', dir, 'coderag', 'locate']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no report given/);
  }, 60_000);
});
