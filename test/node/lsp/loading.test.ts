// References while a language server is still loading its workspace (test/fixtures/lsp/fake-lsp.mjs,
// mode slow-first-references, like gopls on the Go standard library): the index answers and says
// so instead of the server being waited out, a server that answers in time still answers, and
// once it has answered references it is waited for as usual.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../src/core/engine';
import type { NavAnswer } from '../../../src/core/intel/navigate';
import { silentLogger } from '../../../src/core/ports';
import { createLanguageServers, type ServerSpec } from '../../../src/node/lsp';
import { nodeWorkspaceFs } from '../../../src/node/fs';

const FAKE = path.resolve(__dirname, '../../fixtures/lsp/fake-lsp.mjs');

let dir: string;
let engine: Engine | undefined;
let servers: ReturnType<typeof createLanguageServers> | undefined;

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'vlt-lsp-loading-'));
  writeFileSync(path.join(dir, 'lib.ts'), '// lib\nexport function greet(): string {\n  return "hi";\n}\n');
  writeFileSync(path.join(dir, 'main.ts'), 'import { greet } from "./lib";\n\n\nexport function main() {\n  greet();\n}\n');
  engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null, parseWorkers: 0 }, 'write');
  await engine.index();
});

afterEach(async () => {
  await servers?.dispose();
  servers = undefined;
  await engine?.close();
  engine = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function start(mode: string, refsMs?: number, env: Record<string, string> = {}) {
  const spec: ServerSpec = {
    name: 'fake-lsp',
    languages: ['typescript', 'tsx', 'javascript'],
    command: process.execPath,
    args: [FAKE, mode],
    env: { ...env, ...(refsMs !== undefined ? { FAKE_LSP_REFS_MS: String(refsMs) } : {}) },
  };
  servers = createLanguageServers({ root: dir, logger: silentLogger, servers: [spec], readyTimeoutMs: 10_000, client: { settleMs: 50, graceMs: 300 } });
  return servers;
}

const where = (a: NavAnswer) => a.locations.map((l) => `${l.path}:${l.line}:${l.col} ${l.provenance}`);
const lspRuns = (a: NavAnswer) => a.providers.filter((p) => p.provider === 'lsp').map((p) => `${p.status}: ${p.reason ?? ''}`);

describe('references while the language server is still loading', () => {
  it('answers from the index, saying the server is still loading, rather than waiting out its timeout', async () => {
    const lsp = start('slow-first-references', 8_000);
    expect(lsp.serverFor('typescript')?.warm).toBe(false);
    const a = await engine!.navigator({ lsp }).references('main.ts:5:3');
    // The server answered the definition, not the references: the index answered both, and says why.
    expect(lspRuns(a)[0]).toBe('answered: fake-lsp');
    expect(a.definition).toMatchObject({ path: 'lib.ts', line: 2, provenance: 'graph' });
    expect(where(a)).toEqual(['main.ts:1:10 graph', 'main.ts:5:3 graph']);
    expect(lspRuns(a)).toContainEqual(expect.stringMatching(/^skipped: fake-lsp is still loading the workspace \(no references after \d+\.\d s, the first since it started\)$/));
    expect(a.notes.join('\n')).toMatch(/fake-lsp is still loading the workspace.*ask again once it has loaded, or give a timeout/);
    expect(a.total).toBe(2);
  });

  it('takes the server answer when it comes in time, and waits for a server that has answered references before', async () => {
    const lsp = start('slow-first-references', 2_500);
    const nav = engine!.navigator({ lsp });
    const first = await nav.references('main.ts:5:3');
    expect(where(first)).toEqual(['main.ts:1:10 graph', 'main.ts:5:3 graph']);
    // The server's request goes on after the index answered; once it is answered the server is warm.
    for (let i = 0; i < 100 && lsp.serverFor('typescript')?.warm !== true; i++) await new Promise((r) => setTimeout(r, 50));
    expect(lsp.serverFor('typescript')?.warm).toBe(true);
    const second = await nav.references('main.ts:5:3');
    expect(where(second).sort()).toEqual(['/opt/elsewhere/outside.ts:1:1 lsp', 'lib.ts:2:17 lsp', 'main.ts:5:3 lsp']);
    expect(lspRuns(second).every((r) => !r.includes('still loading'))).toBe(true);
  });

  it('does not wait for a server still starting up either (its definition not answered yet)', async () => {
    const lsp = start('slow-ready', undefined, { FAKE_LSP_READY_MS: '8000' });
    const a = await engine!.navigator({ lsp }).references('main.ts:5:3');
    expect(where(a)).toEqual(['main.ts:1:10 graph', 'main.ts:5:3 graph']);
    expect(lspRuns(a)).toEqual([expect.stringMatching(/^skipped: fake-lsp is still loading the workspace/)]);
  });

  it('waits for a loading server when the caller chose the timeout', async () => {
    const lsp = start('slow-first-references', 2_500);
    const a = await engine!.navigator({ lsp }).references('main.ts:5:3', { lspTimeoutMs: 10_000 });
    expect(where(a).sort()).toEqual(['/opt/elsewhere/outside.ts:1:1 lsp', 'lib.ts:2:17 lsp', 'main.ts:5:3 lsp']);
  });

  it('a fresh server that answers at once is not skipped', async () => {
    const lsp = start('ok');
    const a = await engine!.navigator({ lsp }).references('main.ts:5:3');
    expect(a.locations.every((l) => l.provenance === 'lsp')).toBe(true);
    expect(a.total).toBe(3);
  });
});
