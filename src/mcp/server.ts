/**
 * The MCP adapter: turns the tool definitions of `src/core/tools` into MCP tools on an
 * `McpServer`. It defines no tool of its own; it maps a definition's schema, title,
 * description and annotations onto `registerTool`, and a tool outcome onto a CallToolResult.
 *
 * Every failure reaches the model as an `isError: true` result it can read and act on, never
 * as a protocol error or a crash:
 * - arguments that fail the schema: the SDK (1.32) validates them against the zod schema
 *   before our callback runs, and turns its own InvalidParams error into an `isError` result
 *   ("Input validation error: ..."); test/mcp/stdio.test.ts pins that behaviour;
 * - everything the handler throws: `invokeTool` turns it into a VltError, answered here as
 *   `<CODE>: message`.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { agentIdFromClientInfo } from '../core/memory';
import { invokeTool, type ToolContext, type ToolDefinition, type ToolOutcome } from '../core/tools/definitions';

export interface McpServerInfo {
  name: string;
  version: string;
  /** Shown to the model by clients that support server instructions. */
  instructions?: string;
  /**
   * Called after every tool call with the client's agent id (`name@version` from its
   * initialize request): the host records the exchange in the shared session context. It
   * must not throw; it is not awaited by the call.
   */
  onCall?: (call: { tool: string; author: string; input: unknown; outcome: ToolOutcome<object> }) => void;
}

/**
 * The most array elements and object members one call's arguments may hold. The tools take a
 * handful of scalar arguments; the cap stops a pathological payload before zod walks it.
 */
const MAX_TOOL_INPUT_ELEMENTS = 256;

export function createMcpServer(tools: readonly ToolDefinition[], ctx: ToolContext, info: McpServerInfo): McpServer {
  const server = new McpServer(
    { name: info.name, version: info.version },
    {
      capabilities: { tools: {} },
      maxToolInputElements: MAX_TOOL_INPUT_ELEMENTS,
      ...(info.instructions ? { instructions: info.instructions } : {}),
    },
  );
  // A malformed message or a transport hiccup is logged (to stderr, through the host's
  // logger) and the server keeps serving; stdout carries only the protocol.
  server.server.onerror = (e) => ctx.logger.warn(`mcp: ${e.message}`);
  for (const def of tools) {
    server.registerTool(
      def.name,
      {
        title: def.title,
        description: def.description,
        inputSchema: def.inputSchema,
        outputSchema: def.outputSchema,
        annotations: { title: def.title, ...def.annotations },
      },
      async (args: unknown, extra): Promise<CallToolResult> => {
        const t0 = performance.now();
        const author = agentIdFromClientInfo(server.server.getClientVersion());
        const outcome = await invokeTool(def, { ...ctx, signal: extra.signal, author }, args);
        ctx.logger.debug(`mcp: ${def.name} ${outcome.ok ? 'ok' : outcome.error.code} in ${(performance.now() - t0).toFixed(1)} ms`);
        info.onCall?.({ tool: def.name, author, input: args, outcome });
        return toCallToolResult(outcome);
      },
    );
  }
  return server;
}

/**
 * A tool outcome as MCP content: the value as `structuredContent`, and the same JSON as a text
 * block for clients that only read text. The JSON is compact, because it is what the token
 * budget of a tool (`max_tokens`) was measured against.
 */
export function toCallToolResult(outcome: ToolOutcome<object>): CallToolResult {
  if (!outcome.ok) return { isError: true, content: [{ type: 'text', text: `${outcome.error.code}: ${outcome.error.message}` }] };
  return {
    structuredContent: outcome.value as Record<string, unknown>,
    content: [{ type: 'text', text: JSON.stringify(outcome.value) }],
  };
}
