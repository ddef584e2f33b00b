// The real typescript-language-server and pyright (npm dependencies) on small fixtures:
// definitions land on the definition line, references cross files, hover shows the type, and a
// deliberate type error is reported on its line. Generous timeouts; nothing about speed.
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LanguageServers, SourceRange } from '../../../src/core/intel/lsp';
import { silentLogger } from '../../../src/core/ports';
import { createLanguageServers, defaultServerSpecs } from '../../../src/node/lsp';

const FIXTURES = path.resolve(__dirname, '../../fixtures/lsp');
const CALL = { timeoutMs: 60_000 };
const at = (r: SourceRange): string => `${r.path}:${r.startLine}:${r.startCol}`;

describe('server registry', () => {
  it('finds the npm servers next to the code, not on PATH', () => {
    const specs = defaultServerSpecs({ env: { PATH: '' } });
    const ts = specs.find((s) => s.name === 'typescript-language-server');
    const py = specs.find((s) => s.name === 'pyright');
    expect(ts?.missing).toBeUndefined();
    expect(ts?.args[0]).toMatch(/typescript-language-server[\\/]lib[\\/]cli\.mjs$/);
    // Untrusted (the default), the bundled tsserver is pinned: see workspace-trust.test.ts.
    expect(ts?.initializationOptions).toMatchObject({ tsserver: { useSyntaxServer: 'never', path: expect.stringMatching(/typescript[\\/]lib[\\/]tsserver\.js$/) } });
    expect(py?.missing).toBeUndefined();
    expect(py?.args[0]).toMatch(/pyright[\\/]langserver\.index\.js$/);
    // With an empty PATH the system servers are reported as missing, with the reason.
    expect(specs.find((s) => s.name === 'gopls')?.missing).toMatch(/not found/);
    expect(specs.find((s) => s.name === 'clangd')?.missing).toMatch(/not found/);
  });

  it('puts the parent of a package-folder workspace on pyright\'s search path', () => {
    const analysis = (root: string): unknown => {
      const py = defaultServerSpecs({ root }).find((s) => s.name === 'pyright');
      return (py?.settings?.python as { analysis?: { extraPaths?: string[] } }).analysis?.extraPaths;
    };
    expect(analysis(path.join(FIXTURES, 'py-project/pkg'))).toEqual([path.join(FIXTURES, 'py-project')]);
    expect(analysis(path.join(FIXTURES, 'py-project'))).toBeUndefined();
  });
});

describe('typescript-language-server on a small project', () => {
  let lsp: LanguageServers;
  beforeAll(() => {
    lsp = createLanguageServers({ root: path.join(FIXTURES, 'ts-project'), logger: silentLogger, readyTimeoutMs: 60_000 });
  });
  afterAll(async () => {
    await lsp.dispose();
  });

  it('goes from an imported call to the function definition', async () => {
    // main.ts line 4: `const total = add(1, 2);`, `add` at column 15.
    const a = await lsp.definition({ path: 'main.ts', line: 4, col: 15 }, CALL);
    expect(a).toMatchObject({ ok: true, server: 'typescript-language-server' });
    if (!a.ok) return;
    expect(a.value.map(at)).toEqual(['math.ts:2:17']);
    expect(lsp.status().find((s) => s.name === 'typescript-language-server')?.state).toBe('ready');
  }, 90_000);

  it('finds references in other files', async () => {
    const a = await lsp.references({ path: 'math.ts', line: 2, col: 17 }, { ...CALL, includeDeclaration: true });
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    const refs = a.value.map((r) => `${r.path}:${r.startLine}`);
    expect(refs).toEqual(expect.arrayContaining(['math.ts:2', 'geometry.ts:4', 'main.ts:4', 'broken.ts:4']));
    expect(new Set(refs).size).toBe(refs.length);
    const noDecl = await lsp.references({ path: 'math.ts', line: 2, col: 17 }, { ...CALL, includeDeclaration: false });
    expect(noDecl.ok && noDecl.value.map((r) => `${r.path}:${r.startLine}`)).not.toContain('math.ts:2');
  }, 90_000);

  it('shows the type on hover', async () => {
    const call = await lsp.hover({ path: 'main.ts', line: 4, col: 15 }, CALL);
    expect(call.ok && call.value).toContain('add(a: number, b: number): number');
    expect(call.ok && call.value).toContain('Adds two numbers.');
    // `const total = add(1, 2)`: the inferred type of the variable.
    const variable = await lsp.hover({ path: 'main.ts', line: 4, col: 7 }, CALL);
    expect(variable.ok && variable.value).toContain('const total: number');
  }, 90_000);

  it('reports the deliberate type error on its line', async () => {
    const a = await lsp.diagnostics('broken.ts', CALL);
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    const errors = a.value.filter((d) => d.severity === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: '2322', source: 'typescript', range: { path: 'broken.ts', startLine: 4 } });
    const clean = await lsp.diagnostics('math.ts', CALL);
    expect(clean.ok && clean.value.filter((d) => d.severity === 'error')).toEqual([]);
  }, 90_000);
});

