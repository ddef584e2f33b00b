/**
 * {@link ChatModel} over any OpenAI-compatible `/chat/completions` endpoint (OpenRouter,
 * OpenAI, Ollama, LM Studio, llama.cpp), with the official `openai` client.
 *
 * Retries and errors follow `embeddings.ts` on purpose, so that both clients of the same
 * endpoint behave alike: the client itself retries 408, 409, 429, 5xx, connection failures
 * and timeouts, honouring `Retry-After`/`retry-after-ms` and otherwise backing off
 * exponentially (0.5 s doubling to 8 s, with jitter); it never retries other 4xx. This
 * module only sets `maxRetries` and `timeout`, races each request against the abort signal
 * (the client's back-off sleep ignores it), validates the response shape, and turns every
 * failure into a VltError `LLM_FAILED` (or `CANCELLED`) with a message a user can act on.
 */
import type OpenAI from 'openai';
import type { VltConfig } from '../config';
import { cancelledError, raceAbort } from '../abort';
import { VltError } from '../errors';
import { createOpenAIClient, openAIEndpoint, translateOpenAIError, type OpenAIEndpoint } from '../openai-client';
import { silentLogger, type Logger } from '../ports';
import type { ChatMessage, ChatModel, ChatRequest, ChatResult, ChatStreamEvent, ChatTool, ChatToolCall, ChatUsage } from './chat';

/**
 * Default per-attempt timeout. A completion takes far longer than an embedding: a summary of a
 * long thread may stream for a minute on a slow model.
 */
export const DEFAULT_CHAT_TIMEOUT_MS = 120_000;

/** Retries after the first attempt; about 15 s of back-off in all, as for embeddings. */
export const DEFAULT_CHAT_MAX_RETRIES = 5;

/** The endpoint every default configuration points at; without a key it cannot work. */
const DEFAULT_REMOTE_BASE_URL = 'https://openrouter.ai/api/v1';

export interface OpenAIChatModelOptions {
  /** Base URL including its `/v1` (or equivalent) prefix. */
  baseUrl: string;
  model: string;
  /**
   * The API key. When missing a placeholder is sent, so keyless local servers work; the client
   * never reads `OPENAI_API_KEY` by itself because the configuration resolves the key chain.
   */
  apiKey?: string | undefined;
  timeoutMs?: number | undefined;
  maxRetries?: number | undefined;
  /** Default sampling temperature; a request may override it. */
  temperature?: number | undefined;
  logger?: Logger | undefined;
}

export class OpenAIChatModel implements ChatModel {
  readonly model: string;
  private readonly client: OpenAI;
  private readonly endpoint: OpenAIEndpoint;
  private readonly temperature: number | undefined;

  constructor(opts: OpenAIChatModelOptions) {
    this.model = opts.model;
    this.endpoint = openAIEndpoint(opts, { timeoutMs: DEFAULT_CHAT_TIMEOUT_MS, maxRetries: DEFAULT_CHAT_MAX_RETRIES });
    this.temperature = opts.temperature;
    this.client = createOpenAIClient(this.endpoint);
  }

  async complete(request: ChatRequest): Promise<ChatResult> {
    const { signal } = request;
    if (signal?.aborted) throw cancelled();
    let raw: unknown;
    try {
      const pending = this.client.chat.completions.create(
        { ...this.body(request), stream: false },
        { signal, timeout: this.endpoint.timeoutMs, maxRetries: this.endpoint.maxRetries },
      );
      raw = await raceAbort(pending, signal, 'language model call');
    } catch (e) {
      throw this.translateError(e, signal);
    }
    return this.validate(raw);
  }

  async *stream(request: ChatRequest): AsyncIterable<ChatStreamEvent> {
    const { signal } = request;
    if (signal?.aborted) throw cancelled();
    let text = '';
    let finishReason = 'stop';
    let usage: ChatUsage | undefined;
    // Tool calls arrive in pieces keyed by index: the first piece names the call, the rest
    // append to its arguments.
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    try {
      const stream = await raceAbort(
        this.client.chat.completions.create(
          { ...this.body(request), stream: true, stream_options: { include_usage: true } },
          { signal, timeout: this.endpoint.timeoutMs, maxRetries: this.endpoint.maxRetries },
        ),
        signal,
        'language model call',
      );
      for await (const chunk of stream) {
        if (chunk.usage) usage = toUsage(chunk.usage);
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        if (choice.finish_reason) finishReason = choice.finish_reason;
        const delta = choice.delta;
        if (typeof delta?.content === 'string' && delta.content.length > 0) {
          text += delta.content;
          yield { type: 'text', text: delta.content };
        }
        for (const piece of delta?.tool_calls ?? []) {
          const at = piece.index;
          const call = (calls[at] ??= { id: '', name: '', arguments: '' });
          if (piece.id) call.id = piece.id;
          if (piece.function?.name) call.name += piece.function.name;
          if (piece.function?.arguments) call.arguments += piece.function.arguments;
        }
      }
    } catch (e) {
      throw this.translateError(e, signal);
    }
    const toolCalls: ChatToolCall[] = calls.filter((c) => c !== undefined && c.name !== '').map((c, i) => ({ id: c.id || `call_${i}`, name: c.name, arguments: c.arguments }));
    const result: ChatResult = { text, toolCalls, finishReason };
    if (usage) result.usage = usage;
    yield { type: 'done', result };
  }

