// Which language-server programs the registry may take from inside the workspace: none until
// the workspace is trusted. The npm servers come from vlt's own folders (the workspace's
// node_modules only when trusted); TypeScript is pinned to the bundled tsserver unless trusted;
// gopls and clangd are not taken from PATH entries that lie inside the workspace or are relative.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultServerSpecs } from '../../../src/node/lsp';

const OWN = path.resolve(__dirname, '../../../src/node/lsp');

let dir: string;
let ws: string;
let empty: string;

function fakePackage(root: string, name: string, bin: Record<string, string>): void {
  const pkg = path.join(root, 'node_modules', name);
  mkdirSync(pkg, { recursive: true });
  writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name, version: '9.9.9', bin }));
  for (const rel of Object.values(bin)) {
    mkdirSync(path.dirname(path.join(pkg, rel)), { recursive: true });
    writeFileSync(path.join(pkg, rel), '// planted\n');
  }
}

function executable(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, '#!/bin/sh\nexit 0\n');
  chmodSync(file, 0o755);
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'vlt-servers-'));
  ws = path.join(dir, 'ws');
  empty = path.join(dir, 'vlt-without-servers');
  mkdirSync(empty, { recursive: true });
  fakePackage(ws, 'pyright', { 'pyright-langserver': 'langserver.index.js' });
  fakePackage(ws, 'typescript-language-server', { 'typescript-language-server': 'lib/cli.mjs' });
  mkdirSync(path.join(ws, 'node_modules', 'typescript', 'lib'), { recursive: true });
  writeFileSync(path.join(ws, 'node_modules', 'typescript', 'package.json'), JSON.stringify({ name: 'typescript', version: '5.4.5' }));
  writeFileSync(path.join(ws, 'node_modules', 'typescript', 'lib', 'tsserver.js'), '// planted\n');
  executable(path.join(ws, 'bin', 'gopls'));
  executable(path.join(ws, 'bin', 'clangd'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const spec = (specs: ReturnType<typeof defaultServerSpecs>, name: string) => specs.find((s) => s.name === name)!;

describe('an untrusted workspace', () => {
  it('pins typescript-language-server to the bundled tsserver', () => {
    const ts = spec(defaultServerSpecs({ root: ws, searchFrom: [OWN], env: { PATH: '' } }), 'typescript-language-server');
    const opts = ts.initializationOptions as { tsserver: { path?: string; fallbackPath?: string } };
    expect(opts.tsserver.path).toMatch(/typescript[\\/]lib[\\/]tsserver\.js$/);
    expect(opts.tsserver.path?.startsWith(ws)).toBe(false);
    expect(opts.tsserver.fallbackPath).toBeUndefined();
  });

  it('takes no npm server from the workspace, even when vlt has none of its own', () => {
    const specs = defaultServerSpecs({ root: ws, searchFrom: [empty], env: { PATH: '' } });
    expect(spec(specs, 'pyright').missing).toMatch(/not installed next to vlt/);
    expect(spec(specs, 'typescript-language-server').missing).toMatch(/not installed next to vlt/);
  });

  it('takes no system server from a PATH entry inside the workspace or relative to it', () => {
    for (const PATH of [path.join(ws, 'bin'), 'bin']) {
      const cwd = process.cwd();
      process.chdir(ws);
      try {
        const specs = defaultServerSpecs({ root: ws, searchFrom: [OWN], env: { PATH } });
        expect(spec(specs, 'gopls').missing, PATH).toMatch(/not found/);
        expect(spec(specs, 'clangd').missing, PATH).toMatch(/not found/);
      } finally {
        process.chdir(cwd);
      }
    }
  });
});

describe('a trusted workspace', () => {
  it("lets typescript-language-server prefer the workspace's own TypeScript", () => {
    const ts = spec(defaultServerSpecs({ root: ws, searchFrom: [OWN], env: { PATH: '' }, trusted: true }), 'typescript-language-server');
    const opts = ts.initializationOptions as { tsserver: { path?: string; fallbackPath?: string } };
    expect(opts.tsserver.path).toBeUndefined();
    expect(opts.tsserver.fallbackPath).toMatch(/typescript[\\/]lib[\\/]tsserver\.js$/);
  });

  it('may provide the npm servers vlt lacks, and system servers on PATH', () => {
    const specs = defaultServerSpecs({ root: ws, searchFrom: [empty], env: { PATH: path.join(ws, 'bin') }, trusted: true });
    expect(spec(specs, 'pyright').args[0]).toBe(path.join(ws, 'node_modules', 'pyright', 'langserver.index.js'));
    expect(spec(specs, 'gopls').command).toBe(path.join(ws, 'bin', 'gopls'));
    expect(spec(specs, 'clangd').command).toBe(path.join(ws, 'bin', 'clangd'));
  });
});
