/**
 * The protocol between `vlt lsp` and its clients beyond standard LSP: every custom request and
 * notification, declared once with its types (as rust-analyzer's `lsp_ext.ts`). The server
 * (`src/lsp/main.ts`) and the VS Code client (`src/vscode/`) both import it, so a change to a
 * message is a type error on both sides.
 *
 * Positions are LSP's: URIs and 0-based lines and UTF-16 characters.
 */
import { NotificationType, RequestType, RequestType0, type Location, type Position, type Range } from 'vscode-languageserver-protocol';

// -- client → server --------------------------------------------------------------------------

export interface SearchParams {
  query: string;
  k?: number;
  language?: string;
  /** A glob over workspace-relative paths. */
  path?: string;
}

export interface SearchResultItem {
  /** Workspace-relative path. */
  path: string;
  uri: string;
  range: Range;
  symbol: string | null;
  kind: string;
  score: number;
  retrievers: string[];
  snippet: string;
}

export const searchRequest = new RequestType<SearchParams, { hits: SearchResultItem[] }, void>('vlt/search');

/** A position in an open document, or a symbol name (`Writer.Close`). */
export type NavTarget = { textDocument: { uri: string }; position: Position } | { symbol: string };

export interface NavParams {
  target: NavTarget;
  /** Most locations to return (references); default 500. */
  limit?: number;
  /** References resolved by the index: answer with what was found after this long (the notes say it is partial). */
  budgetMs?: number;
}

export interface NavResultLocation extends Location {
  /** Workspace-relative path, or the absolute path of a location outside the workspace. */
  path: string;
  /** 1-based line, for citations. */
  line: number;
  provenance: 'lsp' | 'ctags' | 'graph' | 'search';
  exact: boolean;
  confidence: string;
  /** The source line, trimmed. */
  text: string;
}

export interface NavResult {
  /** The name asked about, as the navigator understood it. */
  name: string;
  locations: NavResultLocation[];
  /** The definition the references belong to, when known. */
  definition?: NavResultLocation;
  ambiguous: boolean;
  /** Which providers were tried, in order, with status and reason ("lsp: answered (typescript)"). */
  providers: Array<{ provider: string; status: string; reason?: string; ms: number }>;
  /** What the user should know: a fallback answered, a budget ran out, nothing is defined by that name. */
  notes: string[];
  suggestions: string[];
  truncated: boolean;
}

export const whereUsedRequest = new RequestType<NavParams, NavResult, void>('vlt/whereUsed');
export const whereDefinedRequest = new RequestType<NavParams, NavResult, void>('vlt/whereDefined');

export interface RepoMapParams {
  /** Rank the map around this file (a URI of the workspace). */
  focus?: string;
  /** Limit it to a folder (workspace-relative). */
  scope?: string;
  tokens?: number;
}

export const repoMapRequest = new RequestType<RepoMapParams, { text: string }, void>('vlt/repoMap');

export interface ServerStatus {
  state: 'starting' | 'indexing' | 'ready' | 'error';
  workspace: string;
  files: number;
  chunks: number;
  symbols: number;
  generation: number;
  lastUpdate: string | null;
  progress: { phase: string; done: number; total: number } | null;
  queue: { pending: number; uncommittedFiles: number; uncommittedLines: number; lastCommit: string | null; commits: number; error: { code: string; message: string } | null } | null;
  languageServers: Array<{ name: string; languages: string[]; state: string; detail: string }>;
  /** Languages whose definitions, references and hovers this server provides to the editor. */
  fallbackLanguages: string[];
  restricted: boolean;
  mcp: McpEndpointInfo | null;
  error: { code: string; message: string } | null;
  pid: number;
}

export interface McpEndpointInfo {
  url: string;
  port: number;
  /** The bearer token: only to the editor that started the server, for "Copy MCP Connection". */
  token: string;
}

export const statusRequest = new RequestType0<ServerStatus, void>('vlt/status');

export interface ReindexResult {
  filesParsed: number;
  filesRemoved: number;
  chunksAdded: number;
  ms: number;
}

