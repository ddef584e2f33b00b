/**
 * The one tool loop of every subagent (the oracle's agent mode, the Librarian): the model is
 * called with the tools, the tools it asks for run, their answers go back, until it answers
 * without calling a tool or its turns run out.
 *
 * Every tool failure, unknown tool or malformed argument goes back to the model as the tool's
 * answer (`{"error": "CODE: message"}`) so it can correct itself; a cancellation ends the loop
 * with CANCELLED, and a failure of the model ends it with `stopped: 'model_failed'` (the caller
 * decides what that means). Tool turns use `complete`: text a model writes next to its tool
 * calls is thinking aloud, not the answer.
 */
import { VltError, toVltError } from '../errors';
import type { ChatMessage, ChatModel, ChatTool, ChatToolCall, ChatUsage } from './chat';

/** A tool the loop may run. */
export interface LoopTool {
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** A JSON schema of type `object` describing the arguments. */
  parameters: Record<string, unknown>;
  /** Runs the tool on the parsed JSON arguments; throws a VltError on bad input or failure. */
  run(args: unknown, signal?: AbortSignal): Promise<string>;
}

export interface ToolLoopOptions {
  chat: ChatModel;
  /** The opening messages (system prompt, task); the loop appends to a copy. */
  messages: readonly ChatMessage[];
  tools: readonly LoopTool[];
  /** Model calls at most. */
  maxTurns: number;
  /** Longer tool answers are cut, saying so, so that the model asks for less. */
  maxToolResultChars: number;
  /**
   * `answer`: the last turn is made without tools and streamed, which forces an answer from
   * what the model has gathered (the oracle's agent). `tools`: every turn offers the tools, and
   * running out of turns ends the loop without an answer (the Librarian).
   */
  lastTurn: 'answer' | 'tools';
  /** The calls of one turn run at once (read-only tools) or one after another (tools that write). */
  concurrentCalls: boolean;
  /** A tool call as it starts. */
  onToolCall?: (call: ChatToolCall) => void;
  /** The answer's text as it is written (one event for a non-streamed answer). */
  onText?: (text: string) => void;
  signal?: AbortSignal;
}

/** One tool call of a run. */
export interface LoopToolCall {
  name: string;
  /** The raw JSON arguments the model wrote. */
  args: string;
  /** False when the tool was unknown, the arguments invalid, or the tool failed. */
  ok: boolean;
  /** The tool's whole answer before any cut (absent when the call failed). */
  output?: string;
  /** Characters of what the tool answered, before any cut. */
  chars: number;
  ms: number;
}

export interface ToolLoopResult {
  /** The final answer ('' when the loop ended without one). */
  text: string;
  /** Model calls made. */
  turns: number;
  calls: LoopToolCall[];
  /**
   * `answer`: the model chose to answer; `max_turns`: its turns ran out (with `lastTurn:
   * 'answer'` it was made to answer); `model_failed`: the model failed, see `error`.
   */
  stopped: 'answer' | 'max_turns' | 'model_failed';
  error?: VltError;
  /** Summed over the turns that reported usage; absent when none did. */
  usage?: ChatUsage;
}

/** Runs the loop. Throws only CANCELLED (on abort); every other failure is in the result. */
export async function runToolLoop(opts: ToolLoopOptions): Promise<ToolLoopResult> {
  const { chat, signal } = opts;
  const messages = [...opts.messages];
  const chatTools: ChatTool[] = opts.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
  const calls: LoopToolCall[] = [];
  const result: ToolLoopResult = { text: '', turns: 0, calls, stopped: 'max_turns' };
  const addUsage = (u: ChatUsage | undefined): void => {
    if (!u) return;
    const t = result.usage;
    result.usage = t ? { promptTokens: t.promptTokens + u.promptTokens, completionTokens: t.completionTokens + u.completionTokens, totalTokens: t.totalTokens + u.totalTokens } : { ...u };
  };
  const modelFailed = (e: unknown): ToolLoopResult => {
    const err = toVltError(e, 'LLM_FAILED');
    if (err.code === 'CANCELLED' || signal?.aborted) throw err.code === 'CANCELLED' ? err : new VltError('CANCELLED', 'cancelled', undefined, { cause: e });
    return { ...result, stopped: 'model_failed', error: err };
  };

  for (let turn = 1; turn <= opts.maxTurns; turn++) {
    if (signal?.aborted) throw new VltError('CANCELLED', 'cancelled');
    result.turns = turn;
    if (turn === opts.maxTurns && opts.lastTurn === 'answer') {
      // The last turn: no tools, so the model must answer with what it has gathered.
      try {
        for await (const ev of chat.stream({ messages, temperature: 0, ...(signal ? { signal } : {}) })) {
          if (ev.type === 'text') {
            result.text += ev.text;
            opts.onText?.(ev.text);
          } else addUsage(ev.result.usage);
        }
      } catch (e) {
        return modelFailed(e);
      }
      return result;
    }
    let res;
    try {
      res = await chat.complete({ messages, tools: chatTools, temperature: 0, ...(signal ? { signal } : {}) });
    } catch (e) {
      return modelFailed(e);
    }
    addUsage(res.usage);
    if (res.toolCalls.length === 0) {
      result.text = res.text;
      if (res.text) opts.onText?.(res.text);
      result.stopped = 'answer';
      return result;
    }
    messages.push({ role: 'assistant', content: res.text || null, toolCalls: res.toolCalls });
    const answers: Array<{ content: string; call: LoopToolCall }> = [];
    if (opts.concurrentCalls) answers.push(...(await Promise.all(res.toolCalls.map((c) => runTool(c, opts)))));
    else for (const c of res.toolCalls) answers.push(await runTool(c, opts));
    res.toolCalls.forEach((call, i) => {
      const a = answers[i];
      if (!a) return;
      calls.push(a.call);
      messages.push({ role: 'tool', toolCallId: call.id, content: a.content });
    });
  }
  return result;
}

async function runTool(call: ChatToolCall, opts: ToolLoopOptions): Promise<{ content: string; call: LoopToolCall }> {
  opts.onToolCall?.(call);
  const started = Date.now();
  const fail = (message: string) => {
    const content = JSON.stringify({ error: message });
    return { content, call: { name: call.name, args: call.arguments, ok: false, chars: content.length, ms: Date.now() - started } };
  };
  const tool = opts.tools.find((t) => t.name === call.name);
  if (!tool) return fail(`USAGE: unknown tool ${call.name}; use one of ${opts.tools.map((t) => t.name).join(', ') || '(none)'}`);
  let args: unknown;
  try {
    args = call.arguments.trim() ? JSON.parse(call.arguments) : {};
  } catch {
    return fail('USAGE: the arguments are not valid JSON');
  }
  let out: string;
  try {
    out = await tool.run(args, opts.signal);
  } catch (e) {
    const err = toVltError(e);
    // A cancellation ends the run; every other failure is the model's to read and correct.
    if (err.code === 'CANCELLED' || opts.signal?.aborted) throw err.code === 'CANCELLED' ? err : new VltError('CANCELLED', 'cancelled', undefined, { cause: e });
    return fail(`${err.code}: ${err.message}`);
  }
  const max = opts.maxToolResultChars;
  const content = out.length > max ? `${out.slice(0, max)}\n… [cut: the first ${max} of ${out.length} characters; ask for less (a narrower range, fewer results) to see the rest]` : out;
  return { content, call: { name: call.name, args: call.arguments, ok: true, output: out, chars: out.length, ms: Date.now() - started } };
}
