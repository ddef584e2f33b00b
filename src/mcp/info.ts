/**
 * `vlt mcp info`: where this workspace's MCP server is (or would be), its token, and
 * configuration a user can paste into Claude Code, Cursor or VS Code.
 */
import { stat } from 'node:fs/promises';
import * as path from 'node:path';
import { VltError, errorMessage } from '../core/errors';
import type { Logger } from '../core/ports';
import { DEFAULT_MCP_HOST, DEFAULT_MCP_PORT, MCP_PATH } from './http';
import { loadOrCreateToken, readServerRecord } from './token';

const SERVER_NAME = 'vlt';

/**
 * A new one-time link to the browser chat of this workspace's running `vlt serve`, asked of the
 * server with the bearer token: a browser session that ended (idle, signed out) needs no restart.
 */
export async function newChatLink(workspace: string, logger: Logger): Promise<{ chat_url: string }> {
  const root = path.resolve(workspace);
  const rec = await readServerRecord(root);
  if (!rec) throw new VltError('USAGE', `no \`vlt serve\` is running for ${root}; start it, and it prints a link`);
  const token = await loadOrCreateToken(root, logger);
  const origin = new URL(rec.url).origin;
  let res: Response;
  try {
    res = await fetch(`${origin}/chat/link`, { method: 'POST', headers: { Authorization: `Bearer ${token.token}` }, signal: AbortSignal.timeout(10_000) });
  } catch (e) {
    throw new VltError('IO', `cannot reach \`vlt serve\` at ${origin}: ${errorMessage(e)}`, undefined, { cause: e });
  }
  if (res.status === 404) throw new VltError('USAGE', `the \`vlt serve\` at ${origin} does not serve the chat (started with --no-chat)`);
  const body = (await res.json().catch(() => ({}))) as { result?: { path?: string }; error?: string };
  if (!res.ok || typeof body.result?.path !== 'string') throw new VltError('ACCESS_DENIED', `\`vlt serve\` at ${origin} refused a new chat link: ${body.error ?? `HTTP ${res.status}`}`);
  return { chat_url: `${origin}${body.result.path}` };
}

/**
 * How a client starts this program: the Node that runs it and the CLI script, both absolute,
 * so the command works from a checkout or any install (the package is not on the npm registry,
 * so `npx vlt-oracle` would not).
 */
export function thisProgram(): { command: string; args: string[] } {
  const script = process.argv[1];
  return { command: process.execPath, args: script ? [path.resolve(script)] : [] };
}
const VSCODE_TOKEN_INPUT = 'vlt-mcp-token';

export interface McpInfo {
  workspace: string;
  /** The running `vlt serve` of this workspace, or where a default one would listen. */
  http: { running: true; url: string; pid: number; started: string } | { running: false; url: string };
  token: string;
  /** Absolute path of the token file; null when the token comes from the environment. */
  token_file: string | null;
  token_source: 'file' | 'env';
  /** Ready-to-paste configuration, keyed by client and transport. */
  config: {
    claude_code_stdio: string;
    claude_code_http: string;
    /** `.cursor/mcp.json` */
    cursor_stdio: object;
    cursor_http: object;
    /** `.vscode/mcp.json` */
    vscode_stdio: object;
    vscode_http: object;
  };
}

/** Gathers the info, creating the token when there is none yet (a client needs it before the first start). */
export async function mcpInfo(workspace: string, logger: Logger, cwd: string = process.cwd(), program: { command: string; args: string[] } = thisProgram()): Promise<McpInfo> {
  const root = path.resolve(workspace);
  const st = await stat(root).catch(() => undefined);
  if (!st) throw new VltError('PATH_NOT_FOUND', `workspace ${root} does not exist`);
  if (!st.isDirectory()) throw new VltError('NOT_A_DIRECTORY', `workspace ${root} is not a directory`);
  const token = await loadOrCreateToken(root, logger);
  const rec = await readServerRecord(root);
  const url = rec?.url ?? `http://${DEFAULT_MCP_HOST}:${DEFAULT_MCP_PORT}${MCP_PATH}`;
  // Claude Code starts a project's servers in the project folder, where "." is the workspace.
  const wsArg = path.resolve(cwd) === root ? '.' : shellQuote(root);
  const stdioArgs = [...program.args, 'mcp', '--workspace', '${workspaceFolder}'];
  const stdioCommand = [program.command, ...program.args].map(shellQuote).join(' ');
  const bearer = `Bearer ${token.token}`;
  return {
    workspace: root,
    http: rec ? { running: true, url: rec.url, pid: rec.pid, started: rec.started } : { running: false, url },
    token: token.token,
    token_file: token.source.kind === 'file' ? token.source.path : null,
    token_source: token.source.kind,
    config: {
      claude_code_stdio: `claude mcp add ${SERVER_NAME} -- ${stdioCommand} mcp --workspace ${wsArg}`,
      claude_code_http: `claude mcp add --transport http ${SERVER_NAME} ${url} --header "Authorization: ${bearer}"`,
      cursor_stdio: { mcpServers: { [SERVER_NAME]: { command: program.command, args: stdioArgs } } },
      cursor_http: { mcpServers: { [SERVER_NAME]: { url, headers: { Authorization: bearer } } } },
      vscode_stdio: { servers: { [SERVER_NAME]: { type: 'stdio', command: program.command, args: stdioArgs } } },
      // VS Code asks for the token once and keeps it in its secret storage, so that a
      // workspace's mcp.json can be committed without it.
      vscode_http: {
        servers: { [SERVER_NAME]: { type: 'http', url, headers: { Authorization: `Bearer \${input:${VSCODE_TOKEN_INPUT}}` } } },
        inputs: [{ type: 'promptString', id: VSCODE_TOKEN_INPUT, description: 'Vlt Oracle MCP token (vlt mcp info prints it)', password: true }],
      },
    },
  };
}

/** The human-readable form of {@link mcpInfo}. */
export function formatMcpInfo(info: McpInfo): string {
  const c = info.config;
  const json = (v: object) => JSON.stringify(v, null, 2).replace(/^/gm, '  ');
  const lines = [
    `workspace   ${info.workspace}`,
    info.http.running
      ? `http        ${info.http.url} (vlt serve, pid ${info.http.pid}, since ${info.http.started})`
      : `http        not running; \`vlt serve\` listens on ${info.http.url}`,
    `token       ${info.token}`,
    `            ${info.token_file ? `from ${info.token_file} (mode 0600; delete it to make a new one)` : 'from $VLT_MCP_TOKEN'}`,
    '',
    'Claude Code, stdio (the server starts with the agent):',
    `  ${c.claude_code_stdio}`,
    'Claude Code, HTTP (while `vlt serve` runs):',
    `  ${c.claude_code_http}`,
    '',
    'Cursor, .cursor/mcp.json, stdio:',
    json(c.cursor_stdio),
    'Cursor, HTTP (keep the token out of version control: ~/.cursor/mcp.json is yours alone):',
    json(c.cursor_http),
    '',
    'VS Code, .vscode/mcp.json, stdio:',
    json(c.vscode_stdio),
    'VS Code, HTTP (VS Code asks for the token once and keeps it in its secret storage):',
    json(c.vscode_http),
  ];
  return `${lines.join('\n')}\n`;
}

/** Quotes a path for a POSIX shell when it needs it. */
function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