  private body(request: ChatRequest) {
    const tools = request.tools ?? [];
    const temperature = request.temperature ?? this.temperature;
    return {
      model: this.model,
      messages: request.messages.map(toOpenAIMessage),
      ...(tools.length ? { tools: tools.map(toOpenAITool), tool_choice: 'auto' as const } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    };
  }

  /** Checks the response shape; a proxy or a local server may answer with anything. */
  private validate(raw: unknown): ChatResult {
    const fail = (why: string): VltError =>
      new VltError('LLM_FAILED', `language model endpoint ${this.endpoint.baseUrl} returned an invalid response: ${why}`, { model: this.model, baseUrl: this.endpoint.baseUrl });
    if (typeof raw !== 'object' || raw === null) throw fail('expected a JSON object');
    const choices = (raw as { choices?: unknown }).choices;
    if (!Array.isArray(choices) || choices.length === 0) throw fail('missing "choices"');
    const choice = choices[0] as { message?: unknown; finish_reason?: unknown } | undefined;
    const message = choice?.message as { content?: unknown; tool_calls?: unknown } | undefined;
    if (typeof message !== 'object' || message === null) throw fail('choices[0].message is missing');
    if (message.content !== null && message.content !== undefined && typeof message.content !== 'string') throw fail('message content is not text');
    const toolCalls: ChatToolCall[] = [];
    if (message.tool_calls !== undefined && message.tool_calls !== null) {
      if (!Array.isArray(message.tool_calls)) throw fail('tool_calls is not an array');
      message.tool_calls.forEach((tc: unknown, i) => {
        const fn = (tc as { function?: { name?: unknown; arguments?: unknown } }).function;
        if (typeof fn?.name !== 'string') throw fail(`tool_calls[${i}] has no function name`);
        const id = (tc as { id?: unknown }).id;
        toolCalls.push({ id: typeof id === 'string' && id ? id : `call_${i}`, name: fn.name, arguments: typeof fn.arguments === 'string' ? fn.arguments : '' });
      });
    }
    const usage = (raw as { usage?: unknown }).usage;
    const result: ChatResult = {
      text: typeof message.content === 'string' ? message.content : '',
      toolCalls,
      finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : toolCalls.length ? 'tool_calls' : 'stop',
    };
    if (typeof usage === 'object' && usage !== null) result.usage = toUsage(usage as OpenAI.CompletionUsage);
    return result;
  }

  private translateError(e: unknown, signal: AbortSignal | undefined): VltError {
    return translateOpenAIError(e, signal, this.endpoint, { code: 'LLM_FAILED', endpoint: 'language model endpoint', call: 'language model call' });
  }
}

/**
 * The chat model the configuration describes, or undefined when none is usable: no API key
 * for the default remote endpoint. A configured non-default endpoint without a key is taken
 * as a keyless local server (Ollama, LM Studio, llama.cpp).
 */
export function createChatModel(config: VltConfig, logger: Logger = silentLogger): ChatModel | undefined {
  const { llm } = config;
  const hasKey = llm.apiKey !== undefined && llm.apiKey !== '';
  if (!hasKey && normalizeUrl(llm.baseUrl) === normalizeUrl(DEFAULT_REMOTE_BASE_URL)) return undefined;
  return new OpenAIChatModel({ baseUrl: llm.baseUrl, model: llm.model, apiKey: llm.apiKey, logger });
}

function normalizeUrl(url: string): string {
  return url.trim().replace(/\/+$/, '').toLowerCase();
}

function toOpenAIMessage(m: ChatMessage): OpenAI.ChatCompletionMessageParam {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content };
    case 'user':
      return { role: 'user', content: m.content };
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        ...(m.toolCalls?.length
          ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) }
          : {}),
      };
  }
}

function toOpenAITool(t: ChatTool): OpenAI.ChatCompletionTool {
  return { type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } };
}

function toUsage(u: Partial<OpenAI.CompletionUsage>): ChatUsage {
  const promptTokens = Number(u.prompt_tokens ?? 0);
  const completionTokens = Number(u.completion_tokens ?? 0);
  return { promptTokens, completionTokens, totalTokens: Number(u.total_tokens ?? promptTokens + completionTokens) };
}

function cancelled(cause?: unknown): VltError {
  return cancelledError('language model call', cause);
}

