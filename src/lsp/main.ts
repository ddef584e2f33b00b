/**
 * The LSP host's one wiring file: `vlt lsp --stdio` serves one workspace to an editor. It runs
 * the workspace server core (engine, delta queue, memory, oracle, the agent tools) and, unless
 * the workspace is untrusted, the MCP endpoint on loopback, all in this one process, so that the
 * editor, its chat and external agents share one index and one session.
 *
 * What it speaks (see `protocol.ts` for the custom part):
 * - standard LSP: `workspace/symbol` over the index's symbols; `textDocument/definition`,
 *   `references` and `hover` from the index for the languages the client lists as having no
 *   other provider; saves and watched-file events feed the delta queue;
 * - `vlt/*` requests: search, where used / defined, repo map, status, reindex, sync, tool;
 * - the chat (`src/server/chat.ts`): `vlt/ask` streaming `vlt/askEvent`, sessions, citations;
 * - `vlt/editor.*` requests to the client, which answer with the editor's live language
 *   servers: the navigation chain asks them first.
 * Stdout carries the protocol only; logs go to the client (window/logMessage) and stderr.
 */
import { format } from 'node:util';
import { fileURLToPath } from 'node:url';
import {
  createConnection,
  DidChangeWatchedFilesNotification,
  ErrorCodes,
  LSPErrorCodes,
  type CancellationToken,
  ResponseError,
  ProposedFeatures,
  SymbolKind,
  TextDocumentSyncKind,
  type Connection,
  type Hover,
  type InitializeParams,
  type InitializeResult,
  type Location,
  type SymbolInformation,
} from 'vscode-languageserver/node';
import { version as packageVersion } from '../../package.json';
import { isVltError, toVltError, VltError, errorMessage } from '../core/errors';
import { languageForPath } from '../core/parse/languages';
import { DEFAULT_MAP_TOKENS, repoMapperFor } from '../core/intel/repomap';
import type { Logger } from '../core/ports';
import type { NavToolLocation, NavToolResult } from '../core/tools/nav-tools';
import { ChatService } from '../server/chat';
import { EditorLanguageModels } from './editor-models';
import { WorkspaceServer } from '../server/workspace';
import { startMcpEndpoint, type McpHttpEndpoint } from '../mcp/main';
import { Coordinates } from './convert';
import { EditorLanguageServers } from './editor-servers';
import {
  askEventNotification,
  askRequest,
  cancelIndexingRequest,
  editorChatDeltaNotification,
  citationTargetRequest,
  citedLinesRequest,
  didChangeStatusNotification,
  modelsRequest,
  sessionEventsRequest,
  sessionsRequest,
  useSessionRequest,
  type AskEvent,
  type CitationTarget,
  repoMapRequest,
  reindexRequest,
  searchRequest,
  statusRequest,
  syncRequest,
  toolRequest,
  whereDefinedRequest,
  whereUsedRequest,
  type InitializationOptions,
  type NavParams,
  type NavResult,
  type NavResultLocation,
  type ServerStatus,
} from './protocol';

const KINDS: Record<string, SymbolKind> = {
  function: SymbolKind.Function,
  method: SymbolKind.Method,
  class: SymbolKind.Class,
  interface: SymbolKind.Interface,
  struct: SymbolKind.Struct,
  enum: SymbolKind.Enum,
  type: SymbolKind.TypeParameter,
  variable: SymbolKind.Variable,
  constant: SymbolKind.Constant,
  field: SymbolKind.Field,
  property: SymbolKind.Property,
  module: SymbolKind.Module,
  namespace: SymbolKind.Namespace,
  trait: SymbolKind.Interface,
  section: SymbolKind.String,
};

/** Status notifications are coalesced to at most one per this many milliseconds. */
const STATUS_EVERY_MS = 250;

export interface LspServerOptions {
  /** Where the protocol runs; default this process's stdin/stdout. */
  connection?: Connection;
  /**
   * A workspace server already open in this process (the workspace daemon's) that this editor
   * may join, given its initialization options and root; undefined opens one of its own.
   */
  shared?: (init: InitializationOptions, root: string) => Promise<WorkspaceServer | undefined>;
  /** Settles when the transport closed without an `exit` (the editor went away). */
  closed?: Promise<void>;
}

