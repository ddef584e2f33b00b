/**
 * The VS Code host's one wiring file. The extension is a thin client: the engine runs in one
 * `vlt lsp` server process per workspace folder (src/lsp), started from this extension's own
 * bundle, so that indexing never blocks or bloats the extension host that every extension
 * shares. Here: one LogOutputChannel, the servers, the palette commands, the status bar, the
 * chat view, the `@oracle` chat participant, the search view, the language-model tools and the
 * MCP server definition, the API key in the secret storage, and workspace trust (an untrusted
 * folder gets a restricted server; granting trust restarts it unrestricted).
 */
import * as vscode from 'vscode';
import { agentsManifestTools } from './manifest';
import { registerLanguageModelTools, registerMcpProvider } from './agents';
import { API_KEY_SECRET, commandTable, type CommandHost } from './commands';
import { RepoMapView } from './repo-map-view';
import { isUserMistake, searchRequest, type ServerStatus } from '../protocol/lsp';
import { ChatViewProvider, CITATION_SCHEME } from './chat-view';
import { ChatStateStore } from './chat-state-store';
import { registerChatParticipant } from './participant';
import { SearchViewProvider } from './search-view';
import { FolderServer } from './server-client';
import { StatusBar } from './status-bar';
import { errorMessage } from './errors';

let log: vscode.LogOutputChannel;
const servers = new Map<string, FolderServer>();
const serversChanged = new vscode.EventEmitter<void>();

/** The folder server for `uri` (or the active editor, or the first folder). */
function serverFor(uri?: vscode.Uri): FolderServer {
  const folder = (uri && vscode.workspace.getWorkspaceFolder(uri)) ?? vscode.workspace.workspaceFolders?.find((f) => servers.has(f.uri.toString()));
  const server = folder && servers.get(folder.uri.toString());
  if (!server) throw new Error(restarting ? 'the Vlt Oracle server is restarting; try again in a moment' : 'open a local folder to use Vlt Oracle');
  return server;
}

async function startFolder(folder: vscode.WorkspaceFolder, context: vscode.ExtensionContext, bar: StatusBar): Promise<void> {
  if (folder.uri.scheme !== 'file' || servers.has(folder.uri.toString())) return;
  const apiKey = await context.secrets.get(API_KEY_SECRET).then(
    (k) => k,
    (e: unknown) => void log.warn(`the API key could not be read from the secret storage: ${errorMessage(e)}`),
  );
  if (servers.has(folder.uri.toString())) return;
  const server = new FolderServer(folder, context, log, !vscode.workspace.isTrusted, apiKey ?? undefined);
  servers.set(folder.uri.toString(), server);
  server.onDidChangeStatus(() => {
    const key = folder.uri.toString();
    if (server.status?.state === 'ready' && startup.readyAt[key] === undefined) {
      startup.readyAt[key] = Date.now();
      log.info(`${folder.name}: ready ${startup.readyAt[key] - startup.activatedAt} ms after activation (${server.status.files} files)`);
    }
    renderStatus(bar);
    serversChanged.fire();
  });
  try {
    await server.start();
  } catch (e) {
    log.error(`could not start the server for ${folder.name}: ${errorMessage(e)}`);
  }
}

/** Set while every server restarts (trust granted, a new key, changed settings). */
let restarting = false;

async function restartAll(context: vscode.ExtensionContext, bar: StatusBar): Promise<void> {
  restarting = true;
  try {
    for (const key of [...servers.keys()]) await stopFolder(key);
    for (const f of vscode.workspace.workspaceFolders ?? []) await startFolder(f, context, bar);
  } finally {
    restarting = false;
  }
}

async function stopFolder(key: string): Promise<void> {
  const server = servers.get(key);
  servers.delete(key);
  await server?.dispose();
}

function renderStatus(bar: StatusBar): void {
  let server: FolderServer | undefined;
  try {
    server = serverFor(vscode.window.activeTextEditor?.document.uri);
  } catch {
    server = undefined;
  }
  bar.render(server);
}

/** Runs a command, showing a failure as one line to the user and in the log, never losing it. */
function guarded(name: string, fn: () => Promise<unknown>): () => Promise<unknown> {
  return async () => {
    try {
      return await fn();
    } catch (e) {
      const message = errorMessage(e);
      const shown = `Vlt Oracle: ${message.replace(/^[A-Z_]+: /, '')}`;
      // A request the command cannot carry out as asked (no identifier under the cursor, a path
      // that is not there) is the user's to correct, not a failure: logged at info, shown as a warning.
      if (isUserMistake(message)) {
        log.info(`${name}: ${message}`);
        void vscode.window.showWarningMessage(shown);
      } else {
        log.error(`${name}: ${message}`);
        void vscode.window.showErrorMessage(shown);
      }
      return undefined;
    }
  };
}

/** What `activate` returns to other extensions (and to the extension's own tests). */
export interface VltOracleApi {
  /** The latest status each folder's server pushed. */
  statuses(): ServerStatus[];
  /** Sends one request (a `vlt/*` method of src/protocol/lsp.ts) to the server of `folder` (default: the first). */
  request<R>(method: string, params?: unknown, folder?: vscode.Uri): Promise<R>;
  /** When the extension activated, and when each folder's server first reported ready (Date.now() values). */
  startup(): { activatedAt: number; readyAt: Record<string, number> };
}

