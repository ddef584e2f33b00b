/**
 * What an agent cannot read through the built `vlt mcp` (the real SDK client over stdio), and a
 * cloned MCP token that is not trusted:
 * - read_file_range refuses .vlt/ (the MCP token), .git/, gitignored files and secrets by name;
 * - the notes tools refuse a vault root that a repository's vlt.toml points outside the workspace;
 * - a `.vlt/mcp-token` committed to the repository, or readable by others, is replaced.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, vlt } from '../helpers/cli';
import { call, connectStdio, ensureBuilt, textOf, type StdioSession } from '../helpers/mcp-client';

const COMMITTED_TOKEN = 'committed-token-0123456789-abcdefghijklmnop';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' });
}

function put(root: string, rel: string, text: string): void {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), text);
}

describe('read_file_range over MCP', () => {
  let ws: string;
  let s: StdioSession;
  beforeAll(async () => {
    ensureBuilt();
    ws = tempDir('vlt-secrets-');
    put(ws, 'src/app.ts', 'export const app = 1;\n');
    put(ws, '.env', 'AWS_SECRET_ACCESS_KEY=hunter2\n');
    put(ws, 'certs/server.pem', '-----BEGIN PRIVATE KEY-----\n');
    put(ws, '.gitignore', 'local/\n');
    put(ws, 'local/settings.ts', 'export const password = "hunter2";\n');
    git(ws, 'init', '-q');
    // The server's own token, as `vlt serve` would create it.
    expect((await vlt(['mcp', 'info', '--json', '--workspace', ws])).code).toBe(0);
    s = await connectStdio(['mcp', '--workspace', ws]);
  }, 120_000);
  afterAll(async () => {
    await s?.client.close();
    rmSync(ws, { recursive: true, force: true });
  });

  it('reads source files', async () => {
    const r = await call(s, 'read_file_range', { path: 'src/app.ts', start_line: 1 });
    expect(r.isError, textOf(r)).toBeFalsy();
  }, 60_000);

  it.each(['.vlt/mcp-token', '.git/HEAD', '.git/config', '.env', 'certs/server.pem', 'local/settings.ts'])('refuses %s with ACCESS_DENIED', async (p) => {
    const r = await call(s, 'read_file_range', { path: p, start_line: 1 });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^ACCESS_DENIED: /);
    expect(textOf(r)).not.toContain('hunter2');
  }, 60_000);
});

describe('a vault root outside the workspace, set by the repository', () => {
  let ws: string;
  let outside: string;
  let s: StdioSession;
  beforeAll(async () => {
    ensureBuilt();
    ws = tempDir('vlt-vault-');
    outside = tempDir('vlt-outside-');
    put(outside, 'private.md', '# Private\n\nsecret plans\n');
    put(ws, 'vlt.toml', `[vault]\nroot = ${JSON.stringify(outside)}\n`);
    put(ws, 'src/app.ts', 'export const app = 1;\n');
    s = await connectStdio(['mcp', '--workspace', ws], { env: { VLT_CONFIG_HOME: path.join(ws, '.no-user-config') } });
  }, 120_000);
  afterAll(async () => {
    await s?.client.close();
    rmSync(ws, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it.each([
    ['list_notes', {}],
    ['read_note', { path: 'private.md' }],
    ['search_notes', { query: 'secret plans' }],
    ['write_note', { path: 'planted.md', content: '# planted\n' }],
    ['delete_note', { path: 'private.md' }],
  ])('%s is refused with ACCESS_DENIED', async (tool, args) => {
    const r = await call(s, tool, args);
    expect(r.isError, textOf(r)).toBe(true);
    expect(textOf(r)).toMatch(/^ACCESS_DENIED: .*vault/);
    expect(textOf(r)).not.toContain('secret plans');
  }, 60_000);

  it('left the folder outside untouched', () => {
    expect(existsSync(path.join(outside, 'planted.md'))).toBe(false);
    expect(existsSync(path.join(outside, 'private.md'))).toBe(true);
  });
});

describe('the notes vault and the [security] deny list, over MCP', () => {
  let ws: string;
  let s: StdioSession;
  beforeAll(async () => {
    ensureBuilt();
    ws = tempDir('vlt-vault-deny-');
    put(ws, 'vlt.toml', '[vault]\nroot = "."\n');
    put(ws, 'prod.pem', '-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n');
    put(ws, 'notes/id_rsa.md', '-----BEGIN PRIVATE KEY-----\nhunter2\n');
    put(ws, 'notes/plan.md', '# Plan\n\nRotate the PRIVATE KEY every year.\n');
    symlinkSync(path.join('..', 'prod.pem'), path.join(ws, 'notes', 'cert.md'));
    s = await connectStdio(['mcp', '--workspace', ws], { env: { VLT_CONFIG_HOME: path.join(ws, '.no-user-config') } });
  }, 120_000);
  afterAll(async () => {
    await s?.client.close();
    rmSync(ws, { recursive: true, force: true });
  });

  it.each(['notes/cert.md', 'notes/id_rsa.md', 'cert', 'id_rsa'])('read_note %s is refused with ACCESS_DENIED', async (p) => {
    const r = await call(s, 'read_note', { path: p });
    expect(r.isError, textOf(r)).toBe(true);
    expect(textOf(r)).toMatch(/^ACCESS_DENIED: .*deny list/);
    expect(textOf(r)).not.toContain('BEGIN PRIVATE KEY');
  }, 60_000);

  it('search_notes finds the harmless note and never the key', async () => {
    const r = await call(s, 'search_notes', { query: 'PRIVATE KEY' });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(textOf(r)).toContain('notes/plan.md');
    expect(textOf(r)).not.toContain('BEGIN PRIVATE KEY');
    expect(textOf(r)).not.toContain('hunter2');
  }, 60_000);
});

describe('the MCP token of a cloned repository', () => {
  it('is replaced when the token file is the one committed to git', async () => {
    const ws = tempDir('vlt-token-');
    try {
      put(ws, 'src/app.ts', 'export const app = 1;\n');
      put(ws, '.vlt/mcp-token', `${COMMITTED_TOKEN}\n`);
      chmodSync(path.join(ws, '.vlt/mcp-token'), 0o600);
      git(ws, 'init', '-q');
      git(ws, 'add', '-f', '.vlt/mcp-token', 'src/app.ts');
      git(ws, 'commit', '-q', '-m', 'a repository that ships its token');
      const r = await vlt(['mcp', 'info', '--json', '--workspace', ws]);
      expect(r.code, r.stderr).toBe(0);
      const token = (JSON.parse(r.stdout) as { token: string }).token;
      expect(token).not.toBe(COMMITTED_TOKEN);
      expect(readFileSync(path.join(ws, '.vlt/mcp-token'), 'utf8').trim()).toBe(token);
      expect(statSync(path.join(ws, '.vlt/mcp-token')).mode & 0o777).toBe(0o600);
      expect(r.stderr).toMatch(/tracked by git/);
      // The new token differs from the committed one, so it is kept from now on.
      const again = await vlt(['mcp', 'info', '--json', '--workspace', ws]);
      expect((JSON.parse(again.stdout) as { token: string }).token).toBe(token);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  }, 60_000);

  it('is replaced when others can read it (a checkout or a copy, not a token vlt made)', async () => {
    const ws = tempDir('vlt-token-');
    try {
      put(ws, '.vlt/mcp-token', `${COMMITTED_TOKEN}\n`);
      chmodSync(path.join(ws, '.vlt/mcp-token'), 0o644);
      const r = await vlt(['mcp', 'info', '--json', '--workspace', ws]);
      expect(r.code, r.stderr).toBe(0);
      const token = (JSON.parse(r.stdout) as { token: string }).token;
      expect(token).not.toBe(COMMITTED_TOKEN);
      expect(statSync(path.join(ws, '.vlt/mcp-token')).mode & 0o777).toBe(0o600);
      expect(r.stderr).toMatch(/readable by others/);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  }, 60_000);
});
