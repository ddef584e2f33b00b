/**
 * The Oracle chat view: the webview (`webview/chat/`, bundled as dist/chat.js) under a strict
 * Content-Security-Policy, and the extension's end of its bridge. Requests from the view go to
 * the folder's `vlt lsp` server (`vlt/ask` and its `vlt/askEvent` stream, sessions, citations);
 * a Stop cancels the LSP request, which aborts the model and every retrieval path on the
 * server. Citations open in the editor beside the view; notes, threads and commits open as
 * read-only documents.
 */
import * as vscode from 'vscode';
import {
  askRequest,
  citationTargetRequest,
  citedLinesRequest,
  modelsRequest,
  sessionEventsRequest,
  sessionsRequest,
  useSessionRequest,
  type AskParams,
} from '../protocol/lsp';
import type { ChatCommand, ChatHostToView, ChatViewMethod, ChatViewRequests, ChatViewToHost, ModelInfo } from '../protocol/webview';
import { CHAT_SESSION_KEY, type ChatStateStore } from './chat-state-store';
import type { FolderServer } from './server-client';
import { fillWebview } from './webview-html';
import { errorMessage } from './errors';

/** The scheme of the read-only documents a citation opens (notes, threads, commits). */
export const CITATION_SCHEME = 'vlt-oracle';
const MODEL_KEY = 'vlt.chat.model';
/** How long the view's page may take to say it is ready before the view is shown again, and how often at most. */
const PAGE_LOAD_MS = 8000;
const PAGE_RESHOWS = 3;

export interface ChatViewDeps {
  serverFor(uri?: vscode.Uri): FolderServer;
  log: vscode.LogOutputChannel;
  state: vscode.Memento;
  /** The view's state, kept by the extension too (a window reload cannot lose it). */
  store: ChatStateStore;
  documents: Map<string, string>;
  documentsChanged: vscode.EventEmitter<vscode.Uri>;
}

