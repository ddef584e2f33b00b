/**
 * The palette actions: each asks the folder's server one question and presents the answer
 * with VS Code's own UI (the references peek, quick picks, a read-only document), always saying
 * where an answer came from, and why when there is none.
 */
import * as vscode from 'vscode';
import {
  cancelIndexingRequest,
  reindexRequest,
  searchRequest,
  statusRequest,
  syncRequest,
  whereDefinedRequest,
  whereUsedRequest,
  type NavResult,
  type NavResultLocation,
  type RepoMapResult,
  type ServerStatus,
} from '../protocol/lsp';
import type { ChatCommand } from '../protocol/webview';
import type { FolderServer } from './server-client';
import { readSettings } from './settings';


export interface CommandHost {
  /** The server of the active editor's folder (else the first folder's); throws a user-facing error when none runs. */
  serverFor(uri?: vscode.Uri): FolderServer;
  log: vscode.LogOutputChannel;
  /** The repository map view (repo-map-view.ts). */
  repoMap: { show(): Promise<RepoMapResult | undefined>; openAsText(): Promise<void> };
  /** Shows the chat view and hands it a command. */
  chat(c: ChatCommand): Promise<void>;
  /** Where "Oracle: Set API Key" keeps the key; the wiring file restarts the servers when it changes. */
  secrets: vscode.SecretStorage;
}

/** The secret-storage key of the user's endpoint key (`vlt.llm.baseUrl`). */
export const API_KEY_SECRET = 'vlt.llm.apiKey';

const toRange = (r: NavResultLocation['range']) => new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
const toLocation = (l: NavResultLocation) => new vscode.Location(vscode.Uri.parse(l.uri), toRange(l.range));

/** "TypeScript and JavaScript Language Features (language server)" or "the index (no language server answered)". */
export function provenanceOf(r: NavResult): string {
  const lsp = r.providers.find((p) => p.provider === 'lsp' && p.status === 'answered');
  if (lsp) return `${lsp.reason ?? 'the language server'} (language server)`;
  const kinds = [...new Set(r.locations.map((l) => l.provenance))];
  const what = kinds.map((k) => ({ ctags: 'ctags', graph: 'the index', search: 'search', lsp: 'a language server' })[k]).join(' + ');
  const why = r.providers.find((p) => p.provider === 'lsp');
  const reason = !why ? '' : why.status === 'skipped' ? `; ${why.reason ?? 'no language server'}` : why.status === 'failed' ? `; the language server failed: ${why.reason ?? ''}` : '; the language server found nothing';
  return `${what || 'nothing'} (fallback${reason})`;
}

function activePosition(): { editor: vscode.TextEditor; position: vscode.Position } {
  const editor = vscode.window.activeTextEditor;
  if (!editor) throw new Error('place the cursor on a symbol in an editor first');
  return { editor, position: editor.selection.active };
}

