/**
 * The oracle as the Node hosts (CLI, MCP server) build it: over an opened engine, with the
 * workspace memory, the configured language model and the prompt templates shipped with the
 * package, git history through the `git` program, and the host's language servers and ctags.
 */
import type { VltConfig } from '../core/config';
import type { Engine } from '../core/engine';
import type { LanguageServers } from '../core/intel/lsp';
import type { TagsProvider } from '../core/intel/navigate';
import type { ChatModel } from '../core/llm/chat';
import { createChatModel } from '../core/llm/openai-chat';
import { PromptLibrary } from '../core/llm/prompts';
import type { Memory } from '../core/memory';
import { Oracle } from '../core/oracle/oracle';
import { HttpReranker } from '../core/oracle/rerank-endpoint';
import type { Logger } from '../core/ports';
import type { ToolContext } from '../core/tools/definitions';
import { agentToolsFrom, allTools } from '../core/tools';
import { nodeWorkspaceFs } from './fs';
import { NodeGitHistory } from './git-history';
import { gitLocateHistory } from './locate-history';
import { locatePromptsDir } from './memory';
import { errorMessage } from '../core/errors';

export interface NodeOracleOptions {
  engine: Engine;
  logger: Logger;
  /** Opens the workspace memory; a failure leaves notes and threads out of the answer. */
  getMemory?: () => Promise<Memory>;
  intel?: { lsp?: LanguageServers; tags?: TagsProvider };
  /** The tool context agent mode runs the tools in (the host's own). */
  toolContext?: ToolContext;
  /** Forces the extractive oracle even when a model is configured. */
  noLlm?: boolean;
  /**
   * An untrusted workspace: no model, no rerank endpoint (vlt.toml could point either at a
   * server of its choosing) and no git history (its git configuration could run programs).
   */
  restricted?: boolean;
}

export function createNodeOracle(opts: NodeOracleOptions): Oracle {
  const { engine, logger } = opts;
  const promptsDir = locatePromptsDir();
  let chat = opts.noLlm || opts.restricted ? undefined : createChatModel(engine.config, logger);
  if (chat && !promptsDir) {
    logger.warn('prompt templates not found next to the program; answers stay extractive');
    chat = undefined;
  }
  const getMemory = opts.getMemory;
  const memory = getMemory
    ? () =>
        getMemory().catch((e: unknown) => {
          logger.warn(`oracle: notes and threads are unavailable: ${errorMessage(e)}`);
          return undefined;
        })
    : undefined;
  const ctx = opts.toolContext;
  const rerank = opts.restricted ? undefined : engine.config.oracle.rerank;
  return new Oracle({
    engine,
    fs: nodeWorkspaceFs,
    logger,
    ...(opts.restricted ? {} : { git: new NodeGitHistory(engine.root, { logger }), locateHistory: () => gitLocateHistory(engine.root, logger).get() }),
    ...(memory ? { memory } : {}),
    ...(opts.intel ? { intel: opts.intel } : {}),
    // The templates even without a configured model: a question may bring its own (the editor's).
    ...(promptsDir ? { prompts: new PromptLibrary(promptsDir) } : {}),
    ...(chat && promptsDir ? { chat } : {}),
    ...(rerank ? { reranker: new HttpReranker({ baseUrl: rerank.baseUrl, model: rerank.model, apiKey: rerank.apiKey, logger }) } : {}),
    pathTimeoutMs: engine.config.oracle.pathTimeoutMs,
    llmRerank: engine.config.oracle.llmRerank,
    ...(ctx ? { agentTools: () => agentToolsFrom(allTools({ memory: getMemory !== undefined }), { ...ctx, ...(getMemory ? { getMemory } : {}) }) } : {}),
  });
}

/**
 * The configured language model with the prompt templates next to the program, for the tools
 * that need a model whatever the question (the Librarian); undefined when none is configured or
 * the templates are missing.
 */
export function createNodeModel(config: VltConfig, logger: Logger): { chat: ChatModel; prompts: PromptLibrary } | undefined {
  const chat = createChatModel(config, logger);
  const dir = locatePromptsDir();
  return chat && dir ? { chat, prompts: new PromptLibrary(dir) } : undefined;
}
