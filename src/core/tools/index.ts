/**
 * The tool registry: every agent tool, in the order hosts list them. Code tools work over the
 * engine alone; memory tools (notes, threads) over the workspace's Memory, which the host
 * opens on first use. Hosts take this list and adapt it (MCP, VS Code language-model tools).
 */
import type { Memory } from '../memory';
import { indexStatusTool, searchCodeTool, type ToolDefinition } from './definitions';
import { memoryTools, type MemoryToolOptions } from './memory-tools';
import { locateFilesTool } from './locate-tool';
import { getContextTool, impactAnalysisTool, listRoutesTool } from './context-tools';
import { findDefinitionTool, findReferencesTool, getDiagnosticsTool } from './nav-tools';
import { askOracleTool, readFileRangeTool } from './oracle-tools';
import { repoMapTool } from './repomap-tool';

/** The code tools, which need only the engine. */
export const CODE_TOOLS: readonly ToolDefinition[] = [askOracleTool, searchCodeTool, locateFilesTool, findDefinitionTool, findReferencesTool, getDiagnosticsTool, getContextTool, impactAnalysisTool, listRoutesTool, repoMapTool, readFileRangeTool, indexStatusTool];

export interface ToolRegistryOptions {
  /** Opens the workspace's memory (notes vault, threads); without it only the code tools are listed. */
  getMemory?: () => Promise<Memory>;
  memory?: MemoryToolOptions;
}

/** Every tool the host should offer. */
export function allTools(opts: ToolRegistryOptions = {}): readonly ToolDefinition[] {
  return opts.getMemory ? [...CODE_TOOLS, ...memoryTools(opts.getMemory, opts.memory)] : CODE_TOOLS;
}