/** Asks, shows the answer, and returns it (for callers such as tests and other extensions). */
async function navigate(host: CommandHost, what: 'used' | 'defined'): Promise<NavResult> {
  const { editor, position } = activePosition();
  const server = host.serverFor(editor.document.uri);
  const request = what === 'used' ? whereUsedRequest : whereDefinedRequest;
  const settings = readSettings(server.folder);
  const r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, cancellable: true, title: what === 'used' ? 'Oracle: finding uses…' : 'Oracle: finding the definition…' }, (_progress, token) =>
    server.client.sendRequest(request, { target: { textDocument: { uri: editor.document.uri.toString() }, position: { line: position.line, character: position.character } }, ...(what === 'used' ? { budgetMs: settings.referencesBudgetMs } : {}) }, token),
  );
  const source = provenanceOf(r);
  host.log.info(`${what === 'used' ? 'where used' : 'where defined'} ${r.name}: ${r.locations.length} from ${source}${r.notes.length ? `; ${r.notes.join('; ')}` : ''}`);
  if (r.locations.length === 0) {
    const why = r.notes[0] ?? (r.suggestions.length ? `no symbol by that name; did you mean ${r.suggestions.slice(0, 3).join(', ')}?` : 'no symbol at the cursor');
    void vscode.window.showInformationMessage(`Oracle: no ${what === 'used' ? 'uses' : 'definition'} of ${r.name || 'this'} found: ${why}`);
    return r;
  }
  const partial = r.notes.find((n) => n.startsWith('partial:'));
  vscode.window.setStatusBarMessage(`Oracle: ${r.locations.length} ${what === 'used' ? 'reference' : 'definition'}${r.locations.length === 1 ? '' : 's'} of ${r.name} from ${source}${partial ? ' (partial: the time budget ran out)' : ''}`, 8000);
  if (partial) void vscode.window.showInformationMessage(`Oracle: ${partial.replace(/^partial: /, 'partial answer: ')}`);
  if (what === 'defined' && r.locations.length === 1 && !r.ambiguous) {
    const l = r.locations[0]!;
    await vscode.window.showTextDocument(vscode.Uri.parse(l.uri), { selection: toRange(l.range) });
    return r;
  }
  if (settings.whereUsedPresentation === 'quickPick' || r.ambiguous) {
    const pick = await vscode.window.showQuickPick(
      r.locations.map((l) => ({ label: `${l.path}:${l.line}`, description: `${l.provenance}${l.exact ? ', exact' : `, ${l.confidence}`}`, detail: l.text, l })),
      { title: `${r.name}: ${r.locations.length} from ${source}`, matchOnDetail: true },
    );
    if (pick) await vscode.window.showTextDocument(vscode.Uri.parse(pick.l.uri), { selection: toRange(pick.l.range) });
    return r;
  }
  await vscode.commands.executeCommand('editor.action.showReferences', editor.document.uri, position, r.locations.map(toLocation));
  return r;
}

async function searchCode(host: CommandHost): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const server = host.serverFor(editor?.document.uri);
  const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
  const query = await vscode.window.showInputBox({ prompt: 'Search the code of this workspace: words, identifiers, a stack trace', value: selected });
  if (!query) return;
  const { hits } = await server.client.sendRequest(searchRequest, { query, k: 30 });
  const pick = await vscode.window.showQuickPick(
    hits.map((h) => ({ label: h.symbol ?? h.path.split('/').pop() ?? h.path, description: `${h.path}:${(h.snippetLine ?? h.range.start.line) + 1}`, detail: h.snippet.split('\n').find((l) => l.trim()) ?? '', h })),
    { matchOnDescription: true, placeHolder: hits.length ? `${hits.length} results for "${query}"` : `no results for "${query}"` },
  );
  if (pick) await vscode.window.showTextDocument(vscode.Uri.parse(pick.h.uri), { selection: new vscode.Range(pick.h.snippetLine ?? pick.h.range.start.line, 0, pick.h.snippetLine ?? pick.h.range.start.line, 0) });
}

async function reindex(host: CommandHost): Promise<void> {
  const server = host.serverFor(vscode.window.activeTextEditor?.document.uri);
  const r = await server.client.sendRequest(reindexRequest);
  void vscode.window.showInformationMessage(`Oracle: re-indexed ${server.folder.name}: ${r.filesParsed} files parsed, ${r.filesRemoved} removed, ${r.chunksAdded} chunks, in ${(r.ms / 1000).toFixed(1)} s`);
}

async function syncNow(host: CommandHost): Promise<void> {
  const server = host.serverFor(vscode.window.activeTextEditor?.document.uri);
  const s = await server.client.sendRequest(syncRequest);
  vscode.window.setStatusBarMessage(`Oracle: index synced (generation ${s.generation}, ${s.files} files)`, 5000);
}