/** Runs the server until the client sends `exit` or closes the stream. */
export function runLspServer(opts: LspServerOptions = {}): Promise<void> {
  const connection = opts.connection ?? createConnection(ProposedFeatures.all, process.stdin, process.stdout);
  const logLevel = { debug: false };
  const logger = connectionLogger(connection, logLevel);
  // Anything printed with console.log would corrupt the protocol stream.
  if (!opts.connection) console.log = console.info = console.debug = (...args: unknown[]) => void process.stderr.write(`${format(...args)}\n`);

  let ws: WorkspaceServer | undefined;
  let coords: Coordinates | undefined;
  let init: InitializationOptions = {};
  let mcp: McpHttpEndpoint | undefined;
  let clientName = 'lsp-client';
  let fallback = new Set<string>();
  let chat: ChatService | undefined;
  let statusTimer: NodeJS.Timeout | undefined;
  let opening: Promise<WorkspaceServer> | undefined;
  /** Joined a shared server: leave it on shutdown instead of closing it. */
  let detach: (() => void) | undefined;
  let watchFiles = false;
  /** The MCP endpoint was asked for and could not start. */
  let mcpFailed = false;
  const ready = () => {
    if (!ws || !coords) throw new VltError('USAGE', 'the server is not initialized');
    return { ws, coords };
  };

  const status = (): ServerStatus => {
    const { ws } = ready();
    const s = ws.status();
    // Once the index knows the workspace's languages, only their language servers are listed.
    const present = (lang: string) => !s.index || (s.index.languages[lang] ?? 0) > 0;
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
      fallbackLanguages: [...fallback],
      restricted: s.restricted,
      mcp: mcp ? { url: mcp.url, port: mcp.port, token: mcp.token } : null,
      mcpState: mcp ? 'on' : s.restricted ? 'restricted' : !init.mcp?.enabled ? 'off' : mcpFailed ? 'failed' : 'starting',
      error: s.error,
      pid: process.pid,
      shared: detach !== undefined,
    };
  };
  // At most one notification per STATUS_EVERY_MS: a change after a quiet period goes out at
  // once (the status bar turns "ready" without delay), later ones are coalesced into one.
  let lastPush = 0;
  const sendStatus = () => {
    lastPush = Date.now();
    if (ws) void connection.sendNotification(didChangeStatusNotification, status()).catch(() => undefined);
  };
  const pushStatus = () => {
    if (statusTimer) return;
    const wait = lastPush + STATUS_EVERY_MS - Date.now();
    if (wait <= 0) return sendStatus();
    statusTimer = setTimeout(() => {
      statusTimer = undefined;
      sendStatus();
    }, wait);
  };

  /** Runs one agent tool for the editor: recorded in the shared session like an agent's call. */
  const callTool = <O extends object>(name: string, input: unknown, author = clientName, signal?: AbortSignal): Promise<O> => ready().ws.call<O>(name, input, { author, ...(signal ? { signal } : {}) });

  const navInput = (p: NavParams) => {
    const { coords } = ready();
    if ('symbol' in p.target) return { symbol: p.target.symbol };
    return { file: coords.relPath(p.target.textDocument.uri), line: p.target.position.line + 1, col: p.target.position.character + 1 };
  };
  const toNavLocation = (l: NavToolLocation): NavResultLocation => {
    const { coords } = ready();
    return { uri: coords.uri(l.path), range: coords.point(l.line, l.col), path: l.path, line: l.line, provenance: l.provenance, exact: l.exact, confidence: l.confidence, text: l.text };
  };
  const toNavResult = (r: NavToolResult): NavResult => ({
    name: r.symbol,
    locations: r.locations.map(toNavLocation),
    ...(r.definition ? { definition: toNavLocation(r.definition) } : {}),
    ambiguous: r.ambiguous,
    providers: r.providers.map((p) => ({ provider: p.provider, status: p.status, ...(p.reason ? { reason: p.reason } : {}), ms: Math.round(p.ms) })),
    notes: r.notes,
    suggestions: r.suggestions ?? [],
    truncated: r.truncated === true || r.next_cursor !== undefined,
  });
  /**
   * Standard requests answer only for the fallback languages, so that the editor never shows
   * a location twice; a client that lists none (Neovim, Helix) gets every language.
   */
  const servesDocument = (uri: string) => {
    if (fallback.size === 0) return true;
    const file = uriToPath(uri);
    const lang = file ? languageForPath(file) : undefined;
    return lang !== undefined && fallback.has(lang);
  };

  connection.onInitialize((params: InitializeParams): InitializeResult => {
    init = (params.initializationOptions ?? {}) as InitializationOptions;
    logLevel.debug = init.debug === true;
    clientName = params.clientInfo ? `${params.clientInfo.name}${params.clientInfo.version ? `@${params.clientInfo.version}` : ''}` : 'lsp-client';
    const root = workspaceRootOf(params);
    coords = new Coordinates(root);
    fallback = new Set(init.fallbackLanguages ?? []);
    const editor = init.editorBridge ? new EditorLanguageServers({ connection: { sendRequest: (method, params, token) => connection.sendRequest(method, params, token) }, coords, fallback, names: init.editorServers ?? {}, ...(init.editorTimeoutMs ? { timeoutMs: init.editorTimeoutMs } : {}) }) : undefined;
    const editorModels = init.editorModels ? new EditorLanguageModels({ sendRequest: (method, params, token) => connection.sendRequest(method, params, token) }) : undefined;
    if (editorModels) connection.onNotification(editorChatDeltaNotification, (p) => editorModels.onDelta(p));
    // Opening the workspace server only checks the folder; the engine opens in onInitialized.
    const openOwn = () =>
      WorkspaceServer.open({
        workspace: root,
        logger,
        writer: true,
        hostName: `vlt lsp (${clientName})`,
        ...(init.include || init.exclude ? { deps: { configOverrides: { ...(init.include ? { include: init.include } : {}), ...(init.exclude ? { exclude: init.exclude } : {}) } } } : {}),
        restricted: init.restricted === true,
        ...(init.session ? { session: init.session } : {}),
        ...(init.trusted !== undefined ? { trusted: init.trusted } : {}),
        headlessLanguageServers: init.headlessLanguageServers ?? !init.editorBridge,
        ...(editor ? { editorLanguageServers: editor } : {}),
        ...(init.queue ? { queue: { ...(init.queue.files ? { files: init.queue.files } : {}), ...(init.queue.lines ? { lines: init.queue.lines } : {}), ...(init.queue.timeoutSeconds ? { timeoutMs: init.queue.timeoutSeconds * 1000 } : {}) } } : {}),
        onState: pushStatus,
        onProgress: pushStatus,
      });
    // The workspace daemon's server, when this editor may share it: its language servers are
    // asked first by every client while it is attached, and the chat's session is the shared one.
    const join = async (): Promise<WorkspaceServer> => {
      const common = await opts.shared?.(init, root);
      if (!common) return openOwn();
      detach = common.attachEditor(editor, { onState: pushStatus, onProgress: pushStatus });
      if (init.session) common.useSession(init.session);
      logger.info(`joined the workspace daemon (pid ${process.pid}): one index for this editor, the terminal and agents`);
      return common;
    };
    opening = join().then((w) => {
      ws = w;
      chat = new ChatService(w, `${clientName} chat`, editorModels);
      return w;
    });
    watchFiles = params.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
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
  });

  connection.onInitialized(() => {
    void (async () => {
      const w = await opening!;
      if (watchFiles) {
        await connection.client.register(DidChangeWatchedFilesNotification.type, { watchers: [{ globPattern: '**/*' }] }).catch((e: unknown) => logger.warn(`could not watch files: ${String(e)}`));
      }
      await firstIndex(w);
      if (init.mcp?.enabled && !w.restricted) {
        try {
          mcp = await startMcpEndpoint(w, { logger, port: init.mcp.port ?? 0 });
        } catch (e) {
          mcpFailed = true;
          logger.error(`the MCP endpoint did not start: ${errorMessage(e)}`);
        }
        pushStatus();
      }
    })().catch((e: unknown) => logger.error(`start-up failed: ${errorMessage(e)}`));
  });

  /**
   * Opens (building or updating) the index. Its progress reaches the editor as the status
   * (`vlt/didChangeStatus`: files done, rate, time left), the one progress display;
   * `vlt/cancelIndexing` stops it and keeps what it built.
   */
  const firstIndex = async (w: WorkspaceServer) => {
    try {
      await w.getEngine();
    } catch (e) {
      const err = toVltError(e);
      logger.error(`indexing failed: ${err.code}: ${err.message}`);
    } finally {
      pushStatus();
    }
  };

  /** A request handler: waits for the server to open, passes the client's cancellation on as a signal, and answers failures as `CODE: message`. */
  const handle = <P, R>(fn: (p: P, signal: AbortSignal) => Promise<R>) => async (p: P, token?: CancellationToken): Promise<R> => {
    await opening;
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

  connection.onRequest(searchRequest, handle(async (p) => {
    const { ws, coords } = ready();
    const out = await ws.read((e) => e.search(p.query, { k: p.k ?? 20, withSnippetLine: true, ...(p.language ? { language: p.language } : {}), ...(p.path ? { pathGlob: p.path } : {}), ...(p.kind?.length ? { kinds: p.kind } : {}) }));
    return {
      hits: out.hits.map((h) => ({
        path: h.path,
        uri: coords.uri(h.path),
        range: { start: { line: h.start_line - 1, character: 0 }, end: { line: h.end_line - 1, character: 0 } },
        symbol: h.symbol,
        kind: h.kind,
        score: h.score,
        retrievers: h.retrievers,
        snippet: h.snippet,
        ...(h.snippet_line !== undefined ? { snippetLine: h.snippet_line - 1 } : {}),
      })),
    };
  }));
  connection.onRequest(whereUsedRequest, handle(async (p, signal) => toNavResult(await callTool<NavToolResult>('find_references', { ...navInput(p), limit: p.limit ?? 500, max_tokens: 20_000, ...(p.budgetMs ? { budget_ms: p.budgetMs } : {}) }, clientName, signal))));
  connection.onRequest(whereDefinedRequest, handle(async (p, signal) => toNavResult(await callTool<NavToolResult>('find_definition', navInput(p), clientName, signal))));
  // The map as text and as data (files, definitions, lines) for the editor's view: the same
  // ranking and rendering `get_repo_map` answers with.
  connection.onRequest(repoMapRequest, handle(async (p) => {
    const { ws, coords } = ready();
    const focus = p.focus ? coords.relPath(p.focus) : undefined;
    const r = await ws.read((e) => repoMapperFor(e).render({ maxTokens: p.tokens ?? DEFAULT_MAP_TOKENS, ...(p.scope ? { scope: p.scope } : {}), ...(focus ? { focus: [focus] } : {}) }));
    return {
      text: r.text,
      files: r.files.map((f) => ({ path: f.path, uri: coords.uri(f.path), rank: f.rank, symbols: f.symbols.map((s) => ({ name: s.name, kind: s.kind, line: s.line, endLine: s.end_line, signature: s.signature })) })),
      ...(focus ? { focus } : {}),
      notes: r.notes,
    };
  }));
  connection.onRequest(statusRequest, handle(() => Promise.resolve(status())));
  connection.onRequest(syncRequest, handle(async () => {
    await ready().ws.sync();
    return status();
  }));
  connection.onRequest(reindexRequest, handle(async (_p, signal) => {
    const r = await ready().ws.reindex({ signal });
    return { filesParsed: r.filesParsed, filesRemoved: r.filesRemoved, chunksAdded: r.chunksAdded, ms: Math.round(r.ms.total) };
  }));
  // Not behind `handle`: it must answer while the first index holds the server's opening.
  connection.onRequest(cancelIndexingRequest, () => {
    const cancelled = ws?.cancelIndexing() ?? false;
    if (cancelled) logger.info('indexing cancelled by the user; what it built is kept');
    pushStatus();
    return { cancelled };
  });
  // The chat: a question streamed as `vlt/askEvent` notifications, in the shared session.
  const chatService = () => {
    if (!chat) throw new VltError('USAGE', 'the server is not initialized');
    return chat;
  };
  connection.onRequest(askRequest, handle(async (p, signal) => {
    const { askId } = p;
    const onEvent = (event: AskEvent) => {
      if (askId !== undefined) void connection.sendNotification(askEventNotification, { askId, event }).catch(() => undefined);
    };
    return chatService().ask(p, onEvent, signal);
  }));
  connection.onRequest(sessionsRequest, handle(async (p) => chatService().sessions(p.limit)));
  connection.onRequest(useSessionRequest, handle(async (p) => chatService().useSession(p.id)));
  connection.onRequest(sessionEventsRequest, handle(async (p) => chatService().sessionEvents(p.id)));
  connection.onRequest(modelsRequest, handle(async () => chatService().models()));
  connection.onRequest(citedLinesRequest, handle(async (p) => chatService().citedLines(p.items)));
  connection.onRequest(citationTargetRequest, handle(async (p): Promise<CitationTarget> => {
    const t = await chatService().target(p.citation);
    return t.kind === 'file' ? { ...t, uri: ready().coords.uri(t.path) } : t;
  }));

  connection.onRequest(toolRequest, handle(async (p, signal) => callTool<object>(String(p.name), p.input, p.author ? `${p.author.slice(0, 100)} via ${clientName}` : clientName, signal)));

  connection.onWorkspaceSymbol(handle(async (p): Promise<SymbolInformation[]> => {
    const { ws, coords } = ready();
    const q = p.query.trim();
    if (!q) return [];
    return ws.read(async (e) => {
      const seen = new Set<string>();
      const out: SymbolInformation[] = [];
      const add = (name: string, kind: string, file: string, line: number, container?: string) => {
        const key = `${file}:${line}:${name}`;
        if (seen.has(key) || out.length >= 200) return;
        seen.add(key);
        out.push({ name, kind: KINDS[kind] ?? SymbolKind.Variable, location: { uri: coords.uri(file), range: coords.point(line, 1) }, ...(container ? { containerName: container } : {}) });
      };
      for (const s of e.store.findSymbols(q, { prefix: true, limit: 100 })) add(s.name, s.kind, s.path, s.startLine, s.container);
      for (const h of (await e.search(q, { k: 50 })).hits) if (h.symbol) add(h.symbol, h.kind, h.path, h.start_line);
      return out;
    });
  }));

  connection.onDefinition(handle(async (p): Promise<Location[]> => {
    if (!servesDocument(p.textDocument.uri)) return [];
    const answer = await callTool<NavToolResult>('find_definition', navInput({ target: { textDocument: p.textDocument, position: p.position } }));
    // Never silent: an empty answer's reason goes to the log (a pop-up would follow the pointer).
    if (answer.reason) connection.console.info(`definition: ${answer.reason.message}`);
    return toNavResult(answer).locations.map((l) => ({ uri: l.uri, range: l.range }));
  }));
  connection.onReferences(handle(async (p, signal): Promise<Location[]> => {
    if (!servesDocument(p.textDocument.uri)) return [];
    const answer = await callTool<NavToolResult>('find_references', { ...navInput({ target: { textDocument: p.textDocument, position: p.position } }), limit: 1000, max_tokens: 20_000, budget_ms: init.referencesBudgetMs ?? 5000 }, clientName, signal);
    // Never silent: the user asked, so an empty answer says why where they look.
    if (answer.reason) connection.window.showInformationMessage(`Vlt Oracle: ${answer.reason.message}`);
    const r = toNavResult(answer);
    const locs = r.locations.map((l) => ({ uri: l.uri, range: l.range }));
    if (p.context.includeDeclaration && r.definition) locs.unshift({ uri: r.definition.uri, range: r.definition.range });
    return locs;
  }));
  connection.onHover(handle(async (p): Promise<Hover | null> => {
    if (!servesDocument(p.textDocument.uri)) return null;
    const r = await callTool<NavToolResult>('find_definition', navInput({ target: { textDocument: p.textDocument, position: p.position } })).catch(() => undefined);
    const d = r?.locations[0];
    if (!d) return null;
    const how = d.exact ? 'language server' : `${d.provenance}, ${d.confidence} confidence`;
    return { contents: { kind: 'markdown', value: ['```', d.signature ?? d.text, '```', `${d.kind ?? 'definition'} at \`${d.citation}\` (Vlt Oracle: ${how})`].join('\n') } };
  }));

  connection.onDidChangeWatchedFiles((p) => {
    ws?.enqueue(p.changes.map((c) => uriToPath(c.uri)).filter((x): x is string => x !== undefined));
  });
  connection.onDidSaveTextDocument((p) => {
    const f = uriToPath(p.textDocument.uri);
    if (f) ws?.enqueue([f]);
  });

  /** Closes what this connection opened; a shared server is left, not closed. */
  let finished: Promise<void> | undefined;
  const finish = () =>
    (finished ??= (async () => {
      clearTimeout(statusTimer);
      await mcp?.close().catch(() => undefined);
      mcp = undefined;
      const w = await opening?.catch(() => undefined);
      if (detach) detach();
      else await w?.close();
    })());
  connection.onShutdown(finish);

  return new Promise<void>((resolve) => {
    connection.onExit(() => void finish().then(resolve));
    // The editor went away without `exit` (killed, a closed pipe): leave as after a shutdown.
    void opts.closed?.then(() => finish().then(resolve));
    connection.listen();
  });
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

function uriToPath(uri: string): string | undefined {
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

/** Logs to the client's output (window/logMessage); debug lines only when the client asks for them. */
function connectionLogger(connection: Connection, level: { debug: boolean }): Logger {
  const text = (m: string, rest: unknown[]) => (rest.length ? `${m} ${rest.map((r) => (r instanceof Error ? (r.stack ?? r.message) : String(r))).join(' ')}` : m);
  return {
    debug: (m, ...rest) => {
      if (level.debug) connection.console.log(text(m, rest));
    },
    info: (m, ...rest) => connection.console.info(text(m, rest)),
    warn: (m, ...rest) => connection.console.warn(text(m, rest)),
    error: (m, ...rest) => connection.console.error(text(m, rest)),
  };
}
