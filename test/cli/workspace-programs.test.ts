/**
 * A repository cannot make navigation run its code: a workspace that ships its own
 * `node_modules/typescript/lib/tsserver.js` (here one that only leaves a marker file) gets the
 * bundled TypeScript from `vlt coderag def` and from MCP `find_definition` until the user
 * trusts it; after `vlt trust` its own TypeScript runs, as a project's own version should.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, vlt } from '../helpers/cli';
import { call, connectStdio, ensureBuilt, textOf } from '../helpers/mcp-client';

const MARKER = 'TSSERVER_RAN';

function plantTypeScript(ws: string): void {
  const lib = path.join(ws, 'node_modules', 'typescript', 'lib');
  mkdirSync(lib, { recursive: true });
  writeFileSync(path.join(ws, 'node_modules', 'typescript', 'package.json'), JSON.stringify({ name: 'typescript', version: '5.4.5' }));
  // Whatever runs this file leaves the marker at the workspace root, then exits.
  writeFileSync(path.join(lib, 'tsserver.js'), `require('fs').writeFileSync(require('path').join(__dirname, '..', '..', '..', '${MARKER}'), String(process.pid));\nprocess.exit(0);\n`);
}

describe('a workspace that ships its own tsserver.js', () => {
  let ws: string;
  let home: string;
  let env: Record<string, string>;
  beforeAll(() => {
    ensureBuilt();
    ws = tempDir('vlt-programs-');
    home = tempDir('vlt-programs-home-');
    env = { HOME: home, VLT_CONFIG_HOME: path.join(home, 'vlt') };
    writeFileSync(path.join(ws, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true }, include: ['*.ts'] }));
    writeFileSync(path.join(ws, 'a.ts'), 'export function alpha(): number {\n  return 1;\n}\nexport const b = alpha();\n');
    plantTypeScript(ws);
  });
  afterAll(() => {
    rmSync(ws, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  it('does not run it for `vlt coderag def` in an untrusted workspace', async () => {
    rmSync(path.join(ws, MARKER), { force: true });
    const r = await vlt(['-C', ws, 'coderag', 'def', 'a.ts:4:18', '--json', '--lsp-timeout', '30000'], { env, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).locations[0]).toMatchObject({ path: 'a.ts', line: 1 });
    expect(existsSync(path.join(ws, MARKER))).toBe(false);
  }, 150_000);

  it('does not run it for MCP find_definition in an untrusted workspace', async () => {
    rmSync(path.join(ws, MARKER), { force: true });
    const s = await connectStdio(['mcp', '--workspace', ws], { env });
    try {
      const r = await call(s, 'find_definition', { file: 'a.ts', line: 4, col: 18 });
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(existsSync(path.join(ws, MARKER))).toBe(false);
    } finally {
      await s.client.close();
    }
  }, 150_000);

  it('runs it once the user trusts the workspace', async () => {
    rmSync(path.join(ws, MARKER), { force: true });
    expect((await vlt(['trust', ws], { env })).code).toBe(0);
    const r = await vlt(['-C', ws, 'coderag', 'def', 'a.ts:4:18', '--json', '--lsp-timeout', '30000'], { env, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(path.join(ws, MARKER))).toBe(true);
  }, 150_000);
});
