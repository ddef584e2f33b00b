import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VltError } from '../../src/core/errors';
import { analyzeQuestion } from '../../src/core/oracle/analyze';
import { GitRetriever, grepTerms, type BlameLine, type GitCommit, type GitHistory, type GitLogOptions } from '../../src/core/oracle/git-retriever';
import type { RetrievalResult } from '../../src/core/oracle/types';
import { NodeGitHistory, parseBlame, unquoteC } from '../../src/node/git-history';

/**
 * A real repository, built once: the workspace is its `app/` subdirectory, next to an
 * `other/` directory outside the workspace.
 *
 *   c1 Alice  2023-01-10  add app/token.ts (fixed retry delay), app/README.md, other/notes.txt
 *   c2 Bob    2023-02-11  switch token.ts lines 7-8 to exponential backoff (the "why" commit)
 *   c3 Carol  2023-03-12  rename app/token.ts → app/auth/token.ts
 *   c4 Alice  2023-04-13  other/notes.txt only: mentions backoff, but outside the workspace
 *   c5 Dave   2023-05-14  auth/token.ts line 1 (header comment)
 *   c6 Eve    2023-06-15  add app/-dash.ts and app/docs/naïve "quoted".md
 */
let base: string;
let repo: string;
let ws: string;
const hashes: Record<'c1' | 'c2' | 'c3' | 'c4' | 'c5' | 'c6', string> = { c1: '', c2: '', c3: '', c4: '', c5: '', c6: '' };

const TOKEN_V1 = [
  '// Token refresh',
  'export async function refreshToken(client) {',
  '  for (let attempt = 0; attempt < 5; attempt++) {',
  '    try {',
  '      return await client.refresh();',
  '    } catch (e) {',
  '      const delay = 1000;',
  '      await sleep(delay);',
  '    }',
  '  }',
  "  throw new Error('token refresh failed');",
  '}',
];
const TOKEN_V2 = TOKEN_V1.map((l, i) => (i === 6 ? '      const delay = Math.min(30000, 500 * 2 ** attempt);' : i === 7 ? '      await sleep(delay + Math.random() * delay);' : l));
const TOKEN_V3 = TOKEN_V2.map((l, i) => (i === 0 ? '// Token refresh for the identity provider client' : l));
const WHY_BODY = 'The identity provider rate-limits bursts. With a fixed 1 s delay every client retried in lockstep and kept the 429s going; exponential backoff with jitter spreads the retries out.';

function git(args: string[], env: Record<string, string> = {}): string {
  return execFileSync('git', args, {
    cwd: repo,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: join(base, 'gitconfig'), ...env },
  });
}

function write(rel: string, text: string): void {
  const abs = join(repo, rel);
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, text);
}

function commit(name: string, date: string, subject: string, body?: string): string {
  git(['add', '-A']);
  git(['-c', `user.name=${name}`, '-c', `user.email=${name.toLowerCase()}@example.com`, 'commit', '-q', '-m', subject, ...(body ? ['-m', body] : [])], {
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  });
  return git(['rev-parse', 'HEAD']).trim();
}

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'vlt-git-'));
  repo = join(base, 'repo');
  ws = join(repo, 'app');
  mkdirSync(repo);
  writeFileSync(join(base, 'gitconfig'), '');
  git(['init', '-q', '-b', 'main']);
  git(['config', 'commit.gpgsign', 'false']);
  git(['config', 'core.hooksPath', '/dev/null']);
  write('app/token.ts', TOKEN_V1.join('\n') + '\n');
  write('app/README.md', '# app\n');
  write('other/notes.txt', 'notes\n');
  hashes.c1 = commit('Alice', '2023-01-10T10:00:00+01:00', 'Add token refresh with a fixed retry delay');
  write('app/token.ts', TOKEN_V2.join('\n') + '\n');
  hashes.c2 = commit('Bob', '2023-02-11T11:00:00-05:00', 'Switch token refresh to exponential backoff because of 429 storms', WHY_BODY);
  mkdirSync(join(ws, 'auth'));
  git(['mv', 'app/token.ts', 'app/auth/token.ts']);
  hashes.c3 = commit('Carol', '2023-03-12T12:00:00+00:00', 'Move the token module into auth/');
  write('other/notes.txt', 'notes\nwe use backoff now\n');
  hashes.c4 = commit('Alice', '2023-04-13T13:00:00+00:00', 'Note the backoff decision for the other team');
  write('app/auth/token.ts', TOKEN_V3.join('\n') + '\n');
  hashes.c5 = commit('Dave', '2023-05-14T14:00:00+00:00', 'Tidy the token header comment');
  write('app/-dash.ts', 'export const dash = 1;\n');
  write('app/docs/naïve "quoted".md', '# naïve\n');
  hashes.c6 = commit('Eve', '2023-06-15T15:00:00+00:00', 'Add the dash module and the docs page');
  // Not committed: blame and log must not invent history for it.
  write('app/untracked.ts', 'export const u = 1;\n');
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

