/**
 * The messages between the extension and its webviews (the chat and the search sidebar), typed
 * once for both ends, in the manner of Continue's protocol maps: each request method names its
 * parameters and its result, so a call on one side and its handler on the other are checked
 * against the same entry.
 *
 * The chat's view sends `{type: 'request', id, method, params}` and gets `{type: 'response',
 * id, result | error}`; a question's progress arrives as `askEvent`s; palette commands and menus
 * reach it as `command`s. A webview is a page the extension does not fully control (a
 * compromised renderer, a stale bundle), so the extension still checks what it receives.
 */
import type { AskEvent, AskParams, ChatAnswer, CitedLines, ModelChoice, SearchKind, SessionEventInfo, SessionInfo } from './lsp';

/** The models the chat can answer with (`none` is the extractive evidence brief) and the one in use. */
export interface ModelInfo {
  choices: ModelChoice[];
  active: string;
  /** Why a kind of model is missing (none configured, the editor's unavailable). */
  reason?: string;
}

/** Something the user put into the question: a selection, a file. */
export interface ContextItem {
  kind: 'selection' | 'file';
  path: string;
  startLine?: number;
  endLine?: number;
  /** The selected text (selections only), cut by the host. */
  text?: string;
  language?: string;
}

/** What the extension asks of the chat's view (a palette command, a menu). */
export type ChatCommand =
  | { type: 'newSession' }
  | { type: 'refresh' }
  | { type: 'focusInput' }
  | { type: 'modelsChanged' }
  | { type: 'ask'; question: string }
  | { type: 'addContext'; item: ContextItem; question?: string };

/** Every request the chat's view makes of the extension: its parameters and its result. */
export interface ChatViewRequests {
  ask: { params: AskParams & { askId: string }; result: ChatAnswer };
  sessions: { params: undefined; result: { active: string; sessions: SessionInfo[] } };
  useSession: { params: { id?: string }; result: { id: string } };
  sessionEvents: { params: { id?: string }; result: { id: string; events: SessionEventInfo[] } };
  citedLines: { params: { items: Array<{ path: string; start: number; end: number }> }; result: CitedLines[] };
  /** Opens what a citation leads to in the editor. */
  openCitation: { params: { citation: string }; result: null };
  /** Dropped file URIs as workspace-relative paths; files outside the workspace are left out. */
  workspacePaths: { params: { uris: string[] }; result: string[] };
  models: { params: undefined; result: ModelInfo };
  selectModel: { params: { id: string }; result: ModelInfo };
  /** The view's state as the extension keeps it (a window reload cannot lose it). */
  loadState: { params: undefined; result: unknown };
}

export type ChatViewMethod = keyof ChatViewRequests;

/** A request of the map, as sent. */
export type ChatViewRequest = { [M in ChatViewMethod]: { type: 'request'; id: number; method: M; params?: ChatViewRequests[M]['params'] } }[ChatViewMethod];

/** Messages from the chat's view to the extension. */
export type ChatViewToHost =
  | ChatViewRequest
  | { type: 'cancel'; askId: string }
  | { type: 'openExternal'; url: string }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string }
  | { type: 'saveState'; state: unknown }
  | { type: 'ready' };

/** Messages from the extension to the chat's view. */
export type ChatHostToView =
  | { type: 'response'; id: number; result?: unknown; error?: string }
  | { type: 'askEvent'; askId: string; event: AskEvent }
  | { type: 'command'; command: ChatCommand };

/** One search result as the sidebar shows it. */
export interface SearchViewHit {
  path: string;
  start_line: number;
  symbol: string | null;
  kind: string;
  snippet: string;
  /** The file changed since it was indexed; the snippet is what the file holds now. */
  stale?: true;
}

/** Messages from the search sidebar to the extension. */
export type SearchViewToHost = { type: 'search'; query: string; kind?: SearchKind } | { type: 'open'; path: string; line: number };

/** Messages from the extension to the search sidebar. */
export type SearchHostToView = { type: 'results'; query: string; kind?: SearchKind; hits: SearchViewHit[] } | { type: 'error'; message: string; query?: string; kind?: SearchKind };
