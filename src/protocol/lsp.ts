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

/** The kinds a search can be narrowed to (search_code's `kind`). */
export type SearchKind = 'function' | 'method' | 'class' | 'type' | 'test' | 'doc';

export interface SearchParams {
  query: string;
  k?: number;
  language?: string;
  /** A glob over workspace-relative paths. */
  path?: string;
  /** Only these kinds: function, method, class, type, test, doc. */
  kind?: SearchKind[];
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
  /** 0-based line the snippet starts at: the hit's definition or its best lines, inside `range`. */
  snippetLine?: number;
  /** The file changed (or vanished) since it was indexed: the snippet was read from disk now. */
  stale?: true;
  /** Why it is stale. */
  note?: string;
  /** SHA-1 of the file content the hit was indexed from. */
  contentHash?: string;
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

/**
 * Cancels the index run in progress (the first build, a re-index, or the catching up after a
 * restart). What it indexed is kept and searchable, labelled partial; a sync or re-index finishes it.
 */
export const cancelIndexingRequest = new RequestType0<{ cancelled: boolean }, void>('vlt/cancelIndexing');

/** One file of a repository map with the definitions it shows, most important files first. */
export interface RepoMapFileItem {
  path: string;
  uri: string;
  /** The file's PageRank (all files' sum to 1). */
  rank: number;
  symbols: Array<{ name: string; kind: string; line: number; endLine: number; signature: string }>;
}

export interface RepoMapResult {
  /** The map as text (what `get_repo_map` returns). */
  text: string;
  /** The same map as data: files and their definitions, for a view whose entries open them. */
  files: RepoMapFileItem[];
  /** The focus file, workspace-relative, when the map was ranked around one. */
  focus?: string;
  notes: string[];
}

export const repoMapRequest = new RequestType<RepoMapParams, RepoMapResult, void>('vlt/repoMap');

export interface ServerStatus {
  state: 'starting' | 'indexing' | 'ready' | 'error';
  workspace: string;
  files: number;
  chunks: number;
  symbols: number;
  generation: number;
  lastUpdate: string | null;
  /** The index run in progress: files done of all, and after its first seconds its rate (per second) and time left. */
  progress: { phase: string; done: number; total: number; rate?: number; secondsLeft?: number } | null;
  /** The index holds only the files a cancelled (or stopped) build saved: their number, else null. */
  partialFiles: number | null;
  queue: { pending: number; uncommittedFiles: number; uncommittedLines: number; lastCommit: string | null; commits: number; error: { code: string; message: string } | null } | null;
  languageServers: Array<{ name: string; languages: string[]; state: string; detail: string }>;
  /** Languages whose definitions, references and hovers this server provides to the editor. */
  fallbackLanguages: string[];
  restricted: boolean;
  mcp: McpEndpointInfo | null;
  /** Why `mcp` is null: off by setting, off in Restricted Mode, starting after the first index, or failed to start. */
  mcpState: 'on' | 'off' | 'restricted' | 'starting' | 'failed';
  error: { code: string; message: string } | null;
  pid: number;
  /**
   * Served by the workspace daemon, whose one index the terminal's commands and agents' MCP
   * sessions share; false when this server holds its own (no daemon, or this editor's trust or
   * index settings differ from the daemon's).
   */
  shared: boolean;
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
  /** Let the model call tools in a loop (needs a tool-calling model). */
  agent?: boolean;
  /** Which model answers (an id from the host's model list); default the server's configured one. */
  model?: string;
  /** Also return the retrieval trace (`explain`). */
  explain?: boolean;
  /** Names this question in the `vlt/askEvent` notifications that stream its progress and text. */
  askId?: string;
  /** The shared session to ask in; the server switches to it first when it differs. */
  session?: string;
}

/** A code citation's lines when the answer was written: a later check marks it stale when they changed. */
export interface CitedLines {
  path: string;
  start: number;
  end: number;
  /** A hash of the lines' text; absent when they could not be read. */
  hash?: string;
  /** The lines, numbered (for hovers); or why they could not be read. */
  text: string;
}

/** The oracle's answer (the `vlt oracle --json` contract) and, per code citation, its lines then. */
export interface ChatAnswer {
  question: string;
  rewritten?: string;
  type: string;
  mode: 'llm' | 'agent' | 'extractive';
  answer: string;
  /** With the evidence brief: how it was found (markdown), which the chat shows folded. */
  details?: string;
  noContext: boolean;
  citations: Array<{ citation: string; source: string; path: string; line?: number }>;
  files: string[];
  degraded?: string;
  model?: string;
  usage?: { promptTokens: number; completionTokens: number };
  timings: Record<string, number>;
  explain?: unknown;
  truncated?: boolean;
  /** The session the question was asked in. */
  session: string;
  /** Keyed by the citation as written (`[a.go:12-20]`). */
  cited: Record<string, CitedLines>;
}

export const askRequest = new RequestType<AskParams, ChatAnswer, void>('vlt/ask');

/** What the oracle reports while it answers (the core's OracleEvent, as sent). */
export type AskEvent =
  | { type: 'phase'; phase: string; message: string }
  | { type: 'step'; name: string; family: 'code' | 'notes' | 'threads' | 'git'; state: 'running' | 'ok' | 'failed' | 'timeout'; results?: number; ms?: number }
  | { type: 'text'; text: string }
  | { type: 'tool'; name: string; args: string };

/** Streams one `vlt/ask` (with an `askId`): retrieval steps as they run and the answer's text as it is written. */
export const askEventNotification = new NotificationType<{ askId: string; event: AskEvent }>('vlt/askEvent');

export interface SessionInfo {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  exchanges: number;
}

/** Recent shared sessions, most recent first, and the one calls go to now. */
export const sessionsRequest = new RequestType<{ limit?: number }, { active: string; sessions: SessionInfo[] }, void>('vlt/sessions');
/** Switches the shared session (a new one without `id`) for every client of the server: chat, MCP agents, tools. */
export const useSessionRequest = new RequestType<{ id?: string }, { id: string }, void>('vlt/useSession');

export interface SessionEventInfo {
  kind: 'question' | 'answer' | 'tool_call' | 'tool_result';
  author: string;
  tool?: string;
  text: string;
  created_at: string;
}

/** What a session holds verbatim, oldest first: the chat shows agents' calls from it. */
export const sessionEventsRequest = new RequestType<{ id?: string }, { id: string; events: SessionEventInfo[] }, void>('vlt/sessionEvents');

/** The current lines of code citations, to show them on hover and to mark stale ones. */
export const citedLinesRequest = new RequestType<{ items: Array<{ path: string; start: number; end: number }> }, CitedLines[], void>('vlt/citedLines');

/** Where a citation leads: a workspace file at a range, or a read-only document (a note, a thread, a commit). */
export type CitationTarget =
  | { kind: 'file'; path: string; uri: string; start: number; end: number }
  | { kind: 'document'; title: string; language: 'markdown'; content: string };

/** A model the chat can answer with: `configured` (the server's own), `editor:<id>` (the editor's), `none` (the evidence brief). */
export interface ModelChoice {
  id: string;
  label: string;
  /** Where it comes from, for the picker's tooltip. */
  detail?: string;
}

/** Every model the chat can answer with, the one to preselect, and why a kind is missing. */
export interface ModelsResult {
  choices: ModelChoice[];
  default: string;
  /** Why there is no configured model (or no model at all), when there is none. */
  reason?: string;
}

export const modelsRequest = new RequestType0<ModelsResult, void>('vlt/models');

export const citationTargetRequest = new RequestType<{ citation: string }, CitationTarget, void>('vlt/citationTarget');

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

// -- server → client: the editor's language models ---------------------------------------------

/** A chat model the editor offers (VS Code's Language Model API: Copilot and others). */
export interface EditorChatModelInfo {
  id: string;
  name: string;
  vendor: string;
  family: string;
  maxInputTokens: number;
}

export const editorChatModelsRequest = new RequestType0<EditorAnswer<EditorChatModelInfo[]>, void>('vlt/editor.chatModels');

/** The engine's chat messages as sent (the core's ChatMessage). */
export type EditorChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: Array<{ id: string; name: string; arguments: string }> }
  | { role: 'tool'; toolCallId: string; content: string };