/** Seconds as a person reads them: 40 s, 3 min, 1 h 05 min. */
function duration(seconds: number): string {
  if (seconds < 90) return `${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  const h = Math.floor(seconds / 3600);
  return `${h} h ${String(Math.round((seconds - h * 3600) / 60)).padStart(2, '0')} min`;
}

/** An index run's progress in words: `parse 1,200/60,191 files · 95/s · 10 min left`. */
export function describeProgress(p: NonNullable<ServerStatus['progress']>): string {
  const unit = p.phase === 'parse' || p.phase === 'discover' ? ' files' : '';
  const parts = [`${p.phase} ${p.done.toLocaleString('en-US')}/${p.total.toLocaleString('en-US')}${unit}`];
  if (p.rate !== undefined) parts.push(`${p.rate >= 10 ? Math.round(p.rate) : p.rate}/s`);
  if (p.secondsLeft !== undefined) parts.push(`${duration(p.secondsLeft)} left`);
  return parts.join(' · ');
}

const MCP_STATE: Record<ServerStatus['mcpState'], string> = {
  on: 'on',
  off: 'off (setting vlt.mcp.enabled)',
  restricted: 'off (Restricted Mode)',
  starting: 'starting once the index is open',
  failed: 'did not start (see the Vlt Oracle log)',
};

export function describeStatus(s: ServerStatus): string {
  const lines = [
    `Workspace: ${s.workspace}`,
    `State: ${s.state}${s.progress ? ` (${describeProgress(s.progress)})` : ''}${s.error ? ` — ${s.error.code}: ${s.error.message}` : ''}`,
    s.partialFiles !== null ? `Partial: the index holds the ${s.partialFiles} files saved before indexing was cancelled; Sync Index Now finishes it` : '',
    `Index: ${s.files} files, ${s.chunks} chunks, ${s.symbols} symbols; generation ${s.generation}; last update ${s.lastUpdate ?? 'never'}`,
    s.queue ? `Queue: ${s.queue.pending} pending, ${s.queue.uncommittedFiles} files (${s.queue.uncommittedLines} lines) not yet committed; ${s.queue.commits} commits${s.queue.lastCommit ? `, last ${s.queue.lastCommit}` : ''}${s.queue.error ? `; last error ${s.queue.error.code}: ${s.queue.error.message}` : ''}` : 'Queue: none',
    `Language servers: ${s.languageServers.map((l) => `${l.name} (${l.languages.join(', ')}): ${l.state}`).join('; ') || (s.state === 'ready' ? 'none for the languages of this workspace' : 'listed once the index is open')}`,
    `Answered by the index in this window: ${s.fallbackLanguages.join(', ') || 'none'}`,
    `MCP: ${s.mcp ? s.mcp.url : MCP_STATE[s.mcpState]}`,
    s.restricted ? 'Restricted Mode: no model is called and no workspace program runs.' : '',
  ];
  return lines.filter(Boolean).join('\n');
}

async function showStatus(host: CommandHost): Promise<void> {
  const server = host.serverFor(vscode.window.activeTextEditor?.document.uri);
  const s = await server.client.sendRequest(statusRequest);
  host.log.info(describeStatus(s));
  if (s.progress) {
    // While an index run goes on, the status offers to stop it.
    const pick = await vscode.window.showInformationMessage(`Oracle: indexing ${server.folder.name}: ${describeProgress(s.progress)}.`, 'Cancel Indexing', 'Show Details');
    if (pick === 'Cancel Indexing') await cancelIndexing(host);
    else if (pick) host.log.show(true);
    return;
  }
  const partial = s.partialFiles !== null ? ` Partial: ${s.partialFiles} files saved before indexing was cancelled.` : '';
  const pick = await vscode.window.showInformationMessage(`Oracle: ${s.state}, ${s.files} files, ${s.chunks} chunks, generation ${s.generation}${s.queue?.uncommittedFiles ? `, ${s.queue.uncommittedFiles} queued` : ''}.${partial}`, ...(partial ? ['Finish Indexing'] : []), 'Show Details');
  if (pick === 'Finish Indexing') await syncNow(host);
  else if (pick) host.log.show(true);
}

async function cancelIndexing(host: CommandHost): Promise<void> {
  const server = host.serverFor(vscode.window.activeTextEditor?.document.uri);
  const r = await server.client.sendRequest(cancelIndexingRequest);
  vscode.window.setStatusBarMessage(r.cancelled ? 'Oracle: indexing cancelled; what it indexed is kept and searchable' : 'Oracle: no indexing to cancel', 5000);
}

async function copyMcpConnection(host: CommandHost): Promise<void> {
  const server = host.serverFor(vscode.window.activeTextEditor?.document.uri);
  const s = await server.client.sendRequest(statusRequest);
  if (!s.mcp) {
    throw new Error(s.restricted ? 'the MCP server does not run in Restricted Mode; trust the workspace to start it' : 'the MCP server is off (setting vlt.mcp.enabled) or has not started yet');
  }
  const text = [
    `# Claude Code`,
    `claude mcp add --transport http vlt ${s.mcp.url} --header "Authorization: Bearer ${s.mcp.token}"`,
    ``,
    `# VS Code / Cursor (.vscode/mcp.json)`,
    JSON.stringify({ servers: { vlt: { type: 'http', url: s.mcp.url, headers: { Authorization: `Bearer ${s.mcp.token}` } } } }, null, 2),
  ].join('\n');
  await vscode.env.clipboard.writeText(text);
  void vscode.window.showInformationMessage(`Oracle: MCP connection for ${s.mcp.url} copied (it contains the bearer token; keep it private).`);
}

