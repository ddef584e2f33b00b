/**
 * The VS Code host's one wiring file. It logs to one LogOutputChannel, opens the engine on
 * the first workspace folder, and registers every command from one table. The search view
 * (a webview) and the palette search both go through the same engine.
 */
import * as vscode from 'vscode';
import * as path from 'node:path';
import { Engine, type SearchHit } from '../core/engine';
import { isVltError, toVltError } from '../core/errors';
import type { Logger } from '../core/ports';
import { nodeWorkspaceFs } from '../node/fs';
import { SearchViewProvider } from './search-view';

let log: vscode.LogOutputChannel;
let reader: Engine | undefined;
const disposables: vscode.Disposable[] = [];

function channelLogger(channel: vscode.LogOutputChannel): Logger {
  return {
    debug: (m) => channel.debug(m),
    info: (m) => channel.info(m),
    warn: (m) => channel.warn(m),
    error: (m) => {
      channel.error(m);
      channel.show(true);
    },
  };
}

function workspaceRoot(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder || folder.uri.scheme !== 'file') throw toVltError(new Error('open a local folder to use Vlt Oracle'), 'USAGE');
  return folder.uri.fsPath;
}

async function reindex(): Promise<void> {
  const root = workspaceRoot();
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Vlt Oracle: indexing', cancellable: true }, async (progress, token) => {
    const abort = new AbortController();
    token.onCancellationRequested(() => abort.abort());
    const writer = await Engine.open(root, { fs: nodeWorkspaceFs, logger: channelLogger(log) }, 'write');
    try {
      let last = 0;
      const report = await writer.index({
        signal: abort.signal,
        onProgress: (ev) => {
          if (ev.total <= 0) return;
          const pct = (ev.done / ev.total) * 100;
          progress.report({ message: `${ev.phase} ${ev.done}/${ev.total}`, increment: Math.max(0, pct - last) });
          last = pct;
        },
      });
      log.info(`indexed ${report.filesParsed} files, ${report.chunksAdded} chunks in ${report.ms.total.toFixed(0)} ms`);
    } finally {
      await writer.close();
    }
  });
  await reader?.close();
  reader = undefined;
}

async function engine(): Promise<Engine> {
  if (reader) return reader;
  const root = workspaceRoot();
  let r = await Engine.open(root, { fs: nodeWorkspaceFs, logger: channelLogger(log) }, 'read');
  if (r.isEmpty) {
    await r.close();
    await reindex();
    r = await Engine.open(root, { fs: nodeWorkspaceFs, logger: channelLogger(log) }, 'read');
  }
  reader = r;
  return r;
}

async function search(query: string): Promise<SearchHit[]> {
  return (await (await engine()).search(query, { k: 20 })).hits;
}

async function openHit(relPath: string, line: number): Promise<void> {
  const uri = vscode.Uri.file(path.join(workspaceRoot(), relPath));
  const pos = new vscode.Position(Math.max(0, line - 1), 0);
  await vscode.window.showTextDocument(uri, { selection: new vscode.Range(pos, pos) });
}

async function searchCommand(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
  const query = await vscode.window.showInputBox({ prompt: 'Search the code of this workspace', value: selected });
  if (!query) return;
  const hits = await search(query);
  const pick = await vscode.window.showQuickPick(
    hits.map((h) => ({ label: `${h.symbol ?? path.basename(h.path)}`, description: `${h.path}:${h.start_line}`, detail: h.snippet.split('\n')[0], hit: h })),
    { matchOnDescription: true, placeHolder: hits.length ? `${hits.length} results for "${query}"` : 'no results' },
  );
  if (pick) await openHit(pick.hit.path, pick.hit.start_line);
}

/** Runs a command, showing failures to the user and in the log instead of losing them. */
function guarded(fn: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await fn();
    } catch (e) {
      const err = isVltError(e) ? e : toVltError(e);
      log.error(`${err.code}: ${err.message}`);
      void vscode.window.showErrorMessage(`Vlt Oracle: ${err.message}`);
    }
  };
}

const COMMANDS: Record<string, () => Promise<void>> = {
  'vlt.reindex': reindex,
  'vlt.search': searchCommand,
};

export function activate(context: vscode.ExtensionContext): void {
  log = vscode.window.createOutputChannel('Vlt Oracle', { log: true });
  disposables.push(log);
  try {
    for (const [name, fn] of Object.entries(COMMANDS)) disposables.push(vscode.commands.registerCommand(name, guarded(fn)));
    const view = new SearchViewProvider(context.extensionUri, { search, open: openHit, logger: channelLogger(log) });
    disposables.push(vscode.window.registerWebviewViewProvider(SearchViewProvider.viewType, view));
    context.subscriptions.push(...disposables);
  } catch (e) {
    log.error(`activation failed: ${(e as Error).message}`);
    void vscode.window.showErrorMessage(`Vlt Oracle failed to start: ${(e as Error).message}`);
    throw e;
  }
}

export async function deactivate(): Promise<void> {
  await reader?.close();
  reader = undefined;
}
