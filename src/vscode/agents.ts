/**
 * What agents inside VS Code reach: every core agent tool as a language-model tool
 * (`vscode.lm.registerTool`, declared in the manifest from the one definition in src/core/tools),
 * forwarded to the folder's server so that the call runs on the shared engine and lands in the
 * shared session; and the server's MCP endpoint, offered to VS Code's MCP client through
 * `vscode.lm.registerMcpServerDefinitionProvider`.
 */
import * as vscode from 'vscode';
import { toolRequest } from '../protocol/lsp';
import type { FolderServer } from './server-client';
import { errorMessage } from './errors';

interface ManifestTool {
  name: string;
  displayName: string;
}

export function registerLanguageModelTools(manifestTools: readonly ManifestTool[], serverFor: (uri?: vscode.Uri) => FolderServer, log: vscode.LogOutputChannel): vscode.Disposable[] {
  if (typeof vscode.lm?.registerTool !== 'function') {
    log.warn('this VS Code has no language-model tool API; the tools are available over MCP only');
    return [];
  }
  return manifestTools.map((t) =>
    vscode.lm.registerTool<Record<string, unknown>>(t.name, {
      prepareInvocation: () => ({ invocationMessage: `${t.displayName}…` }),
      async invoke(options, token) {
        const server = serverFor(vscode.window.activeTextEditor?.document.uri);
        const name = t.name.replace(/^vlt_/, '');
        try {
          const value = await server.client.sendRequest(toolRequest, { name, input: options.input, author: 'vscode.lm' }, token);
          return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(JSON.stringify(value))]);
        } catch (e) {
          // The model reads the message: `CODE: what went wrong`.
          throw new Error(errorMessage(e));
        }
      },
    }),
  );
}

/** Offers each folder's MCP endpoint (with its token) to VS Code's own MCP client. */
export function registerMcpProvider(servers: () => readonly FolderServer[], changed: vscode.Event<unknown>, log: vscode.LogOutputChannel): vscode.Disposable[] {
  const lm = vscode.lm as typeof vscode.lm | undefined;
  if (typeof lm?.registerMcpServerDefinitionProvider !== 'function' || typeof vscode.McpHttpServerDefinition !== 'function') {
    log.info('this VS Code cannot register MCP servers from an extension (1.101 or later can); use "Oracle: Copy MCP Connection"');
    return [];
  }
  const emitter = new vscode.EventEmitter<void>();
  let last = '';
  const sub = changed(() => {
    const now = servers().map((s) => s.status?.mcp?.url ?? '').join(',');
    if (now !== last) {
      last = now;
      emitter.fire();
    }
  });
  try {
    const provider = lm.registerMcpServerDefinitionProvider('vlt.mcp', {
      onDidChangeMcpServerDefinitions: emitter.event,
      provideMcpServerDefinitions: () =>
        servers().flatMap((s) => {
          const mcp = s.status?.mcp;
          if (!mcp) return [];
          return [new vscode.McpHttpServerDefinition(`Vlt Oracle (${s.folder.name})`, vscode.Uri.parse(mcp.url), { Authorization: `Bearer ${mcp.token}` })];
        }),
    });
    return [provider, sub, emitter];
  } catch (e) {
    log.warn(`could not register the MCP server with VS Code: ${errorMessage(e)}`);
    sub.dispose();
    emitter.dispose();
    return [];
  }
}
