/**
 * LLM synthesis: one streamed completion that answers the question from the assembled context
 * and cites it. The prompts (`oracle-system`, `oracle-synthesis`) hold every instruction; this
 * module only lays the context out, streams the reply as `text` events, and checks the
 * citations afterwards.
 *
 * Failures of the model are not handled here: `LLM_FAILED` and `CANCELLED` reach the caller,
 * which degrades to the extractive brief. An answer that cites nothing from the context is
 * still returned, flagged by its empty `citations` and its `unknownCitations`; what that costs
 * is the Oracle's decision, not this module's.
 */
import { VltError } from '../errors';
import type { ChatMessage, ChatModel, ChatUsage } from '../llm/chat';
import type { PromptLibrary } from '../llm/prompts';
import { checkCitations } from './citations';
import type { AnalyzedQuestion, AssembledContext, Citation, OracleEvent } from './types';

/**
 * The words the prompts ask a model to use for what the evidence does not answer. An answer
 * that uses them and cites nothing is the model's verdict that nothing relevant was found
 * ({@link declinesToAnswer}).
 */
export const NOT_FOUND = 'not found in the provided context';

/** The answer length the prompts ask for; the model may exceed it when the question needs it. */
export const ANSWER_MAX_WORDS = 250;

/**
 * Upper bound on the reply's tokens: a 250-word answer is ~400 tokens, and the slack is for
 * lists of call sites and for models that count reasoning tokens against the limit.
 */
export const DEFAULT_SYNTHESIS_MAX_TOKENS = 2000;

/** What both model paths (synthesis and agent) answer from. */
export interface SynthesisRequest {
  /** The question as the user asked it (the standalone rewrite when there was one). */
  question: string;
  analysis: AnalyzedQuestion;
  context: AssembledContext;
  /** What the conversation has been about (recent subjects, decisions), when there is one. */
  conversation?: string;
}

export interface SynthesisDeps {
  chat: ChatModel;
  prompts: PromptLibrary;
  /** Receives each `text` delta as it arrives, in order. */
  onEvent?: (e: OracleEvent) => void;
  signal?: AbortSignal;
  /** Upper bound on the reply's tokens; default {@link DEFAULT_SYNTHESIS_MAX_TOKENS}. */
  maxTokens?: number;
}

export interface SynthesisResult {
  /** The answer exactly as streamed: the concatenation of every `text` event. */
  text: string;
  /** Citations that point into the context, in order of first use. */
  citations: Citation[];
  /** Citations (as written) that point at nothing in the context. */
  unknownCitations: string[];
  model: string;
  usage?: ChatUsage;
  /** `stop`, or `length` when the answer was cut at `maxTokens`. */
  finishReason: string;
  ms: number;
}

/**
 * The context as the model reads it: one `### [citation] (tier)` block per item, in the
 * assembly's priority order. The repository-map slice is not an item here; it has its own
 * section of the prompt ({@link repoMapText}).
 */
export function formatContext(context: AssembledContext): string {
  const blocks = context.items.filter((i) => i.tier !== 'map').map((i) => `### ${i.citation} (${i.tier})\n${i.text.trimEnd()}`);
  return blocks.length ? blocks.join('\n\n') : '(no context items)';
}

/** The repository-map slice: the context's `repoMap`, or its `map` items when that is empty. */
export function repoMapText(context: AssembledContext): string {
  const map = context.repoMap.trim() || context.items.filter((i) => i.tier === 'map').map((i) => i.text.trim()).filter(Boolean).join('\n');
  return map || '(none)';
}

/** The two messages of a synthesis call: `oracle-system`, then `oracle-synthesis`. */
export function synthesisMessages(req: SynthesisRequest, prompts: PromptLibrary): ChatMessage[] {
  return [
    { role: 'system', content: prompts.render('oracle-system', { max_words: ANSWER_MAX_WORDS, not_found: NOT_FOUND }) },
    {
      role: 'user',
      content: prompts.render('oracle-synthesis', {
        question_type: req.analysis.type,
        conversation: req.conversation?.trim() || '(none)',
        repo_map: repoMapText(req.context),
        context: formatContext(req.context),
        question: req.question.trim(),
      }),
    },
  ];
}

/**
 * Answers `req.question` from `req.context` with one streamed completion. Emits a `text` event
 * per delta; the returned `text` is their concatenation. Throws `LLM_FAILED` when the model
 * fails (after the client's retries) or returns no text at all, `CANCELLED` on abort.
 */
export async function synthesize(req: SynthesisRequest, deps: SynthesisDeps): Promise<SynthesisResult> {
  const started = Date.now();
  const messages = synthesisMessages(req, deps.prompts);
  let text = '';
  let finishReason = 'stop';
  let usage: ChatUsage | undefined;
  const stream = deps.chat.stream({
    messages,
    temperature: 0,
    maxTokens: deps.maxTokens ?? DEFAULT_SYNTHESIS_MAX_TOKENS,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  for await (const ev of stream) {
    if (ev.type === 'text') {
      text += ev.text;
      deps.onEvent?.({ type: 'text', text: ev.text });
    } else {
      finishReason = ev.result.finishReason;
      usage = ev.result.usage;
    }
  }
  // An empty reply is a failure of the model, not an answer: the caller's fallback (the
  // extractive brief) is better than printing nothing.
  if (!text.trim()) {
    throw new VltError('LLM_FAILED', `language model ${deps.chat.model} returned an empty answer (finish reason: ${finishReason})`, { model: deps.chat.model, finishReason });
  }
  const { valid, unknown } = checkCitations(text, req.context);
  const result: SynthesisResult = { text, citations: valid, unknownCitations: unknown, model: deps.chat.model, finishReason, ms: Date.now() - started };
  if (usage) result.usage = usage;
  return result;
}

/**
 * Whether a model's answer says that the evidence does not answer the question: it uses the
 * {@link NOT_FOUND} words and cites nothing, neither the context nor anything invented. This
 * is the semantic half of the no-context decision, for the questions whose words the project
 * does use, but not about this ("the HTTP server's WebSocket frames" in a project with HTTP/2
 * frames): the lexical tests of relevance.ts cannot tell those apart, a model reading the
 * evidence can. An answer that cites something, even while saying part of it was not found,
 * answers.
 */
export function declinesToAnswer(r: { text: string; citations: readonly Citation[]; unknownCitations: readonly string[] }): boolean {
  return r.citations.length === 0 && r.unknownCitations.length === 0 && r.text.toLowerCase().replace(/\s+/g, ' ').includes(NOT_FOUND);
}

/**
 * The honest reply when retrieval found nothing relevant: it says so and lists what was
 * searched. Rendered from `oracle-no-context` without calling any model: there is nothing for
 * a model to ground an answer in, and a model asked anyway would guess.
 *
 * @param searched what was searched, one entry per line (`code index: 0 results above threshold`).
 * @param why the test of the no-context decision that fired (`no chunk mentions Kafka`).
 */
export function noContextAnswer(question: string, searched: readonly string[], prompts: PromptLibrary, why = 'nothing found scored high enough'): string {
  const list = searched.map((s) => s.trim()).filter(Boolean);
  return prompts.render('oracle-no-context', {
    question: question.trim().replace(/\s+/g, ' '),
    why: why.replace(/\.$/, ''),
    searched: list.length ? list.map((s) => `- ${s}`).join('\n') : '- (no source could be searched)',
  });
}
