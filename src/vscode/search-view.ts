/**
 * The search sidebar: a webview filled by `fillWebview` (its strict Content-Security-Policy),
 * with `{type}` messages both ways.
 */
import * as vscode from 'vscode';
import { fillWebview } from './webview-html';
import { errorMessage } from './errors';
import type { SearchKind } from '../protocol/lsp';
import type { SearchHostToView, SearchViewHit, SearchViewToHost } from '../protocol/webview';

export interface SearchViewDeps {
  search(query: string, kind: SearchKind | undefined): Promise<SearchViewHit[]>;
  open(path: string, line: number): Promise<void>;
  log: vscode.LogOutputChannel;
}

/** The kinds the view offers, as search_code takes them. */
const KINDS: ReadonlyArray<[SearchKind, string]> = [
  ['function', 'functions'],
  ['method', 'methods'],
  ['class', 'classes and structs'],
  ['type', 'types and interfaces'],
  ['test', 'tests'],
  ['doc', 'docs'],
];

export class SearchViewProvider implements vscode.WebviewViewProvider {
  static readonly viewType = 'vlt.searchView';

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly deps: SearchViewDeps,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    const webview = view.webview;
    fillWebview(webview, this.extensionUri, {
      title: 'Vlt Oracle',
      script: 'webview.js',
      style: 'view.css',
      body: [
        '<form id="form"><input id="query" type="search" placeholder="Search code: words, identifiers, a stack trace" aria-label="query">',
        '<select id="kind" aria-label="only this kind"><option value="">all kinds</option>',
        ...KINDS.map(([value, label]) => `<option value="${value}">${label}</option>`),
        '</select></form><div id="status" role="status"></div><ol id="results"></ol>',
      ].join(''),
    });
    webview.onDidReceiveMessage(async (msg: SearchViewToHost) => {
      try {
        if (msg.type === 'search') {
          const hits = await this.deps.search(msg.query, msg.kind);
          await webview.postMessage({ type: 'results', query: msg.query, ...(msg.kind ? { kind: msg.kind } : {}), hits } satisfies SearchHostToView);
        } else if (msg.type === 'open') {
          await this.deps.open(msg.path, msg.line);
        }
      } catch (e) {
        const message = errorMessage(e);
        this.deps.log.error(`search view: ${message}`);
        await webview.postMessage({ type: 'error', message: message.replace(/^[A-Z_]+: /, ''), ...(msg.type === 'search' ? { query: msg.query, ...(msg.kind ? { kind: msg.kind } : {}) } : {}) } satisfies SearchHostToView);
      }
    });
  }
}
