/**
 * The code-intelligence gold files (test/bench/intel/gold-*.json, built by build-gold.ts from
 * real language servers) keep their schema and their promises, and still match the corpus
 * they were built on. The schema checks always run; the checks against the corpus run where
 * it is installed (npm packages rxjs and zod, Debian python3-django), else they are skipped
 * with the corpus path in the test name. The ctags baseline is checked on a small fixture.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ctagsBaseline, goldRoot, parseIntelGold, type IntelGold } from '../bench/intel/ctags-baseline';
import { ROOT, tempDir } from '../helpers/cli';

const CORPORA = ['rxjs', 'zod', 'django', 'go'] as const;
/** The kinds of definition case each gold must hold: Go has no imports of names or superclasses, but embedding and promotion. */
const KINDS: Record<(typeof CORPORA)[number], readonly string[]> = {
  rxjs: ['call', 'property', 'import', 'superclass', 'identifier'],
  zod: ['call', 'property', 'import', 'superclass', 'identifier'],
  django: ['call', 'property', 'import', 'superclass', 'identifier'],
  go: ['call', 'property', 'qualified', 'type', 'embedded', 'promoted', 'identifier'],
};
/** Most references per case: the Go set keeps names with thousands of uses on purpose (answers at scale). */
const MAX_REFS: Record<(typeof CORPORA)[number], number> = { rxjs: 200, zod: 200, django: 200, go: 5000 };
const goldFile = (c: string): string => path.join(ROOT, 'test/bench/intel', `gold-${c}.json`);

/** Deterministic sample: the same cases on every run, so a failure can be reproduced. */
function sample<T>(xs: readonly T[], n: number, seed: number): T[] {
  let a = seed >>> 0;
  const rand = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const copy = [...xs];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, n);
}