const short = (h: string) => h.slice(0, 7);
const subjects = (cs: GitCommit[]) => cs.map((c) => c.subject);

async function rejection(p: Promise<unknown>): Promise<VltError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(VltError);
    return e as VltError;
  }
  throw new Error('expected the promise to reject');
}

/** A git stand-in that answers `rev-parse` with the real git and sleeps on everything else (a shell script: not on Windows). */
function slowGit(): string {
  const script = join(base, 'slow-git.sh');
  writeFileSync(script, '#!/bin/sh\nfor a in "$@"; do case "$a" in rev-parse) exec git "$@";; esac; done\nexec sleep 20\n');
  chmodSync(script, 0o755);
  return script;
}

describe('NodeGitHistory on a real repository (workspace = a subdirectory)', () => {
  it('is available, and logs a file across its rename with workspace-relative paths', async () => {
    const h = new NodeGitHistory(ws);
    expect(await h.available()).toBe(true);
    const log = await h.log({ paths: ['auth/token.ts'], limit: 10 });
    expect(log.map((c) => c.hash)).toEqual([hashes.c5, hashes.c3, hashes.c2, hashes.c1]);
    const c2 = log[2]!;
    expect(c2).toMatchObject({ shortHash: short(hashes.c2), author: 'Bob', date: '2023-02-11T11:00:00-05:00', subject: 'Switch token refresh to exponential backoff because of 429 storms', body: WHY_BODY });
    // Before the rename the file had its old name; other/notes.txt lies outside the workspace.
    expect(c2.files).toEqual(['token.ts']);
    expect(log[3]!.files.sort()).toEqual(['README.md', 'token.ts']);
    // A rename is listed under its new name.
    expect(log[1]!.files).toEqual(['auth/token.ts']);
  });

  it('honours the limit and returns nothing for a path without history', async () => {
    const h = new NodeGitHistory(ws);
    expect((await h.log({ paths: ['auth/token.ts'], limit: 2 })).map((c) => c.hash)).toEqual([hashes.c5, hashes.c3]);
    expect(await h.log({ paths: ['untracked.ts'], limit: 5 })).toEqual([]);
    expect(await h.log({ paths: ['auth/token.ts'], limit: 0 })).toEqual([]);
  });

  it('greps messages case-insensitively as fixed strings, only in commits touching the workspace', async () => {
    const h = new NodeGitHistory(ws);
    // c4 mentions backoff too, but only touched other/.
    expect(subjects(await h.log({ grep: ['BACKOFF'], limit: 10 }))).toEqual(['Switch token refresh to exponential backoff because of 429 storms']);
    expect((await h.log({ grep: ['lockstep', 'dash module'], limit: 10 })).map((c) => c.hash)).toEqual([hashes.c6, hashes.c2]);
    // As a regular expression ".*" would match every commit.
    expect(await h.log({ grep: ['.*'], limit: 10 })).toEqual([]);
    // From the repository's top, c4 is in the workspace.
    const top = new NodeGitHistory(repo);
    expect((await top.log({ grep: ['backoff'], limit: 10 })).map((c) => c.hash)).toEqual([hashes.c4, hashes.c2]);
    expect((await top.log({ paths: ['app/auth/token.ts'], limit: 1 }))[0]!.files).toEqual(['app/auth/token.ts']);
  });

  it('blames a line range to the commits that last changed each line, across the rename', async () => {
    const h = new NodeGitHistory(ws);
    const lines = await h.blame('auth/token.ts', 1, 9);
    expect(lines.map((l) => [l.line, l.hash])).toEqual([
      [1, hashes.c5],
      [2, hashes.c1],
      [3, hashes.c1],
      [4, hashes.c1],
      [5, hashes.c1],
      [6, hashes.c1],
      [7, hashes.c2],
      [8, hashes.c2],
      [9, hashes.c1],
    ]);
    const seven = lines.find((l) => l.line === 7)!;
    expect(seven).toEqual({ line: 7, hash: hashes.c2, shortHash: short(hashes.c2), author: 'Bob', date: '2023-02-11T11:00:00-05:00', summary: 'Switch token refresh to exponential backoff because of 429 storms' });
  });

  it('blames what is left when the range runs past the end of the file', async () => {
    const lines = await new NodeGitHistory(ws).blame('auth/token.ts', 11, 40);
    expect(lines.map((l) => l.line)).toEqual([11, 12]);
  });

  it('fails clearly for a file git does not know and for a path outside the workspace', async () => {
    const h = new NodeGitHistory(ws);
    const e = await rejection(h.blame('untracked.ts', 1, 1));
    expect(e.code).toBe('IO');
    expect(e.message).toMatch(/git blame failed in .*app: .*untracked\.ts/);
    expect((await rejection(h.log({ paths: ['../other/notes.txt'], limit: 5 }))).code).toBe('PATH_OUTSIDE_WORKSPACE');
    expect((await rejection(h.blame('/etc/passwd', 1, 1))).code).toBe('PATH_OUTSIDE_WORKSPACE');
  });

  it('passes paths and terms that look like options as data, never as options', async () => {
    const h = new NodeGitHistory(ws);
    expect((await h.log({ paths: ['-dash.ts'], limit: 5 })).map((c) => c.hash)).toEqual([hashes.c6]);
    expect((await h.blame('-dash.ts', 1, 1)).map((l) => l.hash)).toEqual([hashes.c6]);
    const pwned = join(base, 'pwned.txt');
    // As options, these would make git write its output to that file.
    expect(await h.log({ paths: [`--output=${pwned}`], limit: 5 })).toEqual([]);
    expect(await h.log({ grep: [`--output=${pwned}`], limit: 5 })).toEqual([]);
    expect(await rejection(h.blame(`--output=${pwned}`, 1, 1))).toMatchObject({ code: 'IO' });
    expect(existsSync(pwned)).toBe(false);
  });

  it('reads file names git has to quote', async () => {
    const [c6] = await new NodeGitHistory(ws).log({ paths: ['-dash.ts'], limit: 1 });
    expect(c6!.files.sort()).toEqual(['-dash.ts', 'docs/naïve "quoted".md']);
    expect(unquoteC('"docs/na\\303\\257ve \\"q\\".md"')).toBe('docs/naïve "q".md');
  });

  it('completes commits by name, leaving unknown names out', async () => {
    const cs = await new NodeGitHistory(ws).commits([short(hashes.c2), 'deadbeefdeadbeef', hashes.c1, '--all']);
    expect(cs.map((c) => c.hash)).toEqual([hashes.c2, hashes.c1]);
    expect(cs[0]!.body).toBe(WHY_BODY);
  });

  it.skipIf(process.platform === 'win32')('cancels: an aborted signal rejects with CANCELLED before and while git runs', async () => {
    const h = new NodeGitHistory(ws);
    const ctl = new AbortController();
    ctl.abort();
    expect((await rejection(h.log({ paths: ['auth/token.ts'], limit: 5, signal: ctl.signal }))).code).toBe('CANCELLED');
    expect((await rejection(h.blame('auth/token.ts', 1, 2, ctl.signal))).code).toBe('CANCELLED');

    // A git that never answers: the abort must end the call, not the 20 s sleep.
    const slow = new NodeGitHistory(ws, { command: slowGit(), timeoutMs: 30_000 });
    expect(await slow.available()).toBe(true);
    const ctl2 = new AbortController();
    const t0 = Date.now();
    const pending = slow.log({ grep: ['token'], limit: 5, signal: ctl2.signal });
    setTimeout(() => ctl2.abort(), 100);
    expect((await rejection(pending)).code).toBe('CANCELLED');
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it.skipIf(process.platform === 'win32')('times out with an IO error instead of hanging', async () => {
    const slow = new NodeGitHistory(ws, { command: slowGit(), timeoutMs: 300 });
    const t0 = Date.now();
    const e = await rejection(slow.blame('auth/token.ts', 1, 2));
    expect(e.code).toBe('IO');
    expect(e.message).toMatch(/did not answer within 300 ms/);
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

describe('NodeGitHistory without a repository or without git', () => {
  it('a directory outside any work tree: available() says why, and every call fails with IO', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vlt-nogit-'));
    const saved = process.env.GIT_CEILING_DIRECTORIES;
    // So that a repository around the temporary directory cannot be found.
    process.env.GIT_CEILING_DIRECTORIES = dirname(dir);
    try {
      const h = new NodeGitHistory(dir);
      const why = await h.available();
      expect(why).toMatch(/is not in a git work tree .*not a git repository/);
      const e = await rejection(h.log({ paths: ['a.ts'], limit: 5 }));
      expect(e.code).toBe('IO');
      expect(e.message).toMatch(/git history is unavailable: .*not in a git work tree/);
      const r = new GitRetriever({ git: h });
      const e2 = await rejection(r.retrieve({ question: analyzeQuestion('why did the token refresh change?'), limit: 5, signal: new AbortController().signal }));
      expect(e2.code).toBe('IO');
      expect(e2.message).toMatch(/unavailable/);
    } finally {
      if (saved === undefined) delete process.env.GIT_CEILING_DIRECTORIES;
      else process.env.GIT_CEILING_DIRECTORIES = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a missing git program or workspace root: a reason, never a crash', async () => {
    const noGit = new NodeGitHistory(ws, { command: join(base, 'no-such-git') });
    expect(await noGit.available()).toMatch(/git is not installed/);
    expect((await rejection(noGit.blame('auth/token.ts', 1, 1))).message).toMatch(/git is not installed/);
    expect(await new NodeGitHistory(join(base, 'missing-dir')).available()).toMatch(/does not exist/);
  });

  it('a repository without commits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vlt-empty-'));
    try {
      execFileSync('git', ['init', '-q'], { cwd: dir });
      expect(await new NodeGitHistory(dir).available()).toMatch(/has no commits yet/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('parseBlame', () => {
  it('reads porcelain output, reusing the commit headers of repeated commits and dropping uncommitted lines', () => {
    const a = 'a'.repeat(40);
    const zero = '0'.repeat(40);
    const out = [
      `${a} 1 10 2`,
      'author Ann',
      'author-time 1700000000',
      'author-tz +0130',
      'summary Fix it',
      'filename x.ts',
      '\tline ten',
      `${a} 2 11`,
      'filename x.ts',
      '\tline eleven',
      `${zero} 12 12 1`,
      'author Not Committed Yet',
      'author-time 1700000001',
      'author-tz +0000',
      'summary Version of x.ts from x.ts',
      'filename x.ts',
      '\tline twelve',
      '',
    ].join('\n');
    expect(parseBlame(out, 8)).toEqual([
      { line: 10, hash: a, shortHash: 'aaaaaaaa', author: 'Ann', date: '2023-11-14T23:43:20+01:30', summary: 'Fix it' },
      { line: 11, hash: a, shortHash: 'aaaaaaaa', author: 'Ann', date: '2023-11-14T23:43:20+01:30', summary: 'Fix it' },
    ]);
  });
});

describe('GitRetriever over the real repository', () => {
  const signal = () => new AbortController().signal;

  it('runs only for history questions', () => {
    const r = new GitRetriever({ git: new NodeGitHistory(ws) });
    expect(r.applies(analyzeQuestion('How does the token refresh work?'))).toBe('only for history questions');
    expect(r.applies(analyzeQuestion('Why did token refresh switch to exponential backoff?'))).toBe(true);
  });

  it('puts the commit that explains the change first, found by its message and by the file the search found', async () => {
    const q = analyzeQuestion('Why did token refresh switch to exponential backoff?');
    expect(q.type).toBe('history');
    // Longest first; "why", "did" and "switch" are the question's form, not its subject.
    expect(grepTerms(q)).toEqual(['exponential', 'refresh', 'backoff', 'token']);
    const r = new GitRetriever({ git: new NodeGitHistory(ws), files: () => Promise.resolve([{ path: 'auth/token.ts', startLine: 2, endLine: 12 }]) });
    const results = await r.retrieve({ question: q, limit: 10, signal: signal() });
    const top = results[0]!;
    expect(top.citation).toBe(`[commit:${short(hashes.c2)}]`);
    expect(top).toMatchObject({ key: `git:${short(hashes.c2)}`, source: 'git', path: 'auth/token.ts', method: 'git-blame+git-log+git-grep' });
    expect(top.content.split('\n')[0]).toBe(`${short(hashes.c2)} 2023-02-11 Bob: Switch token refresh to exponential backoff because of 429 storms`);
    expect(top.content).toContain('lockstep');
    expect(top.content).toContain('files: token.ts');
    expect(top.metadata).toMatchObject({ hash: hashes.c2, author: 'Bob', date: '2023-02-11T11:00:00-05:00', files: ['token.ts'], lines: [7, 8] });
    // One result per commit, c4 (outside the workspace) never.
    const keys = results.map((x) => x.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).not.toContain(`git:${short(hashes.c4)}`);
    expect(results.map((x) => x.score)).toEqual([...results.map((x) => x.score)].sort((a, b) => b - a));
    // Without any line range the message still wins.
    const noRange = new GitRetriever({ git: new NodeGitHistory(ws), files: () => Promise.resolve([{ path: 'auth/token.ts' }]) });
    const r2 = await noRange.retrieve({ question: q, limit: 10, signal: signal() });
    expect(r2[0]!.citation).toBe(`[commit:${short(hashes.c2)}]`);
    expect(r2[0]!.method).toBe('git-log+git-grep');
  });

  it('for a named line, ranks the commit that last changed that line first', async () => {
    const q = analyzeQuestion('Who last changed auth/token.ts:7 and why?');
    expect(q.paths).toEqual([{ path: 'auth/token.ts', line: 7 }]);
    const results = await new GitRetriever({ git: new NodeGitHistory(ws) }).retrieve({ question: q, limit: 10, signal: signal() });
    expect(results[0]!.citation).toBe(`[commit:${short(hashes.c2)}]`);
    expect(results[0]!.metadata.lines).toEqual([7, 8]);
    expect(results[0]!.content).toContain('last changed lines: auth/token.ts:7-8');
    // The original commit shaped the neighbours (5, 6, 9): second.
    expect(results[1]!.citation).toBe(`[commit:${short(hashes.c1)}]`);
  });

  it('honours the limit and the abort signal', async () => {
    const q = analyzeQuestion('Why did token refresh switch to exponential backoff?');
    const r = new GitRetriever({ git: new NodeGitHistory(ws), files: () => Promise.resolve([{ path: 'auth/token.ts' }]) });
    expect(await r.retrieve({ question: q, limit: 2, signal: signal() })).toHaveLength(2);
    const ctl = new AbortController();
    ctl.abort();
    expect((await rejection(r.retrieve({ question: q, limit: 5, signal: ctl.signal }))).code).toBe('CANCELLED');
  });
});

/** A scripted history: which calls were made, and what each returns. */
class FakeHistory implements GitHistory {
  readonly logCalls: GitLogOptions[] = [];
  readonly blameCalls: Array<[string, number, number]> = [];
  constructor(
    private readonly byPath: Record<string, GitCommit[]>,
    private readonly byGrep: GitCommit[],
    private readonly blameLines: BlameLine[],
    private readonly hang = false,
  ) {}
  available(): Promise<true> {
    return Promise.resolve(true);
  }
  log(opts: GitLogOptions): Promise<GitCommit[]> {
    this.logCalls.push(opts);
    if (this.hang) return new Promise(() => undefined);
    if (opts.grep) return Promise.resolve(this.byGrep.slice(0, opts.limit));
    return Promise.resolve((this.byPath[opts.paths?.[0] ?? ''] ?? []).slice(0, opts.limit));
  }
  blame(path: string, a: number, b: number): Promise<BlameLine[]> {
    this.blameCalls.push([path, a, b]);
    return Promise.resolve(this.blameLines.filter((l) => l.line >= a && l.line <= b));
  }
}

function fakeCommit(n: number, subject: string, files: string[], body = ''): GitCommit {
  const hash = String(n).repeat(40).slice(0, 40);
  return { hash, shortHash: hash.slice(0, 7), author: `A${n}`, date: `2024-01-0${n}T00:00:00Z`, subject, body, files };
}

describe('GitRetriever ordering and plumbing (fake history)', () => {
  const blamed = fakeCommit(1, 'Clamp the retry count', ['src/a.ts']);
  const logged = fakeCommit(2, 'Reformat', ['src/a.ts']);
  const grepped = fakeCommit(3, 'Explain quota handling', ['src/b.ts', 'src/quota.ts']);
  const blameLine = (line: number): BlameLine => ({ line, hash: blamed.hash, shortHash: blamed.shortHash, author: blamed.author, date: blamed.date, summary: blamed.subject });

  it('blame of the asked line, then the named file, then the message search; calls what the question implies', async () => {
    const git = new FakeHistory({ 'src/a.ts': [logged, blamed] }, [grepped], [blameLine(40)]);
    const q = analyzeQuestion('why was the quota check changed in src/a.ts:40');
    expect(q.paths).toEqual([{ path: 'src/a.ts', line: 40 }]);
    const results = await new GitRetriever({ git }).retrieve({ question: q, limit: 10, signal: new AbortController().signal });
    expect(results.map((r) => r.citation)).toEqual(['[commit:1111111]', '[commit:2222222]', '[commit:3333333]']);
    expect(results.map((r) => r.method)).toEqual(['git-blame+git-log', 'git-log', 'git-grep']);
    expect(git.blameCalls).toEqual([['src/a.ts', 38, 42]]);
    expect(git.logCalls.map((c) => c.paths ?? c.grep)).toEqual([['src/a.ts'], ['quota', 'check']]);
    // The grep hit is about the question's "quota", not just its first file.
    expect(results[2]!.path).toBe('src/quota.ts');
    // No body, no blamed lines: the content is the headline and the files.
    expect(results[1]!.content).toBe('2222222 2024-01-02 A2: Reformat\nfiles: src/a.ts');
  });

  it('a blamed commit no log found is completed by commits(), or shown by its subject without it', async () => {
    const q = analyzeQuestion('who changed src/a.ts:40');
    const bare = await new GitRetriever({ git: new FakeHistory({}, [], [blameLine(40)]) }).retrieve({ question: q, limit: 5, signal: new AbortController().signal });
    expect(bare.map((r) => r.content)).toEqual(['1111111 2024-01-01 A1: Clamp the retry count\nfiles: src/a.ts\nlast changed lines: src/a.ts:40']);
    const full = { ...blamed, body: 'Five retries overran the request deadline.', files: ['src/a.ts', 'src/retry.ts'] };
    const withCommits = Object.assign(new FakeHistory({}, [], [blameLine(40)]), { commits: (hs: string[]) => Promise.resolve(hs.includes(blamed.hash) ? [full] : []) });
    const rs = await new GitRetriever({ git: withCommits }).retrieve({ question: q, limit: 5, signal: new AbortController().signal });
    expect(rs[0]!.content).toBe('1111111 2024-01-01 A1: Clamp the retry count\nFive retries overran the request deadline.\nfiles: src/a.ts, src/retry.ts\nlast changed lines: src/a.ts:40');
    expect(rs[0]!.method).toBe('git-blame');
  });

  it('a host that ignores the signal still cannot hold the path: abort rejects at once', async () => {
    const git = new FakeHistory({}, [], [], true);
    const ctl = new AbortController();
    const pending = new GitRetriever({ git }).retrieve({ question: analyzeQuestion('why did the quota check change?'), limit: 5, signal: ctl.signal });
    setTimeout(() => ctl.abort(), 20);
    expect((await rejection(pending)).code).toBe('CANCELLED');
  });

  it('one failing method leaves the others; all failing is the error', async () => {
    const q = analyzeQuestion('why was the quota check changed in src/a.ts:40');
    const failingBlame: GitHistory = {
      available: () => Promise.resolve(true),
      log: (o) => Promise.resolve(o.grep ? [grepped] : []),
      blame: () => Promise.reject(new VltError('IO', 'git blame failed: no such path')),
    };
    const rs = await new GitRetriever({ git: failingBlame }).retrieve({ question: q, limit: 5, signal: new AbortController().signal });
    expect(rs.map((r: RetrievalResult) => r.citation)).toEqual(['[commit:3333333]']);
    const allFail: GitHistory = { ...failingBlame, log: () => Promise.reject(new VltError('IO', 'git log failed: boom')) };
    const e = await rejection(new GitRetriever({ git: allFail }).retrieve({ question: q, limit: 5, signal: new AbortController().signal }));
    expect(e.message).toMatch(/failed/);
  });
});

describe('the oracle on history questions about what the repository has', () => {
  it('answers from git when the file or the change exists, and declines a change that never happened', async () => {
    const { Engine } = await import('../../src/core/engine');
    const { Oracle } = await import('../../src/core/oracle/oracle');
    const { nodeWorkspaceFs } = await import('../../src/node/fs');
    const engine = await Engine.open(ws, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
    try {
      await engine.index();
      const oracle = new Oracle({ engine, git: new NodeGitHistory(ws) });
      const ask = (q: string) => oracle.ask(q, { noLlm: true, noLog: true, explain: true });
      const byFile = await ask('Why did token.ts change?');
      expect(byFile.type).toBe('history');
      expect(byFile.noContext, byFile.explain?.threshold.why).toBe(false);
      expect(byFile.citations.some((c) => c.source === 'git')).toBe(true);
      const byChange = await ask('When was the dash module added?');
      expect(byChange.noContext, byChange.explain?.threshold.why).toBe(false);
      expect(byChange.explain?.threshold.vouched).toMatch(/commit .* is about dash/);
      const never = await ask('When was the Kubernetes operator added?');
      expect(never.noContext).toBe(true);
    } finally {
      await engine.close();
    }
  });
});
