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

  it('the built CLI bundle never requires vscode', () => {
    const bundle = path.join(root, 'dist/cli.js');
    if (!existsSync(bundle)) execFileSync('node', ['esbuild.mjs'], { cwd: root });
    const text = readFileSync(bundle, 'utf8');
    expect(text).not.toMatch(/require\(["']vscode["']\)/);
  });

  it('each host has exactly one wiring file that creates the engine', () => {
    for (const host of ['cli', 'mcp']) {
      const files = tsFiles(path.join(root, 'src', host)).filter((f) => /Engine\.open\(/.test(readFileSync(f, 'utf8')));
      expect(files.map((f) => path.relative(root, f))).toEqual([`src/${host}/main.ts`]);
    }
  });
});
