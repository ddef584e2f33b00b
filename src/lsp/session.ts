/**
 * One editor's session of `vlt lsp`: what the connection knows between requests (rust-analyzer's
 * `GlobalState`). It opens the workspace server at `initialize` (or joins the daemon's), builds
 * the index and starts the MCP endpoint at `initialized`, reports the server's status to the
 * client, and closes what it opened when the editor leaves. The request handlers
 * (`handlers.ts`) read it through {@link LspSession.ready} and {@link LspSession.handle}.
 */
import type { CancellationToken, Connection, InitializeParams, InitializeResult } from 'vscode-languageserver/node';
import { DidChangeWatchedFilesNotification, ErrorCodes, LSPErrorCodes, ResponseError, TextDocumentSyncKind } from 'vscode-languageserver/node';
import { fileURLToPath } from 'node:url';
import { version as packageVersion } from '../../package.json';
import { VltError, errorMessage, isVltError, toVltError } from '../core/errors';
import { languageForPath } from '../core/parse/languages';
import type { Logger } from '../core/ports';
import type { ToolInput, ToolName, ToolOutput } from '../core/tools';
import { ChatService } from '../server/chat';
import { WorkspaceServer } from '../server/workspace';
import { didChangeStatusNotification, editorChatDeltaNotification, type InitializationOptions, type ServerStatus } from '../protocol/lsp';
import { Coordinates } from './convert';
import { EditorLanguageModels } from './editor-models';
import { EditorLanguageServers } from './editor-servers';

/** Status notifications are coalesced to at most one per this many milliseconds. */
const STATUS_EVERY_MS = 250;

/** The MCP endpoint the session starts beside the editor when the client asks for one. */
export interface McpEndpoint {
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

export interface LspSessionOptions {
  /**
   * A workspace server already open in this process (the workspace daemon's) that this editor
   * may join, given its initialization options and root; undefined opens one of its own.
   */
  shared?: (init: InitializationOptions, root: string) => Promise<WorkspaceServer | undefined>;
  /** Starts the MCP endpoint over the workspace server (the program gives mcp's; lsp imports no other host). */
  startMcp: (ws: WorkspaceServer, opts: { logger: Logger; port: number }) => Promise<McpEndpoint>;
}

export class LspSession {
  private ws: WorkspaceServer | undefined;
  private coords: Coordinates | undefined;
  /** The client's initialization options. */
  init: InitializationOptions = {};
  /** Who the editor is (`name@version`): the author of its tool calls in the shared session. */
  clientName = 'lsp-client';
  /** Languages no other provider serves in the editor: standard requests answer only for them. */
  private fallback = new Set<string>();
  private mcp: McpEndpoint | undefined;
  /** The MCP endpoint was asked for and could not start. */
  private mcpFailed = false;
  private chat: ChatService | undefined;
  private opening: Promise<WorkspaceServer> | undefined;
  /** Joined a shared server: leave it on shutdown instead of closing it. */
  private detach: (() => void) | undefined;
  private watchFiles = false;
  private statusTimer: NodeJS.Timeout | undefined;
  private lastPush = 0;
  private finished: Promise<void> | undefined;

  constructor(
    private readonly connection: Connection,
    readonly logger: Logger,
    /** Turns the log's debug lines on (the client's `debug` option). */
    private readonly logLevel: { debug: boolean },
    private readonly opts: LspSessionOptions,
  ) {}

  /** The open workspace server and the coordinates of its root; USAGE before `initialize`. */
  ready(): { ws: WorkspaceServer; coords: Coordinates } {
    if (!this.ws || !this.coords) throw new VltError('USAGE', 'the server is not initialized');
    return { ws: this.ws, coords: this.coords };
  }

  /** The workspace server once open, without waiting (file events before it are dropped: the first index reads them). */
  get server(): WorkspaceServer | undefined {
    return this.ws;
  }

  chatService(): ChatService {
    if (!this.chat) throw new VltError('USAGE', 'the server is not initialized');
    return this.chat;
  }

  /**
   * A request handler: waits for the server to open, passes the client's cancellation on as a
   * signal, and answers failures as `CODE: message`.
   */
  handle<P, R>(fn: (p: P, signal: AbortSignal) => Promise<R>): (p: P, token?: CancellationToken) => Promise<R> {
    return async (p, token) => {
      await this.opening;
      const abort = new AbortController();
      const sub = token?.onCancellationRequested(() => abort.abort());
      try {
        return await fn(p, abort.signal);
      } catch (e) {
        throw asResponseError(abort.signal.aborted ? new VltError('CANCELLED', 'the request was cancelled') : e);
      } finally {
        sub?.dispose();
      }
    };
  }

