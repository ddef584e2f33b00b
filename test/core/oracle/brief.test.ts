/**
 * The evidence brief is markdown a chat renders: with more than ten items, long (truncated)
 * excerpts and code that holds its own fences, it must stay one numbered list whose items each
 * hold their code block, with nothing of a fence left as raw text.
 */
import { marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { extractiveBrief } from '../../../src/core/oracle/brief';
import type { AnalyzedQuestion, AssembledContext, ContextItem } from '../../../src/core/oracle/types';

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
  it('is one numbered list past ten items, each item holding its code, the truncation inside it', () => {
    const context: AssembledContext = { items: Array.from({ length: 12 }, (_, i) => item(i + 1)), repoMap: '', tokens: 1200, budget: 20_000, dropped: [] };
    const question = { text: 'how are parts built', type: 'conceptual', typeReason: 'test', symbols: [], paths: [], terms: [] } as unknown as AnalyzedQuestion;
    const md = extractiveBrief({ question, context, runs: [] });
    const tokens = marked.lexer(md);
    const lists = tokens.filter((t) => t.type === 'list');
    expect(lists).toHaveLength(1);
    const list = lists[0] as unknown as { ordered: boolean; items: Array<{ tokens: Array<{ type: string; text?: string }> }> };
    expect(list.ordered).toBe(true);
    expect(list.items).toHaveLength(12);
    for (const li of list.items) {
      const code = li.tokens.find((t) => t.type === 'code');
      expect(code?.text).toContain('"```ts"');
      expect(code?.text?.split('\n').pop()).toBe('…');
    }
    // No fence or code line leaked out of a block as text.
    const html = marked.parse(md) as string;
    expect(html.replace(/<pre>[\s\S]*?<\/pre>/g, '')).not.toMatch(/```|const v\d/);
  });
});
