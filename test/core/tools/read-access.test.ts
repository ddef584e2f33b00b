/**
 * read_file_range, the tool an agent (and the oracle's agent mode, whose results go to a model)
 * reads files with, refuses what is not the project's source: vlt's own state (.vlt/, with the
 * MCP token), version-control folders, files the index skips as ignored (.gitignore and
 * .git/info/exclude), and secrets by name ([security] deny: the defaults plus vlt.toml's
 * additions). Every refusal is ACCESS_DENIED, through symbolic links too.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type VltConfig } from '../../../src/core/config';
import type { Engine } from '../../../src/core/engine';
import { silentLogger } from '../../../src/core/ports';
import { invokeTool, type ToolContext } from '../../../src/core/tools/definitions';
import { readFileRangeTool } from '../../../src/core/tools/oracle-tools';
import { agentToolsFrom } from '../../../src/core/tools';
import { nodeWorkspaceFs } from '../../../src/node/fs';

let ws: string;
let ctx: ToolContext;

function put(rel: string, text = `${rel} line 1\nline 2\n`): void {
  mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  writeFileSync(path.join(ws, rel), text);
}

beforeAll(async () => {
  ws = mkdtempSync(path.join(tmpdir(), 'vlt-read-access-'));
  put('vlt.toml', '[security]\ndeny = ["credentials.json", "private/**"]\n');
  for (const rel of [
    'src/app.ts',
    'src/id_map.go',
    'src/keyboard.ts',
    'docs/env.md',
    '.vlt/mcp-token',
    '.vlt/notes/idea.md',
    '.git/config',
    '.git/HEAD',
    'vendor/lib/.git/config',
    '.env',
    '.env.production',
    'config/.env.local',
    '.ENV',
    'tls/server.pem',
    'keys/deploy.key',
    'home/.ssh/id_rsa',
    'id_ed25519',
    'id_ecdsa.pub',
    'credentials.json',
    'private/notes.ts',
    'build/out.ts',
    'debug.log',
    'sub/local.ts',
    'sub/kept.ts',
    'excluded-by-info.ts',
  ]) {
    put(rel);
  }
  put('.gitignore', 'build/\n*.log\n');
  put('sub/.gitignore', 'local.ts\n');
  put('.git/info/exclude', 'excluded-by-info.ts\n');
  symlinkSync(path.join(ws, '.env'), path.join(ws, 'src/innocent.ts'));
  symlinkSync(path.join(ws, '.vlt'), path.join(ws, 'state'));
  const config: VltConfig = await loadConfig(ws, {});
  ctx = { getEngine: () => Promise.resolve({ root: ws, config } as unknown as Engine), fs: nodeWorkspaceFs, logger: silentLogger };
});

afterAll(() => rmSync(ws, { recursive: true, force: true }));

const read = (p: string) => invokeTool(readFileRangeTool, ctx, { path: p, start_line: 1 });

describe('read_file_range', () => {
  it('reads ordinary source files, including ones whose names only look like secrets', async () => {
    for (const p of ['src/app.ts', 'src/id_map.go', 'src/keyboard.ts', 'docs/env.md', 'sub/kept.ts', './src/app.ts']) {
      const r = await read(p);
      expect(r.ok, `${p}: ${r.ok ? '' : r.error.message}`).toBe(true);
    }
  });

  it.each([
    ['.vlt/mcp-token', /\.vlt\//],
    ['.vlt/notes/idea.md', /\.vlt\//],
    ['state/mcp-token', /\.vlt\//],
    ['.git/config', /\.git\//],
    ['.git/HEAD', /\.git\//],
    ['vendor/lib/.git/config', /\.git\//],
    ['src/../.git/config', /\.git\//],
  ])('refuses vlt and version-control state: %s', async (p, why) => {
    const r = await read(p);
    expect(r).toMatchObject({ ok: false, error: { code: 'ACCESS_DENIED' } });
    if (!r.ok) expect(r.error.message).toMatch(why);
  });

  it.each(['.env', '.env.production', 'config/.env.local', '.ENV', 'tls/server.pem', 'keys/deploy.key', 'home/.ssh/id_rsa', 'id_ed25519', 'id_ecdsa.pub', 'src/innocent.ts'])(
    'refuses a secret by the default deny list: %s',
    async (p) => {
      const r = await read(p);
      expect(r).toMatchObject({ ok: false, error: { code: 'ACCESS_DENIED' } });
      if (!r.ok) expect(r.error.message).toMatch(/deny list/);
    },
  );

  it.each(['credentials.json', 'private/notes.ts'])('refuses what vlt.toml adds to the deny list: %s', async (p) => {
    expect(await read(p)).toMatchObject({ ok: false, error: { code: 'ACCESS_DENIED' } });
  });

  it.each(['build/out.ts', 'debug.log', 'sub/local.ts', 'excluded-by-info.ts'])('refuses a file the index skips as ignored: %s', async (p) => {
    const r = await read(p);
    expect(r).toMatchObject({ ok: false, error: { code: 'ACCESS_DENIED' } });
    if (!r.ok) expect(r.error.message).toMatch(/ignored/);
  });

  it("refuses the same reads in the oracle's agent mode", async () => {
    const [tool] = agentToolsFrom([readFileRangeTool], ctx);
    await expect(tool!.run({ path: '.env', start_line: 1 })).rejects.toMatchObject({ code: 'ACCESS_DENIED' });
    await expect(tool!.run({ path: '.vlt/mcp-token', start_line: 1 })).rejects.toMatchObject({ code: 'ACCESS_DENIED' });
    expect(await tool!.run({ path: 'src/app.ts', start_line: 1 })).toContain('src/app.ts line 1');
  });
});

describe('the index', () => {
  it('skips what the deny list names, so search never shows it either', async () => {
    const { discoverFiles } = await import('../../../src/core/discovery');
    const config = await loadConfig(ws, {});
    const r = await discoverFiles(ws, config, nodeWorkspaceFs);
    expect(r.skipped).toContainEqual({ path: 'private/notes.ts', reason: 'denied', detail: 'private/**' });
    expect(r.files.map((f) => f.path)).toContain('src/app.ts');
  });
});