  /**
   * Runs one agent tool for the editor: recorded in the shared session like an agent's call,
   * unless `record` is false (what the editor asks on its own as the user types: the search view).
   */
  callTool<N extends ToolName>(name: N, input: ToolInput<N>, opts: { author?: string; signal?: AbortSignal | undefined; record?: boolean } = {}): Promise<ToolOutput<N>> {
    return this.ready().ws.call(name, input, { author: opts.author ?? this.clientName, ...(opts.signal ? { signal: opts.signal } : {}), ...(opts.record === false ? { record: false } : {}) });
  }

  /** {@link callTool} for a tool the client names at run time (`vlt/tool`). */
  callToolByName(name: string, input: unknown, author: string, signal?: AbortSignal): Promise<object> {
    return this.ready().ws.callByName(name, input, { author, ...(signal ? { signal } : {}) });
  }

  /**
   * Whether standard requests answer for this document: only for the fallback languages, so
   * that the editor never shows a location twice; a client that lists none (Neovim, Helix)
   * gets every language.
   */
  servesDocument(uri: string): boolean {
    if (this.fallback.size === 0) return true;
    const file = uriToPath(uri);
    const lang = file ? languageForPath(file) : undefined;
    return lang !== undefined && this.fallback.has(lang);
  }

  status(): ServerStatus {
    const { ws } = this.ready();
    const s = ws.status();
    // Once the index knows the workspace's languages, only their language servers are listed.
    const present = (lang: string) => !s.index || (s.index.languages[lang] ?? 0) > 0;
    const mcp = this.mcp;
    return {
      state: s.state,
      workspace: ws.root,
      files: s.index?.files ?? 0,
      chunks: s.index?.chunks ?? 0,
      symbols: s.index?.symbols ?? 0,
      generation: s.generation,
      lastUpdate: s.index?.last_update ?? null,
      progress: s.progress,
      partialFiles: s.partialFiles,
      queue: s.queue,
      languageServers: s.languageServers.filter((l) => l.languages.some(present)).map((l) => ({ name: l.name, languages: l.languages.filter(present), state: l.state, detail: l.detail })),
      fallbackLanguages: [...this.fallback],
      restricted: s.restricted,
      mcp: mcp ? { url: mcp.url, port: mcp.port, token: mcp.token } : null,
      mcpState: mcp ? 'on' : s.restricted ? 'restricted' : !this.init.mcp?.enabled ? 'off' : this.mcpFailed ? 'failed' : 'starting',
      error: s.error,
      pid: process.pid,
      shared: this.detach !== undefined,
    };
  }

  /**
   * Tells the client the status: at most one notification per STATUS_EVERY_MS. A change after a
   * quiet period goes out at once (the status bar turns "ready" without delay), later ones are
   * coalesced into one.
   */
  readonly pushStatus = (): void => {
    if (this.statusTimer) return;
    const wait = this.lastPush + STATUS_EVERY_MS - Date.now();
    if (wait <= 0) return this.sendStatus();
    this.statusTimer = setTimeout(() => {
      this.statusTimer = undefined;
      this.sendStatus();
    }, wait);
  };

  private sendStatus(): void {
    this.lastPush = Date.now();
    if (this.ws) void this.connection.sendNotification(didChangeStatusNotification, this.status()).catch(() => undefined);
  }

  /** `initialize`: reads the client's options and starts opening the workspace server (the engine opens in {@link initialized}). */
  initialize(params: InitializeParams): InitializeResult {
    const init = (this.init = (params.initializationOptions ?? {}) as InitializationOptions);
    this.logLevel.debug = init.debug === true;
    this.clientName = params.clientInfo ? `${params.clientInfo.name}${params.clientInfo.version ? `@${params.clientInfo.version}` : ''}` : 'lsp-client';
    const root = workspaceRootOf(params);
    this.coords = new Coordinates(root);
    this.fallback = new Set(init.fallbackLanguages ?? []);
    const connection = this.connection;
    const sendRequest = connection.sendRequest.bind(connection);
    const editor = init.editorBridge ? new EditorLanguageServers({ connection: { sendRequest }, coords: this.coords, fallback: this.fallback, names: init.editorServers ?? {}, ...(init.editorTimeoutMs ? { timeoutMs: init.editorTimeoutMs } : {}) }) : undefined;
    const editorModels = init.editorModels ? new EditorLanguageModels({ sendRequest }) : undefined;
    if (editorModels) connection.onNotification(editorChatDeltaNotification, (p) => editorModels.onDelta(p));
    this.opening = this.join(root, editor).then((w) => {
      this.ws = w;
      this.chat = new ChatService(w, `${this.clientName} chat`, editorModels);
      return w;
    });
    this.watchFiles = params.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    return {
      serverInfo: { name: 'vlt-oracle', version: packageVersion },
      capabilities: {
        textDocumentSync: { openClose: false, change: TextDocumentSyncKind.None, save: { includeText: false } },
        workspaceSymbolProvider: true,
        definitionProvider: true,
        referencesProvider: true,
        hoverProvider: true,
        workspace: { workspaceFolders: { supported: false } },
      },
    };
  }