describe('a cold server with a short timeout', () => {
  it('answers "not ready" on time instead of waiting for the project to load', async () => {
    const lsp = createLanguageServers({ root: path.join(FIXTURES, 'ts-project'), logger: silentLogger });
    try {
      const t0 = Date.now();
      const a = await lsp.definition({ path: 'main.ts', line: 4, col: 15 }, { timeoutMs: 300 });
      expect(Date.now() - t0).toBeLessThan(300 + 400);
      expect(a).toMatchObject({ ok: false, server: 'typescript-language-server' });
      // "not-ready" while it initializes or reports progress; when it initializes within the
      // 300 ms and tsserver has not begun reporting its project load yet, the request simply
      // times out. Either way the caller hears back on time, and the fallback answers.
      expect(['not-ready', 'timeout']).toContain(a.ok ? 'ok' : a.failure);
    } finally {
      await lsp.dispose();
    }
  }, 30_000);
});

describe('pyright on a small package', () => {
  let lsp: LanguageServers;
  beforeAll(() => {
    lsp = createLanguageServers({ root: path.join(FIXTURES, 'py-project'), logger: silentLogger, readyTimeoutMs: 60_000 });
  });
  afterAll(async () => {
    await lsp.dispose();
  });

  it('goes from an imported call to the function definition', async () => {
    // report.py line 5: `    total = area(side, side)`, `area` at column 13.
    const a = await lsp.definition({ path: 'pkg/report.py', line: 5, col: 13 }, CALL);
    expect(a).toMatchObject({ ok: true, server: 'pyright' });
    if (a.ok) expect(a.value.map(at)).toEqual(['pkg/shapes.py:4:5']);
  }, 90_000);

  it('finds references in other files', async () => {
    const a = await lsp.references({ path: 'pkg/shapes.py', line: 4, col: 5 }, { ...CALL, includeDeclaration: true });
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    const refs = a.value.map((r) => `${r.path}:${r.startLine}`);
    expect(refs).toEqual(expect.arrayContaining(['pkg/shapes.py:4', 'pkg/shapes.py:14', 'pkg/report.py:1', 'pkg/report.py:5']));
  }, 90_000);

  it('shows the type on hover', async () => {
    const a = await lsp.hover({ path: 'pkg/report.py', line: 5, col: 13 }, CALL);
    expect(a.ok).toBe(true);
    if (a.ok) expect(a.value).toMatch(/def area\(\s*width: float,\s*height: float\s*\) -> float/);
  }, 90_000);

  it('reports the deliberate type error on its line', async () => {
    const a = await lsp.diagnostics('pkg/broken.py', CALL);
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    const errors = a.value.filter((d) => d.severity === 'error');
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors[0]).toMatchObject({ range: { path: 'pkg/broken.py', startLine: 3 } });
    expect(errors[0]?.message).toMatch(/int/);
  }, 90_000);
});
