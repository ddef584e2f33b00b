/**
 * The search sidebar: a webview with a strict Content Security Policy (default-src 'none',
 * a nonce per load), resources limited to media/ and dist/, and `{type}` messages both ways.
 */
import * as vscode from 'vscode';
import { randomBytes } from 'node:crypto';

/** One result as the view shows it. */
export interface ViewHit {
  path: string;
  start_line: number;
  symbol: string | null;
  kind: string;
  snippet: string;
}

/** Messages from the webview. */
export type ViewRequest = { type: 'search'; query: string } | { type: 'open'; path: string; line: number };
/** Messages to the webview. */
export type ViewResponse = { type: 'results'; query: string; hits: ViewHit[] } | { type: 'error'; message: string };

export interface SearchViewDeps {
  search(query: string): Promise<ViewHit[]>;
  open(path: string, line: number): Promise<void>;
  log: vscode.LogOutputChannel;
}

export class SearchViewProvider implements vscode.WebviewViewProvider {
  static readonly viewType = 'vlt.searchView';

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly deps: SearchViewDeps,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    const webview = view.webview;
    webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media'), vscode.Uri.joinPath(this.extensionUri, 'dist')] };
    const nonce = randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'view.css'));
    webview.html = `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<link rel="stylesheet" href="${style}"><title>Vlt Oracle</title></head>
<body><form id="form"><input id="query" type="search" placeholder="Search code: words, identifiers, a stack trace" aria-label="query"></form>
<div id="status" role="status"></div><ol id="results"></ol>
<script nonce="${nonce}" src="${script}"></script></body></html>`;
    webview.onDidReceiveMessage(async (msg: ViewRequest) => {
      try {
        if (msg.type === 'search') {
          const hits = await this.deps.search(msg.query);
          await webview.postMessage({ type: 'results', query: msg.query, hits } satisfies ViewResponse);
        } else if (msg.type === 'open') {
          await this.deps.open(msg.path, msg.line);
        }
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        this.deps.log.error(`search view: ${message}`);
        await webview.postMessage({ type: 'error', message: message.replace(/^[A-Z_]+: /, '') } satisfies ViewResponse);
      }
    });
  }
}