/** A full incremental index run; reports `$/progress` when the client passes a work-done token. */
export const reindexRequest = new RequestType0<ReindexResult, void>('vlt/reindex');
/** Indexes every queued edit and commits ("Sync Index Now"). */
export const syncRequest = new RequestType0<ServerStatus, void>('vlt/sync');

export interface AskParams {
  question: string;
  /** Restrict the sources: code, notes, threads, git. */
  sources?: string[];
  noLlm?: boolean;
}

/** The oracle's answer object (the `vlt oracle --json` contract). */
export const askRequest = new RequestType<AskParams, Record<string, unknown>, void>('vlt/ask');

export interface ToolParams {
  /** A core agent tool's name (`find_references`). */
  name: string;
  /** Its arguments, validated against the tool's schema by the server. */
  input: unknown;
  /** Who asked, for the shared session (`vscode.lm`, a chat participant). */
  author?: string;
}

/** Runs one agent tool (the editor's language-model tools forward here); failures are response errors `CODE: message`. */
export const toolRequest = new RequestType<ToolParams, unknown, void>('vlt/tool');

/** Sent whenever the status changed (indexing progress, queue, ready, error): drives the status bar. */
export const didChangeStatusNotification = new NotificationType<ServerStatus>('vlt/didChangeStatus');

// -- server → client: the editor's live language servers --------------------------------------

export interface EditorPositionParams {
  uri: string;
  position: Position;
}

/** The editor's answer, or why there is none; `server` names who answered. */
export type EditorAnswer<T> = { ok: true; value: T; server: string } | { ok: false; reason: string };

export const editorDefinitionRequest = new RequestType<EditorPositionParams, EditorAnswer<Location[]>, void>('vlt/editor.definition');
export const editorReferencesRequest = new RequestType<EditorPositionParams & { includeDeclaration: boolean }, EditorAnswer<Location[]>, void>('vlt/editor.references');
export const editorHoverRequest = new RequestType<EditorPositionParams, EditorAnswer<string | null>, void>('vlt/editor.hover');
export const editorDiagnosticsRequest = new RequestType<{ uri: string }, EditorAnswer<Array<{ range: Range; severity: number; message: string; code?: string; source?: string }>>, void>('vlt/editor.diagnostics');
export const editorDocumentSymbolsRequest = new RequestType<{ uri: string }, EditorAnswer<Array<{ name: string; kind: number; range: Range; containerName?: string }>>, void>('vlt/editor.documentSymbols');

/** What the client passes in `initialize`'s `initializationOptions`. */
export interface InitializationOptions {
  /** The client answers the `vlt/editor.*` requests with its live language servers. */
  editorBridge?: boolean;
  /** Per language id (vlt's: go, python, …): the name of the extension that serves it in the editor. */
  editorServers?: Record<string, string>;
  /** Languages the server answers definition/references/hover for (no other provider in the editor). */
  fallbackLanguages?: string[];
  /** The workspace is not trusted: no models, no helper processes, no MCP endpoint. */
  restricted?: boolean;
  /** The editor trusts the workspace: its vlt.toml may choose endpoints and keys, its own TypeScript may run (absent: `vlt trust` decides). */
  trusted?: boolean;
  /** Spawn headless language servers too (off inside an editor that has its own). */
  headlessLanguageServers?: boolean;
  /** Start the MCP endpoint on loopback (port 0: any free port). */
  mcp?: { enabled: boolean; port?: number };
  queue?: { files?: number; lines?: number; timeoutSeconds?: number };
  /** Bound on one question to the editor's language servers. */
  editorTimeoutMs?: number;
  /** Bound on the index's resolution of references for the standard references request (default 5 s). */
  referencesBudgetMs?: number;
  /** Send debug lines too (the extension passes its log channel's level). */
  debug?: boolean;
  /** Replace vlt.toml's `[index] include` / `exclude` (workspace-relative globs). */
  include?: string[];
  exclude?: string[];
}
