/**
 * The workspace daemon's wire protocol: the messages the thin front (`src/daemon/client.ts`)
 * and the daemon (`src/daemon/server.ts`) exchange, and what a daemon says about itself.
 *
 * One connection carries one command. Messages are JSON, one per line:
 * - client → daemon: `hello` (first, once), `stdin` (the answer to `stdin?`), `cancel`, `stop`;
 * - daemon → client: `ok` or `refused` (the answer to `hello`), `out` and `err` (the command's
 *   stdout and stderr text), `stdin?` (the command reads stdin), `exit` (last).
 * An `mcp` hello is different: after `ok` the connection is an MCP stdio stream (`vlt mcp`), and
 * after an `lsp` one an editor's LSP stream (`vlt lsp --stdio`); a
 * `serve` hello gets `serving` (or `err` and `exit`), and the endpoint lives while the connection does.
 *
 * A leaf: types and constants only, loaded by the front on every command.
 */

/** Bumped when a message changes shape; a daemon of another protocol is replaced. */
export const PROTOCOL = 2;

export type ClientMessage =
  | { t: 'hello'; protocol: number; build: string; env: string; kind: 'cli'; argv: string[]; cwd: string; stdoutTTY: boolean; stderrTTY: boolean; term?: string }
  | { t: 'hello'; protocol: number; build: string; env: string; kind: 'stop' }
  | { t: 'hello'; protocol: number; build: string; env: string; kind: 'status' }
  /** After `ok`, the connection carries MCP (newline-delimited JSON-RPC) both ways. */
  | { t: 'hello'; protocol: number; build: string; env: string; kind: 'mcp' }
  /** `vlt lsp --stdio`: after `ok`, the connection carries the editor's LSP (Content-Length framed) both ways. */
  | { t: 'hello'; protocol: number; build: string; env: string; kind: 'lsp' }
  /** `vlt serve` on loopback: the daemon serves MCP over HTTP (and the chat) while the connection lasts. */
  | { t: 'hello'; protocol: number; build: string; env: string; kind: 'serve'; port?: number; chat: boolean }
  | { t: 'stdin'; data: string | null }
  | { t: 'cancel' };

export type DaemonMessage =
  | { t: 'ok'; pid: number }
  | { t: 'refused'; reason: 'protocol' | 'build' | 'env' | 'stopping'; detail: string }
  | { t: 'out'; data: string }
  | { t: 'err'; data: string }
  | { t: 'stdin?' }
  | { t: 'status'; status: DaemonStatusInfo }
  | { t: 'exit'; code: number }
  /** The HTTP endpoint of a `serve` connection listens (what `vlt serve` prints as one JSON line). */
  | { t: 'serving'; listening: { url: string; token_file: string | null; pid: number; chat_url?: string } };

/** What a running daemon says about itself. */
export interface DaemonStatusInfo {
  pid: number;
  version: string;
  build: string;
  protocol: number;
  workspace: string;
  socket: string;
  started_at: string;
  uptime_s: number;
  idle_minutes: number;
  rss_bytes: number;
  requests: number;
  active: number;
  mcp_sessions: number;
  /** Editors connected through `vlt lsp`, and how many of them share the daemon's index. */
  editors: number;
  editors_shared: number;
  index: string;
  /** Catching up with edits or warming navigation in the background. */
  warming: boolean;
}

/** `.vlt/daemon.json`: who serves the workspace. Informational: nothing here is trusted for a connection. */
export interface DaemonRecord {
  pid: number;
  version: string;
  build: string;
  protocol: number;
  socket: string;
  workspace: string;
  started_at: string;
}
