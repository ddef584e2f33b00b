/**
 * get_diagnostics over `vlt mcp`: a real MCP client, the built binary, and the real
 * typescript-language-server (an npm dependency) on a small project with one deliberate type
 * error. The answer cites the error's line with the server's code; a clean file has none; a
 * hover comes back with line and col; a path outside the workspace, a secret and a missing file
 * are `isError` results the model can read.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiagnosticsToolResult } from '../../src/core/tools/nav-tools';
import { copyFixture } from '../helpers/cli';
import { call, connectStdio, ensureBuilt, textOf, type StdioSession } from '../helpers/mcp-client';

describe('get_diagnostics over MCP', () => {
  let ws: { dir: string; cleanup: () => void };
  let s: StdioSession;

  beforeAll(async () => {
    ensureBuilt();
    ws = copyFixture('test/fixtures/lsp/ts-project');
    writeFileSync(path.join(ws.dir, '.env'), 'API_TOKEN=secret\n');
    s = await connectStdio(['mcp', '--no-daemon', '--workspace', ws.dir]);
  }, 120_000);

  afterAll(async () => {
    await s?.client.close();
    ws?.cleanup();
  });

  it("cites a file's type error with the server's code, and finds none in a clean file", async () => {
    const r = await call(s, 'get_diagnostics', { file: 'broken.ts', timeout_ms: 60_000 });
    expect(r.isError, textOf(r)).toBeFalsy();
    const d = r.structuredContent as unknown as DiagnosticsToolResult;
    expect(d.file).toBe('broken.ts');
    expect(d.server).toBe('typescript-language-server');
    const errors = d.diagnostics.filter((x) => x.severity === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ citation: 'broken.ts:4', line: 4, code: '2322' });
    const clean = (await call(s, 'get_diagnostics', { file: 'math.ts' })).structuredContent as unknown as DiagnosticsToolResult;
    expect(clean.diagnostics.filter((x) => x.severity === 'error')).toEqual([]);
  }, 90_000);

  it('returns the hover text at a position when asked', async () => {
    const r = await call(s, 'get_diagnostics', { file: 'broken.ts', line: 1, col: 10 });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect((r.structuredContent as unknown as DiagnosticsToolResult).hover).toMatch(/add/);
  }, 60_000);

  it('refuses paths outside the workspace, secrets, missing files and half a position, as readable errors', async () => {
    const outside = await call(s, 'get_diagnostics', { file: '../../etc/passwd' });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toMatch(/PATH_OUTSIDE_WORKSPACE/);
    const secret = await call(s, 'get_diagnostics', { file: '.env' });
    expect(secret.isError).toBe(true);
    expect(textOf(secret)).toMatch(/ACCESS_DENIED/);
    const missing = await call(s, 'get_diagnostics', { file: 'nope.ts' });
    expect(textOf(missing)).toMatch(/PATH_NOT_FOUND/);
    const half = await call(s, 'get_diagnostics', { file: 'broken.ts', line: 4 });
    expect(textOf(half)).toMatch(/USAGE: give line and col together/);
  });
});
