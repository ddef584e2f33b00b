/**
 * Opening the workspace memory (notes vault, threads, session context) for the Node hosts:
 * the configured chat model and embeddings, and the prompt templates shipped with the package.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { loadConfig, warnIgnoredKeysOnce } from '../core/config';
import { OpenAIEmbeddingProvider } from '../core/embeddings';
import { createChatModel } from '../core/llm/openai-chat';
import { Memory } from '../core/memory';
import type { Logger } from '../core/ports';

/**
 * The package's `prompts/` folder: next to `dist/` in a bundle or an installed package, at the
 * repository root when running from sources. Undefined when neither exists.
 */
export function locatePromptsDir(): string | undefined {
  const here = typeof __dirname === 'string' ? __dirname : process.cwd();
  for (const dir of [path.resolve(here, '..', 'prompts'), path.resolve(here, '..', '..', 'prompts')]) {
    if (existsSync(path.join(dir, 'thread-summary.md'))) return dir;
  }
  return undefined;
}

/**
 * Opens the workspace memory with the configured language model and embeddings, if any.
 * `models: false` (a restricted workspace) calls neither: summaries and search stay local.
 * `trusted` is the host's trust decision for vlt.toml (undefined: `vlt trust` decides).
 */
export async function openMemory(root: string, logger: Logger, opts: { models?: boolean; trusted?: boolean } = {}): Promise<Memory> {
  const config = await loadConfig(root, process.env, opts.trusted !== undefined ? { trusted: opts.trusted } : {});
  warnIgnoredKeysOnce(config, path.resolve(root), logger);
  const models = opts.models !== false;
  let chat = models ? createChatModel(config, logger) : undefined;
  const promptsDir = locatePromptsDir();
  if (chat && !promptsDir) {
    logger.warn('prompt templates not found next to the program; summaries stay extractive');
    chat = undefined;
  }
  const e = config.embeddings;
  const embeddings = models && e.enabled ? new OpenAIEmbeddingProvider({ baseUrl: e.baseUrl, model: e.model, dimensions: e.dimensions, apiKey: e.apiKey, logger }) : undefined;
  return Memory.open(root, { logger, config, chat, embeddings, promptsDir });
}

