/**
 * One `vlt lsp` server per workspace folder, started from this extension's own bundle through
 * vscode-languageclient (restarted on a crash, with the client's backoff), its log in the
 * extension's one LogOutputChannel. It owns the folder's client and its latest status; the
 * wiring file owns the commands and the status bar.
 */
import * as vscode from 'vscode';
import { DidSaveTextDocumentNotification, LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { askEventNotification, didChangeStatusNotification, statusRequest, type AskEvent, type InitializationOptions, type ServerStatus } from '../protocol/lsp';
import { CHAT_SESSION_KEY } from './chat-state-store';
import { languageProviders, registerEditorBridge, VSCODE_LANGUAGE_IDS } from './editor-bridge';
import { registerLanguageModels } from './language-models';
import { readSettings } from './settings';
import { errorMessage } from './errors';

export class FolderServer implements vscode.Disposable {
  readonly client: LanguageClient;
  status: ServerStatus | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly statusEmitter = new vscode.EventEmitter<FolderServer>();
  /** Fires on every status the server pushes (and on a stop). */
  readonly onDidChangeStatus = this.statusEmitter.event;
  /** Languages this server answers definition/references/hover for in this window. */
  readonly fallbackLanguages: string[];
  private readonly names: Record<string, string>;
  private readonly askListeners = new Map<string, (e: AskEvent) => void>();

  constructor(
    readonly folder: vscode.WorkspaceFolder,
    context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    restricted: boolean,
    /** The key of the user's endpoint, from the editor's secret storage ("Oracle: Set API Key"). */
    apiKey: string | undefined,
  ) {
    const settings = readSettings(folder);
    this.names = languageProviders();
    this.fallbackLanguages = settings.fallbackLanguages ?? Object.keys(VSCODE_LANGUAGE_IDS).filter((l) => !this.names[l]);
    const serverModule = context.asAbsolutePath('dist/cli.js');
    // The server joins the workspace's daemon (one index for the editor, the terminal and
    // agents), except in Restricted Mode, where nothing may run for the workspace.
    const run = { module: serverModule, transport: TransportKind.stdio, args: restricted ? ['lsp', '--no-daemon'] : ['lsp'], options: { cwd: folder.uri.fsPath, env: serverEnv(restricted, { ...settings.llm, ...(apiKey ? { apiKey } : {}) }) } };
    const serverOptions: ServerOptions = { run, debug: { ...run, options: { ...run.options, execArgv: ['--nolazy', '--inspect=6019'] } } };
    const init: InitializationOptions = {
      editorBridge: true,
      editorModels: !restricted,
      debug: log.logLevel !== vscode.LogLevel.Off && log.logLevel <= vscode.LogLevel.Debug,
      editorServers: this.names,
      fallbackLanguages: this.fallbackLanguages,
      restricted,
      trusted: vscode.workspace.isTrusted,
      ...(context.workspaceState.get<string>(CHAT_SESSION_KEY) ? { session: context.workspaceState.get<string>(CHAT_SESSION_KEY)! } : {}),
      headlessLanguageServers: settings.headlessLanguageServers,
      mcp: { enabled: settings.mcpEnabled && !restricted, port: settings.mcpPort },
      queue: settings.queue,
      editorTimeoutMs: settings.editorTimeoutMs,
      referencesBudgetMs: settings.referencesBudgetMs,
      ...(settings.include ? { include: settings.include } : {}),
      ...(settings.exclude ? { exclude: settings.exclude } : {}),
    };
    const pattern = (glob: string) => new vscode.RelativePattern(folder, glob);
    const clientOptions: LanguageClientOptions = {
      // Definitions, references and hovers only where no other extension provides them, so
      // that the editor never shows a location twice.
      documentSelector: this.fallbackLanguages.flatMap((l) => (VSCODE_LANGUAGE_IDS[l] ?? [l]).map((language) => ({ scheme: 'file', language, pattern: `${folder.uri.fsPath}/**/*` }))),
      workspaceFolder: folder,
      outputChannel: log,
      initializationOptions: init,
      synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher(pattern('**/*')) },
      // The server answers every failure itself; do not pop up the client's own dialogs.
      initializationFailedHandler: (e) => {
        log.error(`the Vlt Oracle server failed to start: ${errorMessage(e)}`);
        return false;
      },
    };
    this.client = new LanguageClient('vlt', `Vlt Oracle (${folder.name})`, serverOptions, clientOptions);
    this.disposables.push(...registerEditorBridge(this.client, () => this.names));
    if (!restricted) this.disposables.push(...registerLanguageModels(this.client, log));
    // A save reaches the delta queue at once, whatever the language: the file watcher's events
    // come later (hundreds of milliseconds), and the client syncs only the documents it serves.
    this.disposables.push(
      vscode.workspace.onDidSaveTextDocument((doc) => {
        if (doc.uri.scheme !== 'file' || vscode.workspace.getWorkspaceFolder(doc.uri)?.uri.toString() !== folder.uri.toString()) return;
        if (this.client.isRunning()) void this.client.sendNotification(DidSaveTextDocumentNotification.type, { textDocument: { uri: doc.uri.toString() } }).catch(() => undefined);
      }),
    );
    this.disposables.push(
      this.client.onNotification(didChangeStatusNotification, (s) => {
        this.status = s;
        this.statusEmitter.fire(this);
      }),
      // One handler for every question's stream (a method has one handler per client), routed by its id.
      this.client.onNotification(askEventNotification, (p) => this.askListeners.get(p.askId)?.(p.event)),
    );
  }

  /** Streams the `vlt/askEvent` notifications of one question to `fn` until disposed. */
  onAskEvent(askId: string, fn: (e: AskEvent) => void): vscode.Disposable {
    this.askListeners.set(askId, fn);
    return { dispose: () => void this.askListeners.delete(askId) };
  }

  async start(): Promise<void> {
    await this.client.start();
    this.log.info(`server for ${this.folder.name} started; fallback languages: ${this.fallbackLanguages.join(', ') || 'none'}`);
    this.status = await this.client.sendRequest(statusRequest).catch(() => this.status);
    this.statusEmitter.fire(this);
  }

  async dispose(): Promise<void> {
    for (const d of this.disposables.splice(0)) d.dispose();
    await this.client.dispose(2000).catch(() => undefined);
    this.status = undefined;
    this.statusEmitter.fire(this);
    this.statusEmitter.dispose();
  }
}

/**
 * The server's environment. In an untrusted workspace it gets no API keys at all: whatever the
 * workspace's vlt.toml says, the server has nothing to send to an endpoint it names. Otherwise
 * the user's endpoint settings and key go in as `VLT_LLM_*`, which the server's configuration
 * prefers to every file: the key never touches the disk.
 */
function serverEnv(restricted: boolean, llm: { baseUrl?: string; model?: string; apiKey?: string }): NodeJS.ProcessEnv {
  const env = { ...process.env };
  if (restricted) {
    for (const k of Object.keys(env)) if (/KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL/i.test(k)) delete env[k];
    env.VLT_EMBEDDINGS = 'off';
    return env;
  }
  if (llm.baseUrl) env.VLT_LLM_BASE_URL = llm.baseUrl;
  if (llm.model) env.VLT_LLM_MODEL = llm.model;
  if (llm.apiKey) env.VLT_LLM_API_KEY = llm.apiKey;
  return env;
}
