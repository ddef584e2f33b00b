/**
 * Reranking by the configured language model: one completion rates the head of the ranking
 * (prompt `oracle-rerank.md`), and the oracle reorders by those ratings. It costs a model round
 * trip per question, so it is opt-in (`[oracle] llm_rerank = true`); a reply that cannot be
 * read fails the rerank, and the oracle keeps the feature ranking.
 */
import { VltError } from '../errors';
import type { ChatModel } from '../llm/chat';
import type { PromptLibrary } from '../llm/prompts';
import type { RerankScore, Reranker } from './rerank-endpoint';

/** Characters of each document the model sees: enough to judge, cheap to send. */
const DOC_CHARS = 700;

export class LlmReranker implements Reranker {
  readonly name: string;

  constructor(
    private readonly chat: ChatModel,
    private readonly prompts: PromptLibrary,
    /** The question type, for the prompt; the oracle makes one reranker per question. */
    private readonly questionType: string = 'conceptual',
  ) {
    this.name = `llm:${chat.model}`;
  }

  async rerank(query: string, documents: string[], opts: { topN?: number; signal?: AbortSignal } = {}): Promise<RerankScore[]> {
    if (documents.length === 0) return [];
    const text = this.prompts.render('oracle-rerank', {
      question_type: this.questionType,
      question: query,
      documents: documents.map((d, i) => `[${i}]\n${d.slice(0, DOC_CHARS)}`).join('\n\n'),
    });
    const r = await this.chat.complete({ messages: [{ role: 'user', content: text }], temperature: 0, maxTokens: 40 + documents.length * 16, ...(opts.signal ? { signal: opts.signal } : {}) });
    const scores = parseRatings(r.text, documents.length);
    return scores.sort((a, b) => b.score - a.score).slice(0, opts.topN ?? scores.length);
  }
}

/**
 * The ratings in a model reply: a JSON array of `{index, score}` (a fenced block or text around
 * it is tolerated). Every index must be in range; documents the model skipped rate 0.
 */
export function parseRatings(text: string, n: number): RerankScore[] {
  const json = /\[[\s\S]*\]/.exec(text)?.[0];
  let parsed: unknown;
  try {
    parsed = json ? JSON.parse(json) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed)) throw new VltError('LLM_FAILED', 'the model did not rate the evidence as a JSON array');
  const byIndex = new Map<number, number>();
  for (const item of parsed) {
    const index = (item as { index?: unknown }).index;
    const score = (item as { score?: unknown }).score;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= n || typeof score !== 'number' || !Number.isFinite(score)) {
      throw new VltError('LLM_FAILED', `the model's rating ${JSON.stringify(item).slice(0, 80)} is not {index in 0..${n - 1}, score}`);
    }
    byIndex.set(index, score);
  }
  return Array.from({ length: n }, (_, index) => ({ index, score: byIndex.get(index) ?? 0 }));
}
