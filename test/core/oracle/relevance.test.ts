/**
 * The no-context decision's co-occurrence measure (src/core/oracle/relevance.ts) on a small
 * project: a question whose words occur together in one function has context; the same words
 * scattered over unrelated files do not, although the union of the evidence holds them all.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../../src/core/engine';
import { analyzeQuestion } from '../../../src/core/oracle/analyze';
import { assessRelevance, inflectionKey, inflections, MIN_COOCCURRENCE, subjectWords } from '../../../src/core/oracle/relevance';
import { nodeWorkspaceFs } from '../../../src/node/fs';

let dir: string;
let engine: Engine;

const files: Record<string, string> = {
  // The words of the on-topic question, together in one function.
  'src/retry/backoff.ts': 'export function retryWithBackoff(attempts: number) {\n  // Each failed attempt waits twice as long before the request is retried.\n  return attempts * 2;\n}\n',
  // The words of the off-topic question, one per file, next to unrelated code.
  'src/colors/palette.ts': 'export const palette = ["chocolate", "teal"];\nexport function shade(c: string) { return c.toUpperCase(); }\n',
  'src/net/chip.ts': 'export function chipId(serial: string) { return serial.slice(0, 4); }\n',
  'src/http/cookies.ts': 'export function parseCookies(header: string) { return header.split(";"); }\n',
  'src/text/recipe.ts': 'export function recipeTitle(s: string) { return s.trim(); }\n',
  'src/util/misc.ts': 'export function identity<T>(x: T): T { return x; }\nexport function give() {}\n',
};

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'vlt-relevance-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
  await engine.index();
});

afterAll(async () => {
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('inflections', () => {
  it('folds plural, past, -ing and -ly forms and the -ise/-ize spellings, not derivations', () => {
    expect(inflectionKey('recognise')).toBe(inflectionKey('recognized'));
    expect(inflectionKey('caching')).toBe(inflectionKey('cached'));
    expect(inflectionKey('stopped')).toBe(inflectionKey('stop'));
    expect(inflectionKey('entries')).toBe(inflectionKey('entry'));
    expect(inflectionKey('compactly')).toBe(inflectionKey('compact'));
    expect(inflectionKey('reader')).not.toBe(inflectionKey('read'));
    expect(inflections('recognise')).toEqual(expect.arrayContaining(['recognized', 'recognizes', 'recognised']));
    // A three-letter stem is another word.
    expect(inflections('life')).not.toContain('lif');
  });

  it('keeps a question word written as code, and drops the word that only names a folder', () => {
    expect(analyzeQuestion('What happens when get() finds more than one object?').terms).toContain('get');
    expect(subjectWords(analyzeQuestion('What does the retry module consist of?'))).toEqual(['retry']);
  });
});

describe('co-occurrence', () => {
  it('is high when the question\'s words occur together in one chunk', () => {
    const r = assessRelevance(engine, analyzeQuestion('How is a failed request retried with backoff?'), []);
    expect(r.chunk).toBeGreaterThan(0.9);
    expect(r.cooccurrence).toBeGreaterThanOrEqual(MIN_COOCCURRENCE);
    expect(r.where).toBe('src/retry/backoff.ts');
  });

  it('is low when each word occurs only in a different file', () => {
    const r = assessRelevance(engine, analyzeQuestion('Can you give me a recipe for chocolate chip cookies?'), []);
    expect(r.absent).toBe(0);
    expect(r.cooccurrence).toBeLessThan(MIN_COOCCURRENCE);
  });

  it('measures co-occurrence over the words the index knows, and the rest as absent', () => {
    const r = assessRelevance(engine, analyzeQuestion('How is a failed request retried with exponential jitter?'), []);
    expect(r.absent).toBeGreaterThan(0);
    expect(r.chunk).toBeGreaterThan(0.9);
  });
});
