/**
 * The chat-model port: the narrow interface through which the engine talks to a language
 * model. Thread summaries, context compression, the Librarian and the oracle all depend on
 * this interface only; `openai-chat.ts` implements it over any OpenAI-compatible endpoint and
 * tests may implement it directly.
 */

/** A function the model may call: a name, a description for the model, JSON-schema parameters. */
export interface ChatTool {
  name: string;
  description: string;
  /** A JSON schema of type `object` describing the arguments. */
  parameters: Record<string, unknown>;
}

/** A call the model asked for. `arguments` is the raw JSON text the model produced. */
export interface ChatToolCall {
  id: string;
  name: string;
  arguments: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ChatToolCall[] }
  /** The result of one tool call, answered by id. */
  | { role: 'tool'; toolCallId: string; content: string };

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Functions the model may call; absent or empty means a plain completion. */
  tools?: ChatTool[];
  /** Upper bound on the tokens of the reply. */
  maxTokens?: number;
  temperature?: number;
  signal?: AbortSignal;
}

export interface ChatResult {
  /** The reply text; empty when the model only called tools. */
  text: string;
  toolCalls: ChatToolCall[];
  /** `stop`, `tool_calls`, `length`, … as the endpoint reported it. */
  finishReason: string;
  /** Absent when the endpoint reports none. */
  usage?: ChatUsage;
}

/** One event of a streamed completion: text as it arrives, then the whole result once. */
export type ChatStreamEvent = { type: 'text'; text: string } | { type: 'done'; result: ChatResult };

export interface ChatModel {
  /** The model name, for logs and for keys of cached artifacts. */
  readonly model: string;
  /**
   * One completion. Throws VltError `LLM_FAILED` when the endpoint fails for good (after its
   * retries) and `CANCELLED` when `signal` aborts.
   */
  complete(request: ChatRequest): Promise<ChatResult>;
  /**
   * The same completion, streamed: `text` events carry deltas in order, and the last event is
   * `done` with the assembled result (tool calls included). Errors as for {@link complete}.
   */
  stream(request: ChatRequest): AsyncIterable<ChatStreamEvent>;
}