const startup = { activatedAt: 0, readyAt: {} as Record<string, number> };

export function activate(context: vscode.ExtensionContext): VltOracleApi {
  startup.activatedAt = Date.now();
  log = vscode.window.createOutputChannel('Vlt Oracle', { log: true });
  context.subscriptions.push(log, serversChanged);
  const bar = new StatusBar();
  context.subscriptions.push(bar);

  const repoMap = new RepoMapView({ serverFor, log });
  context.subscriptions.push(repoMap);
  const documents = new Map<string, string>();
  const documentsChanged = new vscode.EventEmitter<vscode.Uri>();
  context.subscriptions.push(
    documentsChanged,
    vscode.workspace.registerTextDocumentContentProvider(CITATION_SCHEME, { onDidChange: documentsChanged.event, provideTextDocumentContent: (uri) => documents.get(uri.toString()) ?? '' }),
  );
  const chat = new ChatViewProvider(context.extensionUri, { serverFor, log, state: context.workspaceState, store: new ChatStateStore(context.storageUri, log), documents, documentsChanged });
  context.subscriptions.push(vscode.window.registerWebviewViewProvider(ChatViewProvider.viewType, chat, { webviewOptions: { retainContextWhenHidden: false } }));
  // A model provider that starts later (Copilot signing in) reaches the picker at once.
  if (typeof vscode.lm?.onDidChangeChatModels === 'function') context.subscriptions.push(vscode.lm.onDidChangeChatModels(() => void chat.notify({ type: 'modelsChanged' })));
  const host: CommandHost = { serverFor, log, repoMap, chat: (c) => chat.command(c), secrets: context.secrets };
  for (const [id, fn] of Object.entries(commandTable(host))) context.subscriptions.push(vscode.commands.registerCommand(id, guarded(id, fn)));

  const view = new SearchViewProvider(context.extensionUri, {
    search: async (query, kind) => {
      const { hits } = await serverFor(vscode.window.activeTextEditor?.document.uri).client.sendRequest(searchRequest, { query, k: 20, ...(kind ? { kind: [kind] } : {}) });
      // Labelled and opened where the snippet starts (the hit), not at the chunk's first line.
      return hits.map((h) => ({ path: h.path, start_line: (h.snippetLine ?? h.range.start.line) + 1, symbol: h.symbol, kind: h.kind, snippet: h.snippet, ...(h.stale ? { stale: true as const } : {}) }));
    },
    open: async (relPath, line) => {
      if (relPath.split(/[\\/]/).includes('..')) throw new Error(`not a workspace path: ${relPath}`);
      const folder = serverFor(vscode.window.activeTextEditor?.document.uri).folder;
      const pos = new vscode.Position(Math.max(0, line - 1), 0);
      await vscode.window.showTextDocument(vscode.Uri.joinPath(folder.uri, relPath), { selection: new vscode.Range(pos, pos) });
    },
    log,
  });
  context.subscriptions.push(vscode.window.registerWebviewViewProvider(SearchViewProvider.viewType, view));

  context.subscriptions.push(...registerChatParticipant(context.extensionUri, serverFor, log));
  context.subscriptions.push(...registerLanguageModelTools(agentsManifestTools(context.extension.packageJSON), serverFor, log));
  context.subscriptions.push(...registerMcpProvider(() => [...servers.values()], serversChanged.event, log));

  context.subscriptions.push(
    vscode.window.onDidChangeActiveTextEditor(() => renderStatus(bar)),
    vscode.workspace.onDidChangeWorkspaceFolders(async (e) => {
      for (const f of e.removed) await stopFolder(f.uri.toString());
      for (const f of e.added) await startFolder(f, context, bar);
      renderStatus(bar);
    }),
    // Trust granted: the restricted servers restart with models, helpers and the MCP endpoint.
    vscode.workspace.onDidGrantWorkspaceTrust(async () => {
      log.info('workspace trusted: restarting the servers without restrictions');
      await restartAll(context, bar);
    }),
    // A key set or removed (here or in another window): the servers restart with it.
    context.secrets.onDidChange(async (e) => {
      if (e.key !== API_KEY_SECRET) return;
      log.info('the API key changed: restarting the servers');
      await restartAll(context, bar);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration('vlt')) return;
      const choice = await vscode.window.showInformationMessage('Vlt Oracle settings changed. Restart its servers to apply them?', 'Restart');
      if (choice !== 'Restart') return;
      await restartAll(context, bar);
    }),
    { dispose: () => void Promise.all([...servers.keys()].map(stopFolder)) },
  );

  // Servers start in the background: activation returns at once, the status bar follows them.
  for (const f of vscode.workspace.workspaceFolders ?? []) void startFolder(f, context, bar);
  renderStatus(bar);
  return {
    statuses: () => [...servers.values()].flatMap((s) => (s.status ? [s.status] : [])),
    request: <R>(method: string, params?: unknown, folder?: vscode.Uri) => serverFor(folder).client.sendRequest<R>(method, params),
    startup: () => ({ activatedAt: startup.activatedAt, readyAt: { ...startup.readyAt } }),
  };
}

export async function deactivate(): Promise<void> {
  await Promise.all([...servers.keys()].map(stopFolder));
}
