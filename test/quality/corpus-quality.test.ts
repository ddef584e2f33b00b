/**
 * Ranking quality on real code: the gold queries of the benchmark, checked on the Go standard
 * library and Django from Debian. CI installs both; elsewhere the suite is skipped with a note.
 */
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/core/engine';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { ROOT, tempDir, vlt } from '../helpers/cli';

interface Gold {
  queries: Array<{ query: string; path: string; symbol: string; line: number; top: number; required?: boolean }>;
  min_pass_rate: number;
}

const CORPORA = [
  { name: 'go', src: '/usr/share/go-1.19/src', dest: '.', gold: 'gold-go.json' },
  { name: 'django', src: '/usr/lib/python3/dist-packages/django', dest: 'django', gold: 'gold-django.json' },
];

for (const corpus of CORPORA) {
  const present = existsSync(corpus.src);
  describe.skipIf(!present)(`ranking quality on ${corpus.name} (${corpus.src})`, () => {
    let dir: string;
    let engine: Engine;
    const gold = JSON.parse(readFileSync(path.join(ROOT, 'test/bench', corpus.gold), 'utf8')) as Gold;

    beforeAll(async () => {
      dir = tempDir(`vlt-${corpus.name}-`);
      cpSync(corpus.src, path.join(dir, corpus.dest), { recursive: true });
      const r = await vlt(['coderag', 'init', dir, '--quiet'], { timeoutMs: 280_000 });
      expect(r.code, r.stderr).toBe(0);
      engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'read');
    }, 300_000);
    afterAll(async () => {
      await engine?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const rank = async (g: Gold['queries'][number]) => {
      const res = await engine.search(g.query, { k: g.top });
      const found = res.hits.some((h) => h.path === g.path && h.start_line <= g.line && g.line <= h.end_line);
      return { found, got: res.hits.map((h) => `${h.path}:${h.start_line} ${h.symbol}`) };
    };

    for (const g of gold.queries.filter((q) => q.required)) {
      it(`"${g.query}" ranks ${g.path}:${g.line} (${g.symbol}) in the top ${g.top}`, async () => {
        const r = await rank(g);
        expect(r.found, JSON.stringify(r.got)).toBe(true);
      });
    }

    if (corpus.name === 'go') {
      it('references of a name used all over the standard library: complete, non-test uses first; on a budget, a partial answer that says so', async () => {
        const nav = engine.navigator();
        // strings.TrimSpace (strings/strings.go:945): some 680 files mention the name.
        const a = await nav.references('strings/strings.go:945:6', { noLsp: true, limit: 5000, budgetMs: 60_000 });
        expect(a.truncated, JSON.stringify({ notes: a.notes, providers: a.providers, def: a.definition })).toBe(false);
        expect(a.locations.length).toBeGreaterThan(200);
        // The package's own unqualified uses and other packages' strings.TrimSpace both count;
        // uses in non-test files come first.
        expect(a.locations.some((l) => l.path.startsWith('strings/'))).toBe(true);
        expect(a.locations.some((l) => l.path.startsWith('net/http/'))).toBe(true);
        const firstTest = a.locations.findIndex((l) => l.path.endsWith('_test.go'));
        expect(firstTest).toBeGreaterThan(0);
        expect(a.locations.slice(firstTest).every((l) => l.path.endsWith('_test.go'))).toBe(true);
        const partial = await nav.references('strings/strings.go:945:6', { noLsp: true, limit: 5000, budgetMs: 1 });
        expect(partial.truncated).toBe(true);
        expect(partial.locations.length).toBeLessThan(a.locations.length);
        expect(partial.notes.find((n) => n.startsWith('partial:'))).toMatch(/resolved the uses in \d+ of \d+ files/);
      });
    }

    it(`at least ${gold.min_pass_rate * 100}% of the ${gold.queries.length} gold queries rank their answer in their top N`, async () => {
      const misses: string[] = [];
      for (const g of gold.queries) {
        const r = await rank(g);
        if (!r.found) misses.push(`"${g.query}" → ${g.path}:${g.line}; got ${r.got.slice(0, 3).join(', ')}`);
      }
      const rate = 1 - misses.length / gold.queries.length;
      expect(rate, misses.join('\n')).toBeGreaterThanOrEqual(gold.min_pass_rate);
    });

    it('answers a pasted bug report with the implicated files first', async () => {
      const text = readFileSync(path.join(ROOT, 'test/bench', `long-query-${corpus.name}.txt`), 'utf8');
      const res = await engine.search(text, { k: 5 });
      const expected = corpus.name === 'go' ? 'net/http/server.go' : 'django/db/models/sql/query.py';
      expect(res.hits.map((h) => h.path)).toContain(expected);
    });
  });
}
