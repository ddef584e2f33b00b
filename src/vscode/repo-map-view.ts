/**
 * The repository map as a tree in the Oracle sidebar: the files around the active editor's, the
 * active file first and the rest by rank (PageRank over the reference graph, personalised to the
 * active file), each with the definitions the map shows. A definition opens at its line. The map
 * follows the active file while the view is visible; "Oracle: Show Repo Map" reveals it, and
 * its toolbar opens the same map as text (what agents get from `get_repo_map`).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { repoMapRequest, type RepoMapFileItem, type RepoMapResult } from '../protocol/lsp';
import type { FolderServer } from './server-client';

/** The map's size: enough for the neighbourhood of a file, small enough to read as a list. */
const MAP_TOKENS = 3000;
/** How long the active file must stay put before the map follows it. */
const FOLLOW_DELAY_MS = 400;
/** Files shown expanded when the map arrives (the focus file and the next ones). */
const EXPANDED_FILES = 3;

type Symbol_ = RepoMapFileItem['symbols'][number];
type Node = { kind: 'file'; file: RepoMapFileItem; index: number } | { kind: 'symbol'; file: RepoMapFileItem; symbol: Symbol_ } | { kind: 'note'; text: string };

/** The focus file first (the map ranks its neighbourhood, and it is what the user is in), then by rank. */
export function orderFiles(files: readonly RepoMapFileItem[], focus: string | undefined): RepoMapFileItem[] {
  return [...files].sort((a, b) => Number(b.path === focus) - Number(a.path === focus) || b.rank - a.rank || (a.path < b.path ? -1 : 1));
}

export class RepoMapView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  static readonly viewId = 'vlt.repoMapView';
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<Node>;
  private readonly subscriptions: vscode.Disposable[] = [];
  private map: RepoMapResult | undefined;
  private files: RepoMapFileItem[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Counts refreshes, so that an answer a newer refresh overtook is dropped. */
  private asked = 0;
  /** The newest refresh. */
  private latest: Promise<RepoMapResult | undefined> | undefined;

  constructor(private readonly deps: { serverFor(uri?: vscode.Uri): FolderServer; log: vscode.LogOutputChannel }) {
    this.view = vscode.window.createTreeView(RepoMapView.viewId, { treeDataProvider: this, showCollapseAll: true });
    this.subscriptions.push(
      this.view,
      this.changed,
      this.view.onDidChangeVisibility((e) => e.visible && this.follow()),
      vscode.window.onDidChangeActiveTextEditor(() => this.view.visible && this.follow()),
    );
  }

  /** Reveals the view and maps the active file's neighbourhood; resolves with the map shown (files in the view's order). */
  async show(): Promise<RepoMapResult | undefined> {
    await vscode.commands.executeCommand(`${RepoMapView.viewId}.focus`);
    // Revealing the view schedules a follow; this refresh is that one.
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    return this.refresh();
  }

  /** The map shown, as a text document (the agents' form of it). */
  async openAsText(): Promise<void> {
    const map = this.map ?? (await this.refresh());
    if (!map) return;
    const title = map.focus ? `around ${map.focus}` : 'workspace';
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: `# Repository map ${title}\n\nRanked by PageRank over the import and reference graph${map.focus ? ', around the active file' : ''}.\n\n\`\`\`text\n${map.text}\n\`\`\`\n` });
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  /** Maps the active file's neighbourhood; a refresh that a newer one overtakes resolves with the newer one's map. */
  refresh(): Promise<RepoMapResult | undefined> {
    const run = this.load(++this.asked);
    this.latest = run;
    return run;
  }

  private async load(mine: number): Promise<RepoMapResult | undefined> {
    const editor = vscode.window.activeTextEditor;
    const uri = editor?.document.uri.scheme === 'file' ? editor.document.uri : undefined;
    const server = this.deps.serverFor(uri);
    const map = await server.client.sendRequest(repoMapRequest, { ...(uri && vscode.workspace.getWorkspaceFolder(uri) ? { focus: uri.toString() } : {}), tokens: MAP_TOKENS });
    if (mine !== this.asked) return this.latest;
    this.files = orderFiles(map.files, map.focus);
    this.map = { ...map, files: this.files };
    this.view.description = map.focus ? `around ${path.posix.basename(map.focus)}` : server.folder.name;
    this.view.message = this.files.length === 0 ? 'Nothing is indexed yet: the map appears once the index holds definitions.' : undefined;
    this.changed.fire();
    return this.map;
  }

  getChildren(node?: Node): Node[] {
    if (!node) return [...(this.map?.notes ?? []).map((text): Node => ({ kind: 'note', text })), ...this.files.map((file, index): Node => ({ kind: 'file', file, index }))];
    return node.kind === 'file' ? node.file.symbols.map((symbol): Node => ({ kind: 'symbol', file: node.file, symbol })) : [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'note') {
      const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
      item.iconPath = new vscode.ThemeIcon('info');
      return item;
    }
    const uri = vscode.Uri.parse(node.file.uri);
    if (node.kind === 'file') {
      const expanded = node.index < EXPANDED_FILES || node.file.path === this.map?.focus;
      const item = new vscode.TreeItem(uri, node.file.symbols.length === 0 ? vscode.TreeItemCollapsibleState.None : expanded ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
      item.description = path.posix.dirname(node.file.path) === '.' ? '' : path.posix.dirname(node.file.path);
      item.tooltip = `${node.file.path}\nrank ${(node.file.rank * 100).toFixed(2)}% of the repository${node.file.path === this.map?.focus ? ' (the active file)' : ''}`;
      item.id = `file:${node.file.path}`;
      if (node.file.symbols.length === 0) item.command = { command: 'vscode.open', title: 'Open', arguments: [uri] };
      return item;
    }
    const s = node.symbol;
    const item = new vscode.TreeItem(s.signature || s.name, vscode.TreeItemCollapsibleState.None);
    item.description = `:${s.line}`;
    item.tooltip = `${node.file.path}:${s.line}-${s.endLine}\n${s.kind} ${s.name}`;
    item.iconPath = new vscode.ThemeIcon(ICONS[s.kind] ?? 'symbol-misc');
    item.id = `symbol:${node.file.path}:${s.line}:${s.name}`;
    const at = new vscode.Position(Math.max(0, s.line - 1), 0);
    item.command = { command: 'vscode.open', title: 'Open the definition', arguments: [uri, { selection: new vscode.Range(at, at) }] };
    return item;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.subscriptions) d.dispose();
  }

  private follow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refresh().catch((e: unknown) => this.deps.log.info(`repository map: ${e instanceof Error ? e.message : String(e)}`));
    }, FOLLOW_DELAY_MS);
  }
}

const ICONS: Record<string, string> = {
  function: 'symbol-function',
  method: 'symbol-method',
  class: 'symbol-class',
  struct: 'symbol-struct',
  interface: 'symbol-interface',
  trait: 'symbol-interface',
  enum: 'symbol-enum',
  type: 'symbol-type-parameter',
  constant: 'symbol-constant',
  variable: 'symbol-variable',
  field: 'symbol-field',
  property: 'symbol-property',
  module: 'symbol-module',
  namespace: 'symbol-namespace',
};
