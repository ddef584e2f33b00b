import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '../..');

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g;

describe('architecture', () => {
  it('src/core imports neither vscode nor any host, nor DOM-only globals', () => {
    const offenders: string[] = [];
    for (const file of tsFiles(path.join(root, 'src/core'))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2] ?? m[3] ?? '';
        const resolved = spec.startsWith('.') ? path.relative(root, path.resolve(path.dirname(file), spec)) : spec;
        if (spec === 'vscode' || /^src\/(cli|mcp|vscode|node)\b/.test(resolved) || resolved.startsWith('webview')) {
          offenders.push(`${path.relative(root, file)} imports ${spec}`);
        }
      }
      if (/\b(document|window)\.\w/.test(text.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, ''))) offenders.push(`${path.relative(root, file)} uses DOM globals`);
    }
    expect(offenders).toEqual([]);
  });

  it('the built CLI bundle never requires vscode, nor bundles the editor\'s or the chat UI\'s packages', () => {
    const bundle = path.join(root, 'dist/cli-main.js');
    if (!existsSync(bundle)) execFileSync('node', ['esbuild.mjs'], { cwd: root });
    const text = readFileSync(bundle, 'utf8');
    expect(text).not.toMatch(/require\(["']vscode["']\)/);
    // The editor's and the chat UI's packages stay out of the CLI and MCP bundle (esbuild
    // marks each bundled module with a `// node_modules/<package>/…` line).
    const bundled = new Set([...text.matchAll(/^\/\/ node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((m) => m[1]));
    expect(bundled.size).toBeGreaterThan(10);
    for (const pkg of ['vscode-languageclient', 'marked', 'dompurify', 'highlight.js', '@vscode/test-electron']) expect(bundled.has(pkg), pkg).toBe(false);
    // The tokenizer's tables are a bundle of their own, required on first use.
    expect(bundled.has('gpt-tokenizer')).toBe(false);
    expect(text).toContain('require("./tokenizer.js")');
    expect(existsSync(path.join(root, 'dist/tokenizer.js'))).toBe(true);
  });

  it('the front (dist/cli.js, loaded by every `vlt` command) bundles no package and no engine code', () => {
    const bundle = path.join(root, 'dist/cli.js');
    if (!existsSync(bundle)) execFileSync('node', ['esbuild.mjs'], { cwd: root });
    const text = readFileSync(bundle, 'utf8');
    expect([...text.matchAll(/^\/\/ node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((m) => m[1])).toEqual([]);
    const sources = [...text.matchAll(/^\/\/ (src\/[^\n]+)$/gm)].map((m) => m[1]);
    expect(sources.length).toBeGreaterThan(0);
    for (const s of sources) expect(s, s).toMatch(/^src\/(cli\/(front|code-cache)|daemon\/(client|socket)|node\/stdio|protocol\/(daemon|cli))\.ts$/);
  });

  it('each host has exactly one wiring file: the CLI opens the engine there, the long-lived hosts open the workspace server core there', () => {
    const opening = (host: string, pattern: RegExp) =>
      tsFiles(path.join(root, 'src', host))
        .filter((f) => pattern.test(readFileSync(f, 'utf8')))
        .map((f) => path.relative(root, f));
    // The CLI: main.ts defines the commands; runtime.ts opens what one command in this process needs.
    expect(opening('cli', /Engine\.open\(/)).toEqual(['src/cli/runtime.ts']);
    // The daemon holds the server core, opened in one place.
    expect(opening('daemon', /Engine\.open\(/)).toEqual([]);
    expect(opening('daemon', /WorkspaceServer\.open\(/)).toEqual(['src/daemon/server.ts']);
    for (const host of ['mcp', 'lsp']) expect(opening(host, /Engine\.open\(/)).toEqual([]);
    expect(opening('mcp', /WorkspaceServer\.open\(/)).toEqual(['src/mcp/main.ts']);
    // An editor's server opens at its `initialize`, a step of the session main.ts wires.
    expect(opening('lsp', /WorkspaceServer\.open\(/)).toEqual(['src/lsp/session.ts']);
    // The server core is the one other place an engine is opened.
    expect(opening('server', /Engine\.open\(/)).toEqual(['src/server/workspace.ts']);
    // The extension: activation, its one log channel and every command and view registration
    // live in extension.ts; the other files export what it wires.
    for (const wiring of [/export (async )?function activate\(/, /createOutputChannel\(/, /registerCommand\(/, /registerWebviewViewProvider\(/, /registerTextDocumentContentProvider\(/]) {
      expect(opening('vscode', wiring), String(wiring)).toEqual(['src/vscode/extension.ts']);
    }
  });

  it('the extension is a thin client: it loads no engine code, only the protocol it speaks to its server', () => {
    const offenders: string[] = [];
    for (const file of tsFiles(path.join(root, 'src/vscode'))) {
      for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const spec = m[1] ?? m[2] ?? m[3] ?? '';
        if (!spec.startsWith('.')) continue;
        const resolved = path.relative(root, path.resolve(path.dirname(file), spec));
        if (!resolved.startsWith('src/vscode') && !resolved.startsWith('src/protocol/')) offenders.push(`${path.relative(root, file)} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
    const bundle = path.join(root, 'dist/extension.js');
    if (existsSync(bundle)) expect(readFileSync(bundle, 'utf8')).not.toMatch(/sql-wasm|web-tree-sitter|@orama/);
  });

  it('each folder imports only the layers below it: protocol (a leaf) and core ← node ← server ← {mcp, lsp, daemon} ← cli; the extension and the webview only the protocol', () => {
    const below: Record<string, readonly string[]> = {
      'src/protocol': [],
      'src/core': ['src/protocol'],
      'src/node': ['src/protocol', 'src/core'],
      'src/server': ['src/protocol', 'src/core', 'src/node'],
      'src/mcp': ['src/protocol', 'src/core', 'src/node', 'src/server'],
      'src/lsp': ['src/protocol', 'src/core', 'src/node', 'src/server'],
      'src/daemon': ['src/protocol', 'src/core', 'src/node', 'src/server'],
      'src/cli': ['src/protocol', 'src/core', 'src/node', 'src/server', 'src/mcp', 'src/lsp', 'src/daemon'],
      'src/vscode': ['src/protocol'],
      webview: ['src/protocol'],
    };
    const folders = readdirSync(path.join(root, 'src')).map((d) => `src/${d}`);
    // A new folder gets a place in the layers before it gets code.
    expect(folders.filter((d) => !(d in below))).toEqual([]);
    const offenders: string[] = [];
    for (const [folder, allowed] of Object.entries(below)) {
      for (const file of tsFiles(path.join(root, folder))) {
        for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
          const spec = m[1] ?? m[2] ?? m[3] ?? '';
          if (!spec.startsWith('.')) continue;
          const resolved = path.relative(root, path.resolve(path.dirname(file), spec));
          const inside = (d: string) => resolved === d || resolved.startsWith(`${d}/`);
          if (!resolved.startsWith('src/') || inside(folder) || allowed.some(inside)) continue;
          offenders.push(`${path.relative(root, file)} imports ${spec}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('no module imports itself through others: the import graph of src/ and webview/ has no cycle, type-only imports included', () => {
    // Static imports and re-exports only: a lazy `import()` is how a bundle defers loading a part.
    const STATIC = /^\s*(?:import|export)\s[^;]*?from\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]/gm;
    const files = [...tsFiles(path.join(root, 'src')), ...tsFiles(path.join(root, 'webview'))];
    const known = new Set(files);
    const resolve = (from: string, spec: string): string | undefined => {
      if (!spec.startsWith('.')) return undefined;
      const base = path.resolve(path.dirname(from), spec);
      return [`${base}.ts`, path.join(base, 'index.ts')].find((f) => known.has(f));
    };
    const edges = new Map(files.map((f) => [f, [...readFileSync(f, 'utf8').matchAll(STATIC)].flatMap((m) => resolve(f, m[1] ?? m[2] ?? '') ?? [])]));
    // Depth-first search; a module met again while still on the path closes a cycle.
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (f: string, trail: string[]): void => {
      state.set(f, 'open');
      for (const to of edges.get(f) ?? []) {
        if (state.get(to) === 'open') cycles.push([...trail.slice(trail.indexOf(to)), f, to].map((x) => path.relative(root, x)).join(' → '));
        else if (!state.has(to)) visit(to, [...trail, f]);
      }
      state.set(f, 'done');
    };
    for (const f of files) if (!state.has(f)) visit(f, []);
    expect(cycles).toEqual([]);
  });
});