for (const corpus of CORPORA) {
  const file = goldFile(corpus);
  const raw = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  const gold: IntelGold = parseIntelGold(raw, file);
  const key = (l: { path: string; line: number; col: number }): string => `${l.path}:${l.line}:${l.col}`;

  describe(`intel gold ${corpus}: schema and sampling`, () => {
    it('validates against the schema, with unique ids and the promised sizes', () => {
      expect(gold.corpus).toBe(corpus);
      expect(statSync(file).size).toBeLessThan(1.5 * 1024 * 1024);
      expect(gold.definitions.length).toBeGreaterThanOrEqual(250);
      expect(gold.references.length).toBeGreaterThanOrEqual(30);
      const ids = [...gold.definitions, ...gold.references].map((c) => c.id);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it(`never asks for the definition of a declaration, and keeps 2..${MAX_REFS[corpus]} references per case`, () => {
      for (const d of gold.definitions) expect(d.gold.map(key), d.id).not.toContain(key(d.at));
      for (const r of gold.references) {
        expect(r.gold.length, r.id).toBeGreaterThanOrEqual(2);
        expect(r.gold.length, r.id).toBeLessThanOrEqual(MAX_REFS[corpus]);
        expect(r.gold.map(key), r.id).not.toContain(key(r.definition));
      }
    });

    it('spreads cases over files and kinds, member accesses included', () => {
      const perFile = new Map<string, number>();
      for (const d of gold.definitions) perFile.set(d.at.path, (perFile.get(d.at.path) ?? 0) + 1);
      expect(Math.max(...perFile.values())).toBeLessThanOrEqual(3);
      const kinds = new Set(gold.definitions.map((d) => d.kind));
      for (const k of KINDS[corpus]) expect(kinds, k).toContain(k);
      const property = gold.definitions.filter((d) => d.kind === 'property').length;
      expect(property / gold.definitions.length).toBeGreaterThanOrEqual(0.15);
    });
  });

  const root = goldRoot(gold, ROOT);
  describe.skipIf(!existsSync(root))(`intel gold ${corpus} against the corpus (${root})`, () => {
    const cache = new Map<string, string[]>();
    const lineOf = (p: string, line: number): string => {
      let lines = cache.get(p);
      if (!lines) {
        lines = readFileSync(path.join(root, p), 'utf8').split('\n');
        cache.set(p, lines);
      }
      const text = lines[line - 1];
      if (text === undefined) throw new Error(`${p} has no line ${line}`);
      return text;
    };
    // Columns are UTF-16 code units, which is what a JavaScript string index counts.
    const textAt = (l: { path: string; line: number; col: number }, n: number): string => lineOf(l.path, l.line).slice(l.col - 1, l.col - 1 + n);
    const names = (name: string, l: { path: string; line: number; col: number }): boolean => {
      const text = textAt(l, name.length + 1);
      return text.startsWith(name) && !/^[\p{ID_Continue}$]$/u.test(text.slice(name.length));
    };

    it('20 sampled definition cases: the identifier at `at` is `name`, every gold position exists', () => {
      for (const d of sample(gold.definitions, 20, 7)) {
        expect(names(d.name, d.at), `${d.id} at ${key(d.at)}: "${textAt(d.at, 40)}"`).toBe(true);
        for (const g of d.gold) expect(lineOf(g.path, g.line).length, `${d.id} → ${key(g)}`).toBeGreaterThanOrEqual(g.col - 1);
      }
    });

    it('20 sampled reference cases: the definition and 5 references each name the symbol', () => {
      for (const r of sample(gold.references, 20, 11)) {
        expect(names(r.name, r.definition), `${r.id} definition "${textAt(r.definition, 40)}"`).toBe(true);
        for (const g of sample(r.gold, 5, 13)) expect(names(r.name, g), `${r.id} → ${key(g)}: "${textAt(g, 40)}"`).toBe(true);
      }
    });

    // Not every answer can carry the name: `export default function`, and uses of an import
    // alias (`import { iterator as Symbol_iterator }`) whose answer is the original name.
    it('at least 95% of definition cases have a gold position that names the symbol', () => {
      const misses = gold.definitions.filter((d) => !d.gold.some((g) => names(d.name, g)));
      const rate = 1 - misses.length / gold.definitions.length;
      expect(rate, misses.map((d) => `${d.id} ${d.name} → ${d.gold.map((g) => `"${textAt(g, 30)}"`).join(', ')}`).join('\n')).toBeGreaterThanOrEqual(0.95);
    });
  });
}

const hasCtags = spawnSync('ctags', ['--version'], { stdio: 'ignore' }).status === 0;
describe.skipIf(!hasCtags)('ctags baseline on a fixture', () => {
  const dir = tempDir('vlt-intel-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers by name, prefers the same file, and greps references', async () => {
    mkdirSync(path.join(dir, 'src'));
    writeFileSync(path.join(dir, 'src/a.ts'), 'export function helper(): number {\n  return 1;\n}\nexport class Box {\n  size(): number { return helper(); }\n}\n');
    writeFileSync(path.join(dir, 'src/b.ts'), "import { helper } from './a';\nexport function helper2(): number {\n  return helper() + new Box().size();\n}\nfunction size(): number { return 2; }\n");
    const gold = parseIntelGold({
      corpus: 'fixture',
      root: dir,
      language: 'typescript',
      corpusVersion: '0',
      seed: 1,
      generator: { tool: 'hand', version: '0', script: 'test', date: '2026-01-01' },
      definitions: [
        // Right: one tag of that name.
        { id: 'fixture-d-1', at: { path: 'src/b.ts', line: 3, col: 10 }, name: 'helper', kind: 'call', gold: [{ path: 'src/a.ts', line: 1, col: 17 }] },
        // Wrong: the same-file `size` function wins over the method, as ctags-only tools choose.
        { id: 'fixture-d-2', at: { path: 'src/b.ts', line: 3, col: 31 }, name: 'size', kind: 'property', gold: [{ path: 'src/a.ts', line: 5, col: 3 }] },
        // Unanswered: no tag for a name nobody declares.
        { id: 'fixture-d-3', at: { path: 'src/a.ts', line: 2, col: 3 }, name: 'return', kind: 'identifier', gold: [{ path: 'src/a.ts', line: 1, col: 1 }] },
      ],
      references: [
        {
          id: 'fixture-r-1',
          name: 'helper',
          kind: 'function',
          definition: { path: 'src/a.ts', line: 1, col: 17 },
          gold: [
            { path: 'src/a.ts', line: 5, col: 27 },
            { path: 'src/b.ts', line: 1, col: 10 },
            { path: 'src/b.ts', line: 3, col: 10 },
          ],
        },
      ],
    });
    const r = await ctagsBaseline(gold);
    expect(r.total).toBe(3);
    expect(r.answered).toBe(2);
    expect(r.definitionCoverage).toBeCloseTo(2 / 3);
    expect(r.definitionPrecision).toBeCloseTo(1 / 2);
    expect(r.perKind.call).toMatchObject({ total: 1, answered: 1, correct: 1 });
    expect(r.perKind.property).toMatchObject({ total: 1, answered: 1, correct: 0 });
    // `helper2` must not count as an occurrence of `helper`; all three real ones are found.
    expect(r.referenceRecall).toBe(1);
    expect(r.referencePrecision).toBe(1);
    expect(r.grepDefinition.answered).toBeGreaterThanOrEqual(2);
  });
});
