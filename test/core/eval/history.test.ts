import { describe, expect, it } from 'vitest';
import { firstGoldRank, isSourceFile, messageQuery, metrics, namesAnyFile, sampleInstances, selectInstances, type HistoryCommit } from '../../../src/core/eval/history';

function commit(sha: string, subject: string, files: Array<[string, string]>, body = '', time = 1000): HistoryCommit {
  return { sha: sha.padEnd(40, '0'), parent: 'f'.repeat(40), time, subject, body, files: files.map(([status, path]) => ({ status, path })) };
}

describe('the history eval definitions', () => {
  it('counts a fix-like commit that modifies 1-5 source files, with those files as gold', () => {
    const got = selectInstances([
      commit('a1', 'Fix crash when the header is empty', [['M', 'src/headers.py'], ['M', 'tests/test_headers.py'], ['M', 'CHANGES.rst']]),
      commit('a2', 'Add a new feature for headers', [['M', 'src/headers.py']]),
      commit('a3', 'fix: wrong offset in parser', [['A', 'src/new.py']]),
      commit('a4', 'Fix everything at once please', [1, 2, 3, 4, 5, 6].map((i): [string, string] => ['M', `src/m${i}.py`])),
      commit('a5', 'Fix typo', [['M', 'src/a.py']]),
      commit('a6', 'Bug in the date parser returns the wrong year', [['M', 'lib/parse.ts'], ['A', 'lib/year.ts'], ['M', 'dist/bundle.js']]),
    ]);
    expect(got.map((i) => [i.sha.slice(0, 2), i.gold])).toEqual([
      ['a1', ['src/headers.py']],
      ['a6', ['lib/parse.ts']],
    ]);
    expect(got[0]!.namesGold).toBe(false);
  });

  it('makes the query from the message without trailers and issue numbers', () => {
    expect(messageQuery('Fix the parser (#1234)', 'It dropped the last token.\n\nFixes #12\nSigned-off-by: A <a@b.c>\nCo-authored-by: B <b@c.d>')).toBe('Fix the parser\nIt dropped the last token.');
  });

  it('says whether the message names a gold file, ignoring stems every message has', () => {
    expect(namesAnyFile('fix sessions.py cookie handling', ['requests/sessions.py'])).toBe(true);
    expect(namesAnyFile('fix the sessions cookie handling', ['requests/sessions.py'])).toBe(true);
    expect(namesAnyFile('fix the main index of utils', ['src/index.ts', 'src/utils.ts', 'src/main.ts'])).toBe(false);
    expect(namesAnyFile('fix the sessionsx cookie handling', ['requests/sessions.py'])).toBe(false);
  });

  it('knows source from tests, docs and build output', () => {
    expect(isSourceFile('src/a.ts')).toBe(true);
    expect(isSourceFile('src/a.test.ts')).toBe(false);
    expect(isSourceFile('tests/test_a.py')).toBe(false);
    expect(isSourceFile('README.md')).toBe(false);
    expect(isSourceFile('dist/a.js')).toBe(false);
    expect(isSourceFile('types/index.d.ts')).toBe(false);
  });

  it('samples deterministically, whatever the input order, and returns newest first', () => {
    const all = Array.from({ length: 30 }, (_, i) => ({ sha: `c${i}`.padEnd(40, '0'), parent: 'f'.repeat(40), time: i, query: 'fix it now', gold: ['a.py'], namesGold: false }));
    const a = sampleInstances(all, 10);
    const b = sampleInstances([...all].reverse(), 10);
    expect(a).toEqual(b);
    expect(a).toHaveLength(10);
    expect(a.map((x) => x.time)).toEqual([...a.map((x) => x.time)].sort((x, y) => y - x));
    // A larger sample keeps the smaller one.
    const bigger = new Set(sampleInstances(all, 20).map((x) => x.sha));
    expect(a.every((x) => bigger.has(x.sha))).toBe(true);
  });

  it('scores Acc@k and MRR from the rank of the first gold file', () => {
    expect(firstGoldRank(['x', 'b', 'a'], ['a', 'b'])).toBe(2);
    expect(firstGoldRank(['x'], ['a'])).toBe(0);
    expect(firstGoldRank([...'abcdefghijk'].map(String), ['k'])).toBe(0);
    expect(metrics([1, 3, 0, 6])).toEqual({ n: 4, acc1: 0.25, acc5: 0.5, acc10: 0.75, mrr: Number(((1 + 1 / 3 + 1 / 6) / 4).toFixed(4)) });
    expect(metrics([])).toEqual({ n: 0, acc1: 0, acc5: 0, acc10: 0, mrr: 0 });
  });
});
