/**
 * The evidence brief is markdown a chat renders: it leads with a few places, each holding its
 * code block (long excerpts truncated inside it, code that holds its own fences), lists the rest
 * one line each, and leaves nothing of a fence as raw text; how it was found is apart.
 */
import { marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { extractiveBrief, LEAD_ITEMS } from '../../../src/core/oracle/brief';
import type { AnalyzedQuestion, AssembledContext, ContextItem, RetrieverRun } from '../../../src/core/oracle/types';

function item(i: number): ContextItem {
  const path = `src/part${i}.ts`;
  const lines = Array.from({ length: 20 }, (_, n) => (n === 3 ? '  const md = "```ts";' : `  const v${n} = ${n};`));
  return {
    tier: 'primary',
    citation: `[${path}:1-21]`,
    text: [`[${path}:1-21]`, `export function part${i}() {`, ...lines].join('\n'),
    tokens: 100,
    evidence: {
      result: { key: `code:${path}:1-21`, source: 'code', path, startLine: 1, endLine: 21, content: '', score: 1, method: 'bm25+symbols', citation: `[${path}:1-21]`, metadata: { symbol: `part${i}`, kind: 'function' } },
      fused: 1,
      score: 1,
      ranks: { code: i },
      features: {},
    },
  } as ContextItem;
}

describe('the evidence brief as markdown', () => {
  const question = { text: 'how are parts built', type: 'conceptual', typeReason: 'test', symbols: [], paths: [], terms: [] } as unknown as AnalyzedQuestion;

  it('leads with the first places, each holding its code and the truncation inside it; the rest one line each', () => {
    const context: AssembledContext = { items: Array.from({ length: 12 }, (_, i) => item(i + 1)), repoMap: '', tokens: 1200, budget: 20_000, dropped: [] };
    const { answer: md } = extractiveBrief({ question, context, runs: [] });
    const tokens = marked.lexer(md);
    const lists = tokens.filter((t) => t.type === 'list') as unknown as Array<{ ordered: boolean; items: Array<{ tokens: Array<{ type: string; text?: string }> }> }>;
    expect(lists).toHaveLength(2);
    const [lead, more] = lists;
    expect(lead!.ordered).toBe(true);
    expect(lead!.items).toHaveLength(LEAD_ITEMS);
    for (const li of lead!.items) {
      const code = li.tokens.find((t) => t.type === 'code');
      expect(code?.text).toContain('"```ts"');
      expect(code?.text?.split('\n').pop()).toBe('…');
    }
    // The rest: a plain list of citations, no code.
    expect(more!.ordered).toBe(false);
    expect(more!.items).toHaveLength(12 - LEAD_ITEMS);
    expect(more!.items.every((li) => !li.tokens.some((t) => t.type === 'code'))).toBe(true);
    // No fence or code line leaked out of a block as text.
    const html = marked.parse(md) as string;
    expect(html.replace(/<pre>[\s\S]*?<\/pre>/g, '')).not.toMatch(/```|const v\d/);
  });

  it('keeps how it was found apart: the type, the repository map and what was and was not searched, in words', () => {
    const context: AssembledContext = { items: [item(1)], repoMap: 'src/part1.ts:\n  L1 export function part1()', tokens: 100, budget: 20_000, dropped: [] };
    const runs = [
      { name: 'code', family: 'code', status: 'ok', ms: 12, results: [{}] },
      { name: 'navigation', family: 'code', status: 'skipped', ms: 0, reason: 'the question names no symbol', results: [] },
      { name: 'git', family: 'git', status: 'timeout', ms: 2000, reason: 'timed out', results: [] },
    ] as unknown as RetrieverRun[];
    const brief = extractiveBrief({ question, context, runs });
    expect(brief.answer).not.toMatch(/Searched|repository map|question type/i);
    expect(brief.details).toContain('Question type: **conceptual**');
    expect(brief.details).toContain('L1 export function part1()');
    expect(brief.details).toContain('Searched: code search (1 found, 12 ms).');
    expect(brief.details).toContain('Did not answer: git history timed out (timed out).');
    expect(brief.details).toContain('Not searched: definitions and references: the question names no symbol.');
  });
});