/** Every palette command, by id; the wiring file registers them with one error handler. */
export function commandTable(host: CommandHost): Record<string, () => Promise<unknown>> {
  return {
    'vlt.whereUsed': () => navigate(host, 'used'),
    'vlt.whereDefined': () => navigate(host, 'defined'),
    'vlt.search': () => searchCode(host),
    'vlt.repoMap': () => host.repoMap.show(),
    'vlt.repoMapAsText': () => host.repoMap.openAsText(),
    'vlt.reindex': () => reindex(host),
    'vlt.sync': () => syncNow(host),
    'vlt.status': () => showStatus(host),
    'vlt.cancelIndexing': () => cancelIndexing(host),
    'vlt.copyMcpConnection': () => copyMcpConnection(host),
    'vlt.setApiKey': () => setApiKey(host),
    'vlt.ask': () => host.chat({ type: 'focusInput' }),
    'vlt.newSession': () => host.chat({ type: 'newSession' }),
    'vlt.askAboutSelection': () => askAbout(host, 'selection'),
    'vlt.askAboutFile': () => askAbout(host, 'file'),
  };
}

/** Most characters of a selection put into a question. */
const MAX_SELECTION_CHARS = 4000;

/** Puts the selection (or the active file) into the chat's question as context. */
async function askAbout(host: CommandHost, what: 'selection' | 'file'): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) throw new Error('open a file in an editor first');
  const folder = vscode.workspace.getWorkspaceFolder(editor.document.uri);
  const path = folder ? vscode.workspace.asRelativePath(editor.document.uri, false) : editor.document.uri.fsPath;
  const sel = editor.selection;
  if (what === 'selection' && !sel.isEmpty) {
    const text = editor.document.getText(sel);
    await host.chat({
      type: 'addContext',
      item: { kind: 'selection', path, startLine: sel.start.line + 1, endLine: sel.end.line + 1, text: text.length > MAX_SELECTION_CHARS ? `${text.slice(0, MAX_SELECTION_CHARS)}\n…` : text, language: editor.document.languageId },
      question: 'What does this do?',
    });
    return;
  }
  await host.chat({ type: 'addContext', item: { kind: 'file', path }, question: what === 'file' ? 'How does this file work?' : 'What does this do?' });
}

/** Asks for the endpoint's key and keeps it in the secret storage (empty removes it). */
async function setApiKey(host: CommandHost): Promise<void> {
  const value = await vscode.window.showInputBox({
    title: 'Oracle: Set API Key',
    prompt: "The key of your OpenAI-compatible endpoint (the vlt.llm.baseUrl setting; default OpenRouter). It is kept in VS Code's secret storage, never in settings or vlt.toml. Empty removes it.",
    password: true,
    ignoreFocusOut: true,
  });
  if (value === undefined) return;
  if (value.trim()) await host.secrets.store(API_KEY_SECRET, value.trim());
  else await host.secrets.delete(API_KEY_SECRET);
  void vscode.window.showInformationMessage(value.trim() ? 'Vlt Oracle: API key saved; the servers restart with it.' : 'Vlt Oracle: API key removed.');
}
