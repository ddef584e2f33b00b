/**
 * The Context Oracle's commands through the built CLI, as a user runs them: `vlt ctx`, `vlt why`,
 * `vlt routes` and `vlt lint` (its exit codes are for CI), and the errors a user can cause.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/mcp-client';
import { tempDir, vlt } from '../helpers/cli';

const FILES: Record<string, string> = {
  'vlt.toml': ['[[architecture.component]]', 'name = "core"', 'path = "core/**"', '', '[[architecture.component]]', 'name = "cli"', 'path = "cli/**"', '', '[[architecture.rule]]', 'name = "core-is-headless"', 'deny = { from = "core", to = "cli" }', ''].join('\n'),
  'core/engine.ts': ["import { printBanner } from '../cli/banner';", '', 'export class Engine {', '  search(q: string): string[] {', '    printBanner();', '    return [q];', '  }', '}', ''].join('\n'),
  'cli/banner.ts': ['export function printBanner(): void {', "  console.log('vlt');", '}', ''].join('\n'),
  'cli/main.ts': ["import { Engine } from '../core/engine';", '', 'export function main(): void {', "  new Engine().search('x');", '}', ''].join('\n'),
  'cli/server.ts': ["import express from 'express';", 'const app = express();', "app.get('/status', status);", 'function status() {}', ''].join('\n'),
  'core/engine.test.ts': ["import { Engine } from './engine';", "test('search', () => { new Engine().search('a'); });", ''].join('\n'),
};

describe('vlt ctx, why, routes and lint', () => {
  let dir: string;
  beforeAll(async () => {
    ensureBuilt();
    dir = tempDir();
    for (const [rel, text] of Object.entries(FILES)) {
      mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      writeFileSync(path.join(dir, rel), text);
    }
    const r = await vlt(['-C', dir, 'coderag', 'init', '-q']);
    expect(r.code, r.stderr).toBe(0);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints a bundle as JSON and as Markdown', async () => {
    const r = await vlt(['-C', dir, 'ctx', 'Engine.search', '--json', '--depth', '1']);
    expect(r.code, r.stderr).toBe(0);
    const b = JSON.parse(r.stdout) as { version: number; focus: { ref_id: string }; graph: { edges: Array<{ src: string; kind: string; dst: string }> }; tests: { framework: string; test_files: string[] } };
    expect(b.version).toBe(2);
    expect(b.focus.ref_id).toBe('core/engine.ts#Engine.search');
    expect(b.graph.edges).toContainEqual({ src: 'core/engine.ts#Engine.search', kind: 'uses', dst: 'cli/banner.ts#printBanner' });
    expect(b.tests).toMatchObject({ framework: 'jest', test_files: ['core/engine.test.ts'] });
    const md = await vlt(['-C', dir, 'ctx', 'component:core']);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toMatch(/^# Context: component:core/);
    expect(md.stdout).toContain('`component:core` depends_on `component:cli`');
  });

  it('fails on an unknown ref with suggestions, and on an ambiguous one with the candidates', async () => {
    const r = await vlt(['-C', dir, 'ctx', 'core/engin']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^vlt: no node core\/engin; did you mean core\/engine\.ts/);
    const usage = await vlt(['-C', dir, 'ctx', 'x', '--json', '--markdown']);
    expect(usage.code).toBe(2);
  });

  it('renders impact as a plain tree when piped, and as JSON', async () => {
    const r = await vlt(['-C', dir, 'why', 'cli/banner.ts#printBanner']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/\x1b\[/);
    expect(r.stdout).toContain('└── core/engine.ts#Engine.search [symbol, uses]');
    expect(r.stdout).toMatch(/impact: 1 direct and \d+ transitive dependents/);
    const j = await vlt(['-C', dir, 'why', 'cli/banner.ts', '--json', '--reverse', '--depth', '4']);
    expect(JSON.parse(j.stdout)).toMatchObject({ depth: { upstream: 4, downstream: 2 } });
  });

  it('lists routes', async () => {
    const r = await vlt(['-C', dir, 'routes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    // list_routes' answer: the routes and how many there are in all.
    expect(JSON.parse(r.stdout)).toEqual({ routes: [{ method: 'GET', path: '/status', handler: 'status', file: 'cli/server.ts', line: 3, framework: 'express' }], total: 1 });
  });

  it('lint exits 1 on a broken rule, with the import that breaks it', async () => {
    const r = await vlt(['-C', dir, 'lint', '--format', 'porcelain']);
    expect(r.code).toBe(1);
    expect(r.stdout.trim()).toBe('error\tcore-is-headless\tcore/engine.ts:1\tcore/engine.ts imports cli/banner.ts (core must not depend on cli)');
    expect(r.stderr).toMatch(/^vlt: lint: 1 error, 0 warnings/);
    const j = await vlt(['-C', dir, 'lint', '--format', 'json']);
    expect(JSON.parse(j.stdout)).toMatchObject({ rules: 1, components: 2, errors: 1 });
  });
});
