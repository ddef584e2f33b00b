/**
 * One MCP server per client session (a stdio connection, an HTTP session) over a workspace
 * server: the workspace's tools through the MCP adapter (server.ts), its shared context, and the
 * instructions a client shows its model. Every host that serves MCP (`vlt mcp`, `vlt serve`, the
 * daemon, the editor's `vlt lsp`) opens its sessions here.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { version as packageVersion } from '../../package.json';
import type { WorkspaceServer } from '../server/workspace';
import { createMcpServer } from './server';

export const MCP_SERVER_NAME = 'vlt-oracle';

export const MCP_INSTRUCTIONS = [
  'Vlt Oracle indexes the source code of this workspace and keeps its notes and development threads.',
  'Start with ask_oracle for any question about how this codebase works, where something is used, or why it changed: one call returns a short answer citing [path:line], instead of many file reads.',
  'Use search_code to find definitions, implementations and uses by identifier, words, path fragment or pasted error text before opening files; follow next_cursor for more hits.',
  'Use find_definition and find_references for exact navigation (a language server when one runs, else the index, with provenance on every answer), and get_repo_map for an overview ranked by importance.',
  'Notes (search_notes, read_note, ...) hold the project knowledge; threads (thread_push, thread_read, thread_seek) are development memory across sessions.',
  'Use index_status to see what is indexed and what was skipped.',
].join(' ');

/** A fresh MCP server over the workspace's shared context: one per stdio connection or HTTP session. */
export function newMcpServer(ws: WorkspaceServer): McpServer {
  // Each call's author (a thread entry's default) is the session's client: createMcpServer sets it.
  return createMcpServer(ws.tools(), ws.ctx, {
    name: MCP_SERVER_NAME,
    version: packageVersion,
    instructions: MCP_INSTRUCTIONS,
    onCall: (call) => ws.onCall(call),
  });
}
