/**
 * The commands that serve the workspace to other programs: `vlt mcp` (agents over stdio),
 * `vlt mcp info`, `vlt lsp` (an editor) and `vlt serve` (MCP over HTTP and the browser chat).
 * Each hosts its clients in the process that asked for it (the daemon forwards their streams).
 */
import type { Command } from 'commander';
import type { CommandContext } from './command-context';
import { port } from './options';

export function registerServerCommands(program: Command, c: CommandContext): void {
  const { out, json } = c;

  const mcp = program
    .command('mcp')
    .description("serve every agent tool (search_code, find_definition, find_references, ask_oracle, notes, threads, …) over MCP on stdin/stdout; logs go to stderr")
    .exitOverride()
    .action(async () => {
      c.here('mcp');
      // The global -C/--workspace is read here, so `vlt mcp --workspace DIR` and `vlt -C DIR mcp` agree.
      const { logger, progress } = c.wiring();
      // Loaded on demand, so that other commands do not pay for initialising the MCP SDK (~5 ms).
      const { runMcpStdio } = await import('../mcp/main');
      await runMcpStdio({ workspace: c.root(), logger, onProgress: progress.sink });
    });

  mcp
    .command('info')
    .description('the MCP server of this workspace: HTTP address, bearer token, and configuration for Claude Code, Cursor and VS Code')
    .option('--json', 'machine-readable output')
    .option('--chat-link', "print a new one-time link to the running `vlt serve`'s browser chat instead")
    .action(async (o: { json?: boolean; chatLink?: boolean }) => {
      const { logger } = c.wiring();
      const { mcpInfo, formatMcpInfo, newChatLink } = await import('../mcp/info');
      if (o.chatLink) {
        const link = await newChatLink(c.root(), logger);
        if (o.json) json(link);
        else out(link.chat_url);
        return;
      }
      const info = await mcpInfo(c.root(), logger, c.io.cwd);
      if (o.json) json(info);
      else out(formatMcpInfo(info));
    });

  program
    .command('lsp')
    .description('serve the workspace to an editor over the Language Server Protocol on stdin/stdout (workspace symbols, navigation, vlt/* requests, the MCP endpoint)')
    .option('--stdio', 'talk over stdin/stdout (the default and only transport)')
    // Clients add their own arguments (vscode-languageclient: --clientProcessId=PID).
    .allowUnknownOption(true)
    .allowExcessArguments(true)
    .action(async () => {
      c.here('lsp');
      // The workspace comes from the client's initialize request; the LSP log goes to the client.
      const { runLspServer } = await import('../lsp/main');
      const { startMcpEndpoint } = await import('../mcp/main');
      await runLspServer({ startMcp: (ws, o) => startMcpEndpoint(ws, o) });
      process.exit(0);
    });

  program
    .command('serve')
    .description('serve the agent tools over MCP Streamable HTTP and the chat in a browser (bearer token, loopback only); prints {"url","chat_url",...} as one JSON line on stdout')
    .option('--mcp-port <n>', 'port of the MCP endpoint (default 7457; 0 picks a free one)', port)
    .option('--host <address>', 'address to listen on (default 127.0.0.1; non-loopback needs --allow-remote)')
    .option('--allow-remote', 'permit a --host other machines can reach (anyone with the token can then read the code)')
    .option('--no-chat', 'do not serve the browser chat at /chat/ (its one-time login link is printed as chat_url)')
    .action(async (o: { mcpPort?: number; host?: string; allowRemote?: boolean; chat?: boolean }) => {
      c.here('serve');
      const { logger, progress } = c.wiring();
      const { runMcpHttp } = await import('../mcp/main');
      await runMcpHttp({
        workspace: c.root(),
        logger,
        onProgress: progress.sink,
        ...(o.mcpPort !== undefined ? { port: o.mcpPort } : {}),
        ...(o.host !== undefined ? { host: o.host } : {}),
        allowRemote: Boolean(o.allowRemote),
        chat: o.chat !== false,
        onListening: (l) => out(JSON.stringify({ url: l.url, token_file: l.token_file, pid: l.pid, ...(l.chat_url ? { chat_url: l.chat_url } : {}) })),
      });
    });
}
