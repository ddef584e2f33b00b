/**
 * The engine's ChatModel port over the editor's language models (VS Code's Language Model API:
 * Copilot and whatever else the user installed). A completion is a `vlt/editor.chat` request to
 * the client; its text streams back as `vlt/editor.chatDelta` notifications, which the client
 * sends before its response, so a stream ends when the response arrives. Aborting the signal
 * cancels the request, and the client cancels the model's.
 *
 * The editor decides everything a user must consent to: which models exist, whether this
 * extension may use them (its consent prompt), quotas. A refusal is a VltError `LLM_FAILED`
 * with the editor's reason, which the oracle turns into the evidence brief and says why.
 */
import { randomUUID } from 'node:crypto';
import { CancellationTokenSource, type CancellationToken } from 'vscode-languageserver-protocol';
import { cancelledError } from '../core/abort';
import { VltError, errorMessage } from '../core/errors';
import type { ChatModel, ChatRequest, ChatResult, ChatStreamEvent } from '../core/llm/chat';
import type { EditorModels, EditorModelInfo } from '../server/chat';
import { editorChatModelsRequest, editorChatRequest, type EditorAnswer, type EditorChatModelInfo, type EditorChatParams, type EditorChatResult } from '../protocol/lsp';

/** How long the editor may take to list its models. */
const LIST_TIMEOUT_MS = 5000;
/** Why the extension asks, shown in the editor's consent prompt. */
const JUSTIFICATION = 'Vlt Oracle answers your questions about this workspace from the code, notes and threads it retrieved.';

export interface EditorModelsConnection {
  sendRequest<R>(method: string, params: unknown, token?: CancellationToken): Promise<R>;
}

export class EditorLanguageModels implements EditorModels {
  /** Text of each completion in flight, by request id. */
  private readonly streams = new Map<string, (text: string) => void>();

  constructor(private readonly connection: EditorModelsConnection) {}

  /** Routes one `vlt/editor.chatDelta` notification to its completion; late ones are dropped. */
  onDelta(p: { requestId: string; text: string }): void {
    this.streams.get(p.requestId)?.(p.text);
  }

  async list(): Promise<EditorModelInfo[]> {
    const cancel = new CancellationTokenSource();
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = await Promise.race([
        this.connection.sendRequest<EditorAnswer<EditorChatModelInfo[]>>(editorChatModelsRequest.method, undefined, cancel.token),
        new Promise<EditorAnswer<EditorChatModelInfo[]>>((resolve) => {
          timer = setTimeout(() => resolve({ ok: false, reason: `the editor did not list its models within ${LIST_TIMEOUT_MS} ms` }), LIST_TIMEOUT_MS);
        }),
      ]);
      if (!answer.ok) throw new VltError('LLM_FAILED', answer.reason);
      return answer.value.map((m) => ({ id: m.id, name: m.name, vendor: m.vendor, family: m.family }));
    } finally {
      clearTimeout(timer);
      cancel.cancel();
      cancel.dispose();
    }
  }

  model(info: EditorModelInfo): ChatModel {
    return new EditorChatModel(this, info);
  }

  /** One completion: deltas to `onText` as they come, the editor's result at the end. */
  async complete(model: string, request: ChatRequest, onText: (text: string) => void): Promise<ChatResult> {
    const { signal } = request;
    if (signal?.aborted) throw cancelledError("the editor's model", signal.reason);
    const requestId = randomUUID();
    const cancel = new CancellationTokenSource();
    const onAbort = () => cancel.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    this.streams.set(requestId, onText);
    const params: EditorChatParams = {
      requestId,
      model,
      messages: request.messages,
      ...(request.tools?.length ? { tools: request.tools } : {}),
      ...(request.maxTokens ? { maxTokens: request.maxTokens } : {}),
      justification: JUSTIFICATION,
    };
    try {
      const answer = await this.connection.sendRequest<EditorAnswer<EditorChatResult>>(editorChatRequest.method, params, cancel.token);
      if (signal?.aborted) throw cancelledError("the editor's model", signal.reason);
      if (!answer.ok) throw new VltError('LLM_FAILED', answer.reason);
      return answer.value;
    } catch (e) {
      if (signal?.aborted) throw cancelledError("the editor's model", signal.reason);
      if (e instanceof VltError) throw e;
      throw new VltError('LLM_FAILED', `the editor's model failed: ${errorMessage(e)}`, undefined, { cause: e });
    } finally {
      this.streams.delete(requestId);
      signal?.removeEventListener('abort', onAbort);
      cancel.dispose();
    }
  }
}

/** One editor model as the engine's ChatModel. */
class EditorChatModel implements ChatModel {
  readonly model: string;

  constructor(
    private readonly models: EditorLanguageModels,
    private readonly info: EditorModelInfo,
  ) {
    this.model = info.name;
  }

  complete(request: ChatRequest): Promise<ChatResult> {
    return this.models.complete(this.info.id, request, () => {});
  }

  async *stream(request: ChatRequest): AsyncIterable<ChatStreamEvent> {
    // Deltas arrive as notifications while the request is pending: queue them, and wake the
    // loop below on each one and on the end.
    const queued: string[] = [];
    let wake: (() => void) | undefined;
    let settled: { ok: true; result: ChatResult } | { ok: false; error: unknown } | undefined;
    void this.models
      .complete(this.info.id, request, (text) => {
        queued.push(text);
        wake?.();
      })
      .then(
        (result) => (settled = { ok: true, result }),
        (error: unknown) => (settled = { ok: false, error }),
      )
      .finally(() => wake?.());
    for (;;) {
      while (queued.length > 0) yield { type: 'text', text: queued.shift()! };
      if (settled) break;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
    while (queued.length > 0) yield { type: 'text', text: queued.shift()! };
    if (!settled.ok) throw settled.error;
    yield { type: 'done', result: settled.result };
  }
}