export interface EditorChatParams {
  /** Names this completion in its `vlt/editor.chatDelta` notifications. */
  requestId: string;
  /** An id from `vlt/editor.chatModels`. */
  model: string;
  messages: EditorChatMessage[];
  tools?: Array<{ name: string; description: string; parameters: Record<string, unknown> }>;
  maxTokens?: number;
  /** Shown in the editor's consent prompt: why the extension wants the model. */
  justification?: string;
}

export interface EditorChatResult {
  text: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: string;
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
}

/**
 * One completion by an editor model. The reply's text streams as `vlt/editor.chatDelta`
 * notifications, all sent before the response; cancelling the request cancels the model's.
 * A refusal (no consent, quota, model gone) is `ok: false` with the editor's reason.
 */
export const editorChatRequest = new RequestType<EditorChatParams, EditorAnswer<EditorChatResult>, void>('vlt/editor.chat');
export const editorChatDeltaNotification = new NotificationType<{ requestId: string; text: string }>('vlt/editor.chatDelta');

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
  /** The client answers `vlt/editor.chatModels` and `vlt/editor.chat` with the editor's language models. */
  editorModels?: boolean;
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
  /** The shared session to start in (the chat's last one). */
  session?: string;
  /** Replace vlt.toml's `[index] include` / `exclude` (workspace-relative globs). */
  include?: string[];
  exclude?: string[];
}

/**
 * Whether a failed request's message (`CODE: message`, the form the server answers errors in)
 * says how the request was put rather than that something failed: no identifier under the
 * cursor, a path that is not there. The editor shows these as warnings and logs them at info.
 */
export function isUserMistake(message: string): boolean {
  return /^(?:USAGE|PATH_NOT_FOUND|NOT_A_DIRECTORY|PATH_OUTSIDE_WORKSPACE|NOT_FOUND|REF_NOT_FOUND|RESTRICTED|CANCELLED):/.test(message);
}
