/**
 * The chat's bridge inside a VS Code webview: requests are `{type: 'request', id, method,
 * params}` messages answered by `{type: 'response', id, result | error}`; a question's progress
 * arrives as `{type: 'askEvent', askId, event}`; the extension's commands as `{type: 'command'}`.
 * The extension (`src/vscode/chat-view.ts`) is the other end.
 */
import type { ChatHostToView, ChatViewMethod, ChatViewRequests, ChatViewToHost } from '../../src/protocol/webview';
import type { AskEvent, AskHandle, AskParams, Bridge, ChatCommand } from './bridge';
import { newerState } from './state';

interface VsCodeApi {
  postMessage(msg: ChatViewToHost): void;
  getState(): unknown;
  setState(s: unknown): void;
}

export function vscodeBridge(api: VsCodeApi): Bridge {
  let next = 1;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  const streams = new Map<string, (e: AskEvent) => void>();
  let onCommand: (c: ChatCommand) => void = () => {};

  window.addEventListener('message', (ev: MessageEvent<ChatHostToView>) => {
    const msg = ev.data;
    if (msg.type === 'response') {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (!p) return;
      if (msg.error !== undefined) p.reject(new Error(msg.error));
      else p.resolve(msg.result);
    } else if (msg.type === 'askEvent') {
      streams.get(msg.askId)?.(msg.event);
    } else if (msg.type === 'command') {
      onCommand(msg.command);
    }
  });

  /** One request of the protocol's map: its parameters and result are the map's. */
  const request = <M extends ChatViewMethod>(method: M, ...params: ChatViewRequests[M]['params'] extends undefined ? [] : [ChatViewRequests[M]['params']]): Promise<ChatViewRequests[M]['result']> =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      api.postMessage({ type: 'request', id, method, ...(params.length ? { params: params[0] } : {}) } as ChatViewToHost);
    });

  return {
    kind: 'vscode',
    ask(params: AskParams, onEvent): AskHandle {
      const askId = params.askId ?? `ask-${Date.now()}-${next}`;
      streams.set(askId, onEvent);
      const answer = request('ask', { ...params, askId }).finally(() => streams.delete(askId));
      return { answer, cancel: () => api.postMessage({ type: 'cancel', askId }) };
    },
    sessions: () => request('sessions'),
    useSession: (id) => request('useSession', id !== undefined ? { id } : {}),
    sessionEvents: (id) => request('sessionEvents', id !== undefined ? { id } : {}),
    citedLines: (items) => request('citedLines', { items }),
    openCitation: async (citation) => {
      await request('openCitation', { citation });
      return null;
    },
    openExternal: (url) => api.postMessage({ type: 'openExternal', url }),
    workspacePaths: (uris) => request('workspacePaths', { uris }),
    models: () => request('models'),
    selectModel: (id) => request('selectModel', { id }),
    // Two copies: the webview's own state, and the extension's file, which a window reload
    // cannot lose (a browser workbench may not flush the webview's state before it unloads).
    loadState: async () => newerState(api.getState(), await request('loadState').catch(() => undefined)),
    saveState: (s) => {
      api.setState(s);
      api.postMessage({ type: 'saveState', state: s });
    },
    onCommand: (fn) => {
      onCommand = fn;
      api.postMessage({ type: 'ready' });
    },
    log: (level, message) => api.postMessage({ type: 'log', level, message }),
  };
}
