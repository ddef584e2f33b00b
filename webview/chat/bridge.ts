/**
 * The one interface between the chat UI and whatever hosts it. The VS Code view talks to the
 * extension through `postMessage` (`vscode-bridge.ts`); the browser page talks to `vlt serve`
 * over HTTP and Server-Sent Events (`http-bridge.ts`). The UI (`view.ts`) sees only this.
 */
import type { AskEvent, AskParams, ChatAnswer, CitationTarget, CitedLines, ModelChoice, SessionEventInfo, SessionInfo } from '../../src/protocol/lsp';
import type { ChatCommand, ContextItem, ModelInfo } from '../../src/protocol/webview';

export type { AskEvent, AskParams, ChatAnswer, ChatCommand, CitationTarget, CitedLines, ContextItem, ModelChoice, ModelInfo, SessionEventInfo, SessionInfo };

export interface AskHandle {
  answer: Promise<ChatAnswer>;
  /** Stops the question: the model and every retrieval path are cancelled. */
  cancel(): void;
}

export interface Bridge {
  /** `vscode` or `browser`: the view adapts a few affordances (how citations open). */
  readonly kind: 'vscode' | 'browser';
  ask(params: AskParams, onEvent: (e: AskEvent) => void): AskHandle;
  sessions(): Promise<{ active: string; sessions: SessionInfo[] }>;
  useSession(id?: string): Promise<{ id: string }>;
  sessionEvents(id?: string): Promise<{ id: string; events: SessionEventInfo[] }>;
  citedLines(items: Array<{ path: string; start: number; end: number }>): Promise<CitedLines[]>;
  /** Opens what a citation leads to; returns the target when the view must show it itself (the browser). */
  openCitation(citation: string): Promise<CitationTarget | null>;
  /** Opens an http(s) link outside the view (after the host's own confirmation). */
  openExternal(url: string): void;
  /** Dropped file URIs as workspace-relative paths; files outside the workspace are left out. */
  workspacePaths(uris: string[]): Promise<string[]>;
  models(): Promise<ModelInfo>;
  selectModel(id: string): Promise<ModelInfo>;
  loadState(): Promise<unknown>;
  saveState(state: unknown): void;
  onCommand(fn: (c: ChatCommand) => void): void;
  /** Diagnostics the host logs (CSP violations, render errors). */
  log(level: 'info' | 'warn' | 'error', message: string): void;
}
