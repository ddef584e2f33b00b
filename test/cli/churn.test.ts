/**
 * The index stays exact under churn, through the built CLI as a user drives it: files are
 * changed and changed back, `vlt coderag sync` runs after each change (in its own process, and
 * through the workspace daemon), and in the end every query's hits and BM25 scores equal those
 * of a fresh build of the same files. Enough chunks are replaced that the search index is
 * compacted (rebuilt from the stored chunks) on the way.
 */
import { appendFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, vlt } from '../helpers/cli';

/**
 * 120 Go files of three methods each: qualified names (`T.M`) and doc comments, each file's of
 * another length so that no two chunks tie (the order of tied chunks follows the order they
 * were indexed in, which a daemon's edits need not share with a fresh build's walk).
 */
function writeCorpus(dir: string): void {
  for (let i = 0; i < 120; i++) {
    mkdirSync(path.join(dir, `pkg${i % 6}`), { recursive: true });
    const methods = [0, 1, 2].map((j) => `// Decode${j} decodes frame ${j} of codec ${i} and reports an error for a short buffer.${' It checks.'.repeat(i + j * 120)}\nfunc (c *Codec${i}) Decode${j}(buf []byte) (int, error) {\n\tif len(buf) < ${j + 4} {\n\t\treturn 0, errShort${i}\n\t}\n\treturn ${j} + int(buf[0]), nil\n}\n`);
    writeFileSync(path.join(dir, `pkg${i % 6}/codec${i}.go`), `package pkg${i % 6}\n\nimport "errors"\n\nvar errShort${i} = errors.New("short buffer")\n\n// Codec${i} decodes frames.${' It buffers.'.repeat(i)}\ntype Codec${i} struct{}\n\n${methods.join('\n')}`);
  }
}

/**
 * Queries in words: no two of the chunks they find tie. (A name's near matches do tie, `Codec70`
 * to `Codec79` for `Codec7`, and tied hits are ordered by when they were indexed.)
 */
const QUERIES = ['decode error', 'short buffer frame', 'codec reports', 'frames it buffers checks'];

/** Each query's hits and the BM25 list's own scores (`--explain`). */
async function answers(dir: string, env: Record<string, string>): Promise<string[]> {
  const out: string[] = [];
  for (const q of QUERIES) {
    const r = await vlt(['-C', dir, 'coderag', 'search', q, '--json', '--explain', '-k', '20'], { env });
    expect(r.code, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout) as { hits: Array<{ path: string; start_line: number; score: number }>; explain: { retrievers: Array<{ name: string; top: Array<{ path: string; line: number; score: number }> }> } };
    out.push(...res.hits.map((h) => `${q} | ${h.path}:${h.start_line} ${h.score.toFixed(6)}`));
    for (const h of res.explain.retrievers.find((x) => x.name === 'bm25')?.top ?? []) out.push(`${q} | bm25 ${h.path}:${h.line} ${h.score.toFixed(6)}`);
  }
  return out;
}

describe.each([
  ['each command in its own process', { VLT_DAEMON: '0' }],
  ['through the workspace daemon', { VLT_DAEMON: '1' }],
])('sync after changes that end in identical content (%s)', (_name, env) => {
  let churned: string;
  let fresh: string;
  beforeAll(() => {
    churned = tempDir('vlt-churn-');
    fresh = tempDir('vlt-fresh-');
    writeCorpus(churned);
  });
  afterAll(async () => {
    if (env.VLT_DAEMON === '1') await vlt(['-C', churned, 'daemon', 'stop'], { env });
    rmSync(churned, { recursive: true, force: true });
    rmSync(fresh, { recursive: true, force: true });
  });

  it('leaves every hit and score as a fresh build has them', async () => {
    expect((await vlt(['-C', churned, 'coderag', 'init', '-q'], { env })).code).toBe(0);
    const files = Array.from({ length: 120 }, (_, i) => path.join(churned, `pkg${i % 6}/codec${i}.go`));
    const original = new Map(files.map((f) => [f, readFileSync(f)]));
    // Three rounds of 480 chunks replaced twice: past the 1,024 dead ids that compact the index.
    for (let round = 0; round < 3; round++) {
      for (const f of files) appendFileSync(f, `\n// churn ${round}\n`);
      const a = await vlt(['-C', churned, 'coderag', 'sync', '-q'], { env });
      expect(a.code, a.stderr).toBe(0);
      for (const f of files) writeFileSync(f, original.get(f)!);
      const b = await vlt(['-C', churned, 'coderag', 'sync', '-q'], { env });
      expect(b.code, b.stderr).toBe(0);
    }
    const got = await answers(churned, env);
    cpSync(churned, fresh, { recursive: true, filter: (src) => !src.includes(`${path.sep}.vlt`) });
    expect((await vlt(['-C', fresh, 'coderag', 'init', '-q'], { env: { VLT_DAEMON: '0' } })).code).toBe(0);
    const want = await answers(fresh, { VLT_DAEMON: '0' });
    expect(want.length).toBeGreaterThan(40);
    expect(got).toEqual(want);
  }, 240_000);
});