export class ChatViewProvider implements vscode.WebviewViewProvider {
  static readonly viewType = 'vlt.chatView';
  private view: vscode.WebviewView | undefined;
  private ready = false;
  /** How often the view was hidden and shown again because its page did not load. */
  private reshown = 0;
  private readonly queued: ChatCommand[] = [];
  private readonly asks = new Map<string, vscode.CancellationTokenSource>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly deps: ChatViewDeps,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    this.deps.log.info('chat view: resolving');
    const webview = view.webview;
    fillWebview(webview, this.extensionUri, { title: 'Oracle Chat', script: 'chat.js', style: 'chat.css', body: '<div id="app"></div>' });
    // A browser workbench (code-server) restoring views after a reload sometimes never loads a
    // webview's page: its frame stays on the workbench's placeholder, and setting the HTML again
    // does not help. Hiding and showing the sidebar gives the view a new frame, which loads.
    const watchdog = setTimeout(() => {
      if (this.ready || this.view !== view || !view.visible || this.reshown >= PAGE_RESHOWS) return;
      this.reshown++;
      this.deps.log.warn(`chat view: the page did not load in ${PAGE_LOAD_MS / 1000} s; showing the view again`);
      void (async () => {
        await vscode.commands.executeCommand('workbench.action.toggleSidebarVisibility');
        await vscode.commands.executeCommand('workbench.action.toggleSidebarVisibility');
      })().catch((e: unknown) => this.deps.log.warn(`chat view: could not show the view again: ${errorMessage(e)}`));
    }, PAGE_LOAD_MS);
    view.onDidDispose(() => {
      clearTimeout(watchdog);
      if (this.view === view) this.view = undefined;
      for (const c of this.asks.values()) c.cancel();
      this.asks.clear();
    });
    webview.onDidReceiveMessage((msg: ChatViewToHost) => void this.onMessage(webview, msg));
  }

  /** Shows the view and hands it a command (queued until the view has loaded). */
  async command(c: ChatCommand): Promise<void> {
    await vscode.commands.executeCommand(`${ChatViewProvider.viewType}.focus`);
    if (this.view && this.ready) await post(this.view.webview, { type: 'command', command: c });
    else this.queued.push(c);
  }

  /** Tells a loaded view something changed (the editor's models), without showing it. */
  async notify(c: ChatCommand): Promise<void> {
    if (this.view && this.ready) await post(this.view.webview, { type: 'command', command: c });
  }

  private async onMessage(webview: vscode.Webview, msg: ChatViewToHost): Promise<void> {
    if (msg.type === 'ready') {
      this.ready = true;
      this.deps.log.info('chat view: ready');
      for (const c of this.queued.splice(0)) await post(webview, { type: 'command', command: c });
      return;
    }
    if (msg.type === 'cancel') {
      this.asks.get(msg.askId)?.cancel();
      return;
    }
    if (msg.type === 'openExternal') {
      // VS Code asks the user before it opens a link to a site they have not trusted.
      if (/^https?:\/\//i.test(msg.url)) await vscode.env.openExternal(vscode.Uri.parse(msg.url));
      return;
    }
    if (msg.type === 'saveState') {
      await this.deps.store.save(msg.state);
      return;
    }
    if (msg.type === 'log') {
      this.deps.log[msg.level](`chat view: ${String(msg.message).slice(0, 500)}`);
      return;
    }
    try {
      const result = await this.handle(msg.method, msg.params);
      await post(webview, { type: 'response', id: msg.id, result });
    } catch (e) {
      const message = errorMessage(e);
      if (!/CANCELLED/.test(message)) this.deps.log.error(`chat ${msg.method}: ${message}`);
      await post(webview, { type: 'response', id: msg.id, error: message });
    }
  }

  private server(): FolderServer {
    return this.deps.serverFor(vscode.window.activeTextEditor?.document.uri);
  }

  /** Answers one request of the view; its result type is the one the protocol's map names. */
  private handle<M extends ChatViewMethod>(method: M, params: unknown): Promise<ChatViewRequests[M]['result']> {
    const handler = this.handlers[method] as ((p: Record<string, unknown>) => Promise<ChatViewRequests[M]['result']>) | undefined;
    if (!handler) return Promise.reject(new Error(`unknown request ${String(method).slice(0, 100)}`));
    // The page is checked, not trusted: its parameters may be anything.
    return handler(params && typeof params === 'object' ? (params as Record<string, unknown>) : {});
  }

  /** One handler per request of {@link ChatViewRequests}. */
  private readonly handlers: { [M in ChatViewMethod]: (p: Record<string, unknown>) => Promise<ChatViewRequests[M]['result']> } = {
    loadState: async () => (await this.deps.store.load()) ?? null,
    workspacePaths: async (p) => workspacePaths(Array.isArray(p.uris) ? p.uris.map(String) : []),
    ask: async (p) => {
      const ask = p as unknown as AskParams;
      const askId = String(ask.askId ?? '');
      const cts = new vscode.CancellationTokenSource();
      this.asks.set(askId, cts);
      const stream = this.server().onAskEvent(askId, (event) => {
        if (this.view) void post(this.view.webview, { type: 'askEvent', askId, event });
      });
      try {
        const answer = await this.server().client.sendRequest(askRequest, ask, cts.token);
        await this.deps.state.update(CHAT_SESSION_KEY, answer.session);
        return answer;
      } finally {
        stream.dispose();
        this.asks.delete(askId);
        cts.dispose();
      }
    },
    sessions: () => this.server().client.sendRequest(sessionsRequest, {}),
    useSession: async (p) => {
      const r = await this.server().client.sendRequest(useSessionRequest, typeof p.id === 'string' ? { id: p.id } : {});
      await this.deps.state.update(CHAT_SESSION_KEY, r.id);
      return r;
    },
    sessionEvents: (p) => this.server().client.sendRequest(sessionEventsRequest, typeof p.id === 'string' ? { id: p.id } : {}),
    citedLines: (p) => this.server().client.sendRequest(citedLinesRequest, { items: Array.isArray(p.items) ? (p.items as Array<{ path: string; start: number; end: number }>) : [] }),
    openCitation: async (p) => {
      await this.openCitation(String(p.citation ?? ''));
      return null;
    },
    models: () => this.models(),
    selectModel: async (p) => {
      const info = await this.models();
      const id = String(p.id ?? '');
      if (!info.choices.some((c) => c.id === id)) throw new Error(`no model ${id}`);
      await this.deps.state.update(MODEL_KEY, id);
      return { ...info, active: id };
    },
  };

  /** The server's models; the one picked last in this workspace while it is still offered. */
  private async models(): Promise<ModelInfo> {
    const m = await this.server().client.sendRequest(modelsRequest);
    const saved = this.deps.state.get<string>(MODEL_KEY);
    const active = m.choices.some((c) => c.id === saved) ? saved! : m.default;
    return { choices: m.choices, active, ...(m.reason ? { reason: m.reason } : {}) };
  }

  private async openCitation(citation: string): Promise<void> {
    const t = await this.server().client.sendRequest(citationTargetRequest, { citation });
    if (t.kind === 'file') {
      const range = new vscode.Range(Math.max(0, t.start - 1), 0, Math.max(0, t.end - 1), 0);
      await vscode.window.showTextDocument(vscode.Uri.parse(t.uri), { viewColumn: citationColumn(), selection: range, preview: true });
      return;
    }
    const uri = vscode.Uri.from({ scheme: CITATION_SCHEME, path: `/${t.title.replace(/[\\/:*?"<>|#]+/g, '-')}.md` });
    this.deps.documents.set(uri.toString(), t.content);
    this.deps.documentsChanged.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    await vscode.window.showTextDocument(doc, { viewColumn: citationColumn(), preview: true });
  }
}

/**
 * Where a citation opens: beside the file the user has open, or, with no file open, in the editor
 * area itself; "beside" nothing would leave an empty group and squeeze the chat.
 */
function citationColumn(): vscode.ViewColumn {
  return vscode.window.visibleTextEditors.length > 0 ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
}

/** Dropped URIs (file: or a path) as workspace-relative paths; anything outside a workspace folder is left out. */
function workspacePaths(uris: string[]): string[] {
  const out: string[] = [];
  for (const u of uris.slice(0, 10)) {
    let uri: vscode.Uri;
    try {
      uri = /^[a-z][\w+.-]*:/i.test(u) ? vscode.Uri.parse(u, true) : vscode.Uri.file(u);
    } catch {
      continue;
    }
    if (!vscode.workspace.getWorkspaceFolder(uri)) continue;
    out.push(vscode.workspace.asRelativePath(uri, false));
  }
  return out;
}

/** Sends one message of the protocol to the view. */
function post(webview: vscode.Webview, msg: ChatHostToView): Thenable<boolean> {
  return webview.postMessage(msg);
}