  /**
   * The workspace daemon's server, when this editor may share it: its language servers are
   * asked first by every client while it is attached, and the chat's session is the shared
   * one. Otherwise a server of the editor's own (opening it only checks the folder).
   */
  private async join(root: string, editor: EditorLanguageServers | undefined): Promise<WorkspaceServer> {
    const init = this.init;
    const common = await this.opts.shared?.(init, root);
    if (common) {
      this.detach = common.attachEditor(editor, { onState: this.pushStatus, onProgress: this.pushStatus });
      if (init.session) common.useSession(init.session);
      this.logger.info(`joined the workspace daemon (pid ${process.pid}): one index for this editor, the terminal and agents`);
      return common;
    }
    const q = init.queue;
    return WorkspaceServer.open({
      workspace: root,
      logger: this.logger,
      writer: true,
      hostName: `vlt lsp (${this.clientName})`,
      ...(init.include || init.exclude ? { deps: { configOverrides: { ...(init.include ? { include: init.include } : {}), ...(init.exclude ? { exclude: init.exclude } : {}) } } } : {}),
      restricted: init.restricted === true,
      ...(init.session ? { session: init.session } : {}),
      ...(init.trusted !== undefined ? { trusted: init.trusted } : {}),
      headlessLanguageServers: init.headlessLanguageServers ?? !init.editorBridge,
      ...(editor ? { editorLanguageServers: editor } : {}),
      ...(q ? { queue: { ...(q.files ? { files: q.files } : {}), ...(q.lines ? { lines: q.lines } : {}), ...(q.timeoutSeconds ? { timeoutMs: q.timeoutSeconds * 1000 } : {}) } } : {}),
      onState: this.pushStatus,
      onProgress: this.pushStatus,
    });
  }

  /** `initialized`: watches files, builds or updates the index, then starts the MCP endpoint. */
  async initialized(): Promise<void> {
    if (!this.opening) return;
    const w = await this.opening;
    if (this.watchFiles) {
      await this.connection.client.register(DidChangeWatchedFilesNotification.type, { watchers: [{ globPattern: '**/*' }] }).catch((e: unknown) => this.logger.warn(`could not watch files: ${String(e)}`));
    }
    await this.firstIndex(w);
    if (this.init.mcp?.enabled && !w.restricted) {
      try {
        this.mcp = await this.opts.startMcp(w, { logger: this.logger, port: this.init.mcp.port ?? 0 });
      } catch (e) {
        this.mcpFailed = true;
        this.logger.error(`the MCP endpoint did not start: ${errorMessage(e)}`);
      }
      this.pushStatus();
    }
  }

  /**
   * Opens (building or updating) the index. Its progress reaches the editor as the status
   * (`vlt/didChangeStatus`: files done, rate, time left), the one progress display;
   * `vlt/cancelIndexing` stops it and keeps what it built.
   */
  private async firstIndex(w: WorkspaceServer): Promise<void> {
    try {
      await w.getEngine();
    } catch (e) {
      const err = toVltError(e);
      this.logger.error(`indexing failed: ${err.code}: ${err.message}`);
    } finally {
      this.pushStatus();
    }
  }

  /** Stops the index run in progress; what it built is kept. Answers at once, even while the first index holds the opening. */
  cancelIndexing(): { cancelled: boolean } {
    const cancelled = this.ws?.cancelIndexing() ?? false;
    if (cancelled) this.logger.info('indexing cancelled by the user; what it built is kept');
    this.pushStatus();
    return { cancelled };
  }

  /** Closes what this connection opened (once); a shared server is left, not closed. */
  finish(): Promise<void> {
    return (this.finished ??= (async () => {
      clearTimeout(this.statusTimer);
      await this.mcp?.close().catch(() => undefined);
      this.mcp = undefined;
      const w = await this.opening?.catch(() => undefined);
      if (this.detach) this.detach();
      else await w?.close();
    })());
  }
}

function workspaceRootOf(params: InitializeParams): string {
  const uri = params.workspaceFolders?.[0]?.uri ?? params.rootUri;
  if (uri) {
    const p = uriToPath(uri);
    if (p) return p;
    throw new VltError('USAGE', `the workspace ${uri} is not on the local file system`);
  }
  return params.rootPath ?? process.cwd();
}

export function uriToPath(uri: string): string | undefined {
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

/**
 * A VltError as an LSP response error: the message starts with its code, and `data.code`
 * carries it for clients that translate errors (the extension shows one line).
 */
function asResponseError(e: unknown): ResponseError<{ code: string }> {
  const err = isVltError(e) ? e : toVltError(e);
  const rpcCode = err.code === 'USAGE' || err.code === 'PATH_OUTSIDE_WORKSPACE' || err.code === 'ACCESS_DENIED' ? ErrorCodes.InvalidParams : err.code === 'CANCELLED' ? LSPErrorCodes.RequestCancelled : ErrorCodes.InternalError;
  return new ResponseError(rpcCode, `${err.code}: ${err.message}`, { code: err.code });
}
