/**
 * The tool registry: every agent tool, in the order hosts list them, and the types that make a
 * call by name checked end to end (`ToolName`, `ToolInput<N>`, `ToolOutput<N>`). Code tools
 * work over the engine alone; memory tools (notes, threads) over the workspace's Memory, which
 * the host opens on first use. Hosts take this list and adapt it (MCP, VS Code language-model
 * tools, the LSP server's `vlt/tool`), and the oracle's agent loop offers a subset.
 */
import type { z } from 'zod';
import type { AgentTool } from '../oracle/agent';
import { jsonSchemaOf } from '../llm/tool-schema';
import { indexStatusTool, invokeTool, searchCodeTool, type ToolContext, type ToolDefinition } from './definitions';
import { MEMORY_TOOLS } from './memory-tools';
import { delegateLibrarianTool } from './librarian';
import { locateFilesTool } from './locate-tool';
import { getContextTool, getGraphTool, impactAnalysisTool, listRoutesTool, searchGraphTool } from './context-tools';
import { findDefinitionTool, findReferencesTool, getDiagnosticsTool } from './nav-tools';
import { askOracleTool, readFileRangeTool } from './oracle-tools';
import { repoMapTool } from './repomap-tool';

/** The code tools, which need only the engine. */
export const CODE_TOOLS = [askOracleTool, searchCodeTool, locateFilesTool, findDefinitionTool, findReferencesTool, getDiagnosticsTool, getContextTool, impactAnalysisTool, listRoutesTool, getGraphTool, searchGraphTool, repoMapTool, readFileRangeTool, indexStatusTool] as const;

/** Every tool the registry defines, as its own type. */
export type AnyTool = (typeof CODE_TOOLS)[number] | (typeof MEMORY_TOOLS)[number] | typeof delegateLibrarianTool;
export type ToolName = AnyTool['name'];
type ToolNamed<N extends ToolName> = Extract<AnyTool, { name: N }>;
/** The arguments of tool `N`, as a caller writes them (defaults optional). */
export type ToolInput<N extends ToolName> = z.input<ToolNamed<N>['inputSchema']>;
/** The result of tool `N`. */
export type ToolOutput<N extends ToolName> = Awaited<ReturnType<ToolNamed<N>['handler']>>;

/** Every tool, code and memory, in the order hosts list them. */
export const ALL_TOOLS: readonly AnyTool[] = [...CODE_TOOLS, ...MEMORY_TOOLS, delegateLibrarianTool];

/**
 * The tools a host offers: every one when it serves memory (its ToolContext has `getMemory`),
 * else the code tools.
 */
export function allTools(opts: { memory: boolean }): readonly ToolDefinition[] {
  return opts.memory ? ALL_TOOLS : CODE_TOOLS;
}

/** The tools the oracle's model may call in agent mode (seed 001), by name. */
export const AGENT_TOOL_NAMES = ['search_code', 'find_definition', 'find_references', 'get_repo_map', 'read_file_range', 'search_notes', 'thread_seek'] as const satisfies readonly ToolName[];

/**
 * Offers tool definitions to the oracle's agent loop: their JSON schemas for the model, and a
 * runner that validates arguments and turns every failure into text the model can read.
 */
export function agentToolsFrom(defs: readonly ToolDefinition[], ctx: ToolContext): AgentTool[] {
  const wanted = new Set<string>(AGENT_TOOL_NAMES);
  return defs
    .filter((d) => wanted.has(d.name))
    .map((d) => ({
      name: d.name,
      description: d.description,
      parameters: jsonSchemaOf(d.inputSchema),
      async run(args: unknown, signal?: AbortSignal): Promise<string> {
        const outcome = await invokeTool(d, { ...ctx, ...(signal ? { signal } : {}) }, args);
        if (!outcome.ok) throw outcome.error;
        return JSON.stringify(outcome.value);
      },
    }));
}
