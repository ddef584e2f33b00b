/**
 * The oracle's agent mode: the model starts from the assembled context and may call the
 * engine's read-only tools (search, navigation, the repository map, file ranges, notes,
 * threads) for up to `maxTurns` model calls before it answers. It runs the one tool loop
 * (`llm/tool-loop.ts`, shared with the Librarian): every tool failure goes back to the model;
 * a failure of the model (`LLM_FAILED`) or a cancellation reaches the caller, which degrades
 * to the extractive brief. The last allowed turn is made without tools and streamed, which
 * forces an answer from what the model has gathered.
 *
 * Citations are checked against the initial context plus every location a tool result
 * named (see `locationsInText` in `citations.ts`).
 */
import { VltError } from '../errors';
import type { ChatMessage, ChatModel, ChatUsage } from '../llm/chat';
import { runToolLoop, type LoopTool } from '../llm/tool-loop';
import type { PromptLibrary } from '../llm/prompts';
import { checkCitations, locationsInText, type CitableLocation } from './citations';
import { ANSWER_MAX_WORDS, NOT_FOUND, formatContext, repoMapText, type SynthesisRequest } from './synthesize';
import type { Citation, OracleEvent } from './types';

export const AGENT_MAX_TURNS = 10;

/** A tool answer longer than this is cut: the model needs the gist, and its context is finite. */
export const DEFAULT_MAX_TOOL_RESULT_CHARS = 12_000;

/** A tool the agent may call. The caller supplies them (the engine's tools, adapted). */
export type AgentTool = LoopTool;

export interface AgentDeps {
  chat: ChatModel;
  prompts: PromptLibrary;
  tools: AgentTool[];
  /** Model calls at most, the forced final answer included; default {@link AGENT_MAX_TURNS}. */
  maxTurns?: number;
  /** Receives a `tool` event per tool call as it starts, and the answer's `text`. */
  onEvent?: (e: OracleEvent) => void;
  signal?: AbortSignal;
  /** Longer tool results are cut, with a note; default {@link DEFAULT_MAX_TOOL_RESULT_CHARS}. */
  maxToolResultChars?: number;
}

/** One tool call of an agent run, for `--explain` and the session log. */
export interface AgentToolCallLog {
  name: string;
  /** The raw JSON arguments the model wrote. */
  args: string;
  /** False when the tool was unknown, the arguments invalid, or the tool failed. */
  ok: boolean;
  /** Characters of the tool's whole answer, before any cut. */
  chars: number;
  ms: number;
}

export interface AgentResult {
  /** The final answer (for a streamed forced answer, the concatenation of its `text` events). */
  text: string;
  /** Citations that point into the context or at a location a tool returned, in order of first use. */
  citations: Citation[];
  /** Citations (as written) that point at nothing the model was shown. */
  unknownCitations: string[];
  /** Model calls made. */
  turns: number;
  toolCalls: AgentToolCallLog[];
  /** `answer`: the model chose to answer; `max_turns`: it was made to, its tools withdrawn. */
  stopped: 'answer' | 'max_turns';
  model: string;
  /** Summed over the turns that reported usage; absent when none did. */
  usage?: ChatUsage;
  ms: number;
}

/** The opening messages: `oracle-agent` (tools, rules, the initial context), then the question. */
export function agentMessages(req: SynthesisRequest, tools: readonly AgentTool[], maxTurns: number, prompts: PromptLibrary): ChatMessage[] {
  const toolList = tools.map((t) => `- ${t.name}: ${t.description.replace(/\s+/g, ' ').trim()}`).join('\n');
  return [
    {
      role: 'system',
      content: prompts.render('oracle-agent', {
        tools: toolList || '- (none: answer from the context)',
        max_turns: maxTurns,
        max_words: ANSWER_MAX_WORDS,
        not_found: NOT_FOUND,
        question_type: req.analysis.type,
        conversation: req.conversation?.trim() || '(none)',
        repo_map: repoMapText(req.context),
        context: formatContext(req.context),
      }),
    },
    { role: 'user', content: req.question.trim() },
  ];
}

/**
 * Runs the agent loop on one question. Throws `LLM_FAILED` when the model fails or ends
 * without any answer text, `CANCELLED` on abort; never throws for a tool's failure.
 */
export async function runAgent(req: SynthesisRequest, deps: AgentDeps): Promise<AgentResult> {
  const started = Date.now();
  const maxTurns = Math.max(1, Math.floor(deps.maxTurns ?? AGENT_MAX_TURNS));
  const run = await runToolLoop({
    chat: deps.chat,
    messages: agentMessages(req, deps.tools, maxTurns, deps.prompts),
    tools: deps.tools,
    maxTurns,
    maxToolResultChars: Math.max(200, Math.floor(deps.maxToolResultChars ?? DEFAULT_MAX_TOOL_RESULT_CHARS)),
    lastTurn: 'answer',
    // The agent's tools only read: the calls of one turn are independent by construction.
    concurrentCalls: true,
    onToolCall: (call) => deps.onEvent?.({ type: 'tool', name: call.name, args: call.arguments }),
    onText: (text) => deps.onEvent?.({ type: 'text', text }),
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  if (run.stopped === 'model_failed' && run.error) throw run.error;
  const { text, turns } = run;
  if (!text.trim()) {
    throw new VltError('LLM_FAILED', `language model ${deps.chat.model} ended the agent run without an answer after ${turns} turn${turns === 1 ? '' : 's'}`, { model: deps.chat.model, turns });
  }
  // Citations may point into the context or at any location a tool's whole answer named.
  const shown: CitableLocation[] = run.calls.flatMap((c) => (c.output !== undefined ? locationsInText(c.output) : []));
  const { valid, unknown } = checkCitations(text, req.context, shown);
  const toolCalls: AgentToolCallLog[] = run.calls.map((c) => ({ name: c.name, args: c.args, ok: c.ok, chars: c.chars, ms: c.ms }));
  const result: AgentResult = { text, citations: valid, unknownCitations: unknown, turns, toolCalls, stopped: run.stopped === 'answer' ? 'answer' : 'max_turns', model: deps.chat.model, ms: Date.now() - started };
  if (run.usage) result.usage = run.usage;
  return result;
}
