/**
 * The oracle's agent mode: the model starts from the assembled context and may call the
 * engine's read-only tools (search, navigation, the repository map, file ranges, notes,
 * threads) for up to `maxTurns` model calls before it answers. Same loop shape as the
 * Librarian: every tool failure, unknown tool or malformed argument goes back to the model as
 * the tool's answer (`{"error": …}`) so it can correct itself; only a failure of the model
 * (`LLM_FAILED`) or a cancellation ends the loop, and both reach the caller, which degrades
 * to the extractive brief.
 *
 * Tool turns use `complete` (text a model writes next to its tool calls is thinking aloud,
 * not the answer); an answer given on such a turn is emitted as one `text` event. The last
 * allowed turn is made without tools and streamed, which forces an answer from what the
 * model has gathered.
 *
 * Citations are checked against the initial context plus every location a tool result
 * named (see `locationsInText` in `citations.ts`).
 */
import { VltError, toVltError } from '../errors';
import type { ChatMessage, ChatModel, ChatTool, ChatToolCall, ChatUsage } from '../llm/chat';
import type { PromptLibrary } from '../llm/prompts';
import { checkCitations, locationsInText, type CitableLocation } from './citations';
import { ANSWER_MAX_WORDS, NOT_FOUND, formatContext, repoMapText, type SynthesisRequest } from './synthesize';
import type { Citation, OracleEvent } from './types';

export const AGENT_MAX_TURNS = 10;

/** A tool answer longer than this is cut: the model needs the gist, and its context is finite. */
export const DEFAULT_MAX_TOOL_RESULT_CHARS = 12_000;

/** A tool the agent may call. The caller supplies them (the engine's tools, adapted). */
export interface AgentTool {
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** A JSON schema of type `object` describing the arguments. */
  parameters: Record<string, unknown>;
  /**
   * Runs the tool on the parsed JSON arguments and returns the text the model reads. Throws a
   * VltError on bad input or failure; the loop hands the error to the model.
   */
  run(args: unknown, signal?: AbortSignal): Promise<string>;
}

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

/** The tools as the model sees them. */
function chatTools(tools: readonly AgentTool[]): ChatTool[] {
  return tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
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
  const maxChars = Math.max(200, Math.floor(deps.maxToolResultChars ?? DEFAULT_MAX_TOOL_RESULT_CHARS));
  const messages = agentMessages(req, deps.tools, maxTurns, deps.prompts);
  const tools = chatTools(deps.tools);
  const signal = deps.signal;
  const log: AgentToolCallLog[] = [];
  const shown: CitableLocation[] = [];
  let usage: ChatUsage | undefined;
  const addUsage = (u: ChatUsage | undefined): void => {
    if (!u) return;
    usage = usage
      ? { promptTokens: usage.promptTokens + u.promptTokens, completionTokens: usage.completionTokens + u.completionTokens, totalTokens: usage.totalTokens + u.totalTokens }
      : { ...u };
  };

  let text = '';
  let stopped: AgentResult['stopped'] = 'answer';
  let turns = 0;
  for (let turn = 1; turn <= maxTurns; turn++) {
    if (signal?.aborted) throw new VltError('CANCELLED', 'oracle agent cancelled');
    turns = turn;
    if (turn === maxTurns) {
      // The last turn: no tools, so the model must answer with what it has gathered.
      stopped = 'max_turns';
      for await (const ev of deps.chat.stream({ messages, temperature: 0, ...(signal ? { signal } : {}) })) {
        if (ev.type === 'text') {
          text += ev.text;
          deps.onEvent?.({ type: 'text', text: ev.text });
        } else {
          addUsage(ev.result.usage);
        }
      }
      break;
    }
    const res = await deps.chat.complete({ messages, tools, temperature: 0, ...(signal ? { signal } : {}) });
    addUsage(res.usage);
    if (res.toolCalls.length === 0) {
      text = res.text;
      if (text) deps.onEvent?.({ type: 'text', text });
      break;
    }
    messages.push({ role: 'assistant', content: res.text || null, toolCalls: res.toolCalls });
    // Calls of one turn are independent by construction (the model wrote them together).
    const answers = await Promise.all(res.toolCalls.map((call) => runTool(call, deps, maxChars)));
    res.toolCalls.forEach((call, i) => {
      const a = answers[i];
      if (!a) return;
      log.push(a.log);
      shown.push(...a.locations);
      messages.push({ role: 'tool', toolCallId: call.id, content: a.content });
    });
  }

  if (!text.trim()) {
    throw new VltError('LLM_FAILED', `language model ${deps.chat.model} ended the agent run without an answer after ${turns} turn${turns === 1 ? '' : 's'}`, { model: deps.chat.model, turns });
  }
  const { valid, unknown } = checkCitations(text, req.context, shown);
  const result: AgentResult = { text, citations: valid, unknownCitations: unknown, turns, toolCalls: log, stopped, model: deps.chat.model, ms: Date.now() - started };
  if (usage) result.usage = usage;
  return result;
}

interface ToolAnswer {
  /** What the model reads: the (cut) result or `{"error": …}`. */
  content: string;
  log: AgentToolCallLog;
  /** Locations the whole result named; empty for a failed call. */
  locations: CitableLocation[];
}

async function runTool(call: ChatToolCall, deps: AgentDeps, maxChars: number): Promise<ToolAnswer> {
  deps.onEvent?.({ type: 'tool', name: call.name, args: call.arguments });
  const started = Date.now();
  const fail = (message: string): ToolAnswer => {
    const content = JSON.stringify({ error: message });
    return { content, locations: [], log: { name: call.name, args: call.arguments, ok: false, chars: content.length, ms: Date.now() - started } };
  };
  const tool = deps.tools.find((t) => t.name === call.name);
  if (!tool) {
    const names = deps.tools.map((t) => t.name).join(', ') || '(none)';
    return fail(`USAGE: unknown tool ${call.name}; use one of ${names}`);
  }
  let args: unknown;
  try {
    args = call.arguments.trim() ? JSON.parse(call.arguments) : {};
  } catch {
    return fail('USAGE: the arguments are not valid JSON');
  }
  let out: string;
  try {
    const raw: unknown = await tool.run(args, deps.signal);
    out = typeof raw === 'string' ? raw : JSON.stringify(raw) ?? '';
  } catch (e) {
    const err = toVltError(e);
    // A cancellation ends the run; every other failure is the model's to read and correct.
    if (err.code === 'CANCELLED' || deps.signal?.aborted) throw err.code === 'CANCELLED' ? err : new VltError('CANCELLED', 'oracle agent cancelled', undefined, { cause: e });
    return fail(`${err.code}: ${err.message}`);
  }
  const content =
    out.length > maxChars ? `${out.slice(0, maxChars)}\n… [cut: the first ${maxChars} of ${out.length} characters; ask for less (a narrower range, fewer results) to see the rest]` : out;
  return { content, locations: locationsInText(out), log: { name: call.name, args: call.arguments, ok: true, chars: out.length, ms: Date.now() - started } };
}
