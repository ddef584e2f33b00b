/** Shared setup of the memory tests: a temporary workspace and Memory over the fake OpenAI server. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { defaultConfig, type VltConfig } from '../../../src/core/config';
import { OpenAIEmbeddingProvider } from '../../../src/core/embeddings';
import { OpenAIChatModel } from '../../../src/core/llm/openai-chat';
import { Memory } from '../../../src/core/memory';
import { silentLogger, type Clock, type Logger } from '../../../src/core/ports';
import type { FakeOpenAI } from '../../helpers/fake-openai';

export const PROMPTS_DIR = path.resolve(__dirname, '../../../prompts');

export function tempWorkspace(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'vlt-memory-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function config(overrides: { budgetTokens?: number; vaultRoot?: string } = {}): VltConfig {
  const c = defaultConfig();
  if (overrides.budgetTokens !== undefined) c.session.budgetTokens = overrides.budgetTokens;
  if (overrides.vaultRoot !== undefined) c.vault.root = overrides.vaultRoot;
  return c;
}

export interface OpenOptions {
  fake?: FakeOpenAI;
  /** The chat model's name (default fake-chat). */
  chatModel?: string;
  embeddings?: boolean;
  budgetTokens?: number;
  vaultRoot?: string;
  clock?: Clock;
  logger?: Logger;
}

/** Memory over `dir`; with `fake`, its chat model (and embeddings when asked) talk to the fake server. */
export function openMemory(dir: string, o: OpenOptions = {}): Promise<Memory> {
  const chat = o.fake ? new OpenAIChatModel({ baseUrl: o.fake.baseURL, model: o.chatModel ?? 'fake-chat', maxRetries: 0 }) : undefined;
  const embeddings = o.fake && o.embeddings ? new OpenAIEmbeddingProvider({ baseUrl: o.fake.baseURL, model: 'fake-embedding', maxRetries: 0 }) : undefined;
  return Memory.open(dir, {
    logger: o.logger ?? silentLogger,
    config: config({ ...(o.budgetTokens !== undefined ? { budgetTokens: o.budgetTokens } : {}), ...(o.vaultRoot !== undefined ? { vaultRoot: o.vaultRoot } : {}) }),
    chat,
    embeddings,
    promptsDir: PROMPTS_DIR,
    vaultStaleAfterMs: 0,
    ...(o.clock ? { clock: o.clock } : {}),
  });
}

/** The text of the user message of each chat request the fake received, in order. */
export function chatPrompts(fake: FakeOpenAI): string[] {
  return fake.calls
    .filter((c) => c.endpoint === 'chat')
    .map((c) => {
      const msgs = (c.body as { messages: Array<{ role: string; content: string }> }).messages;
      return msgs.filter((m) => m.role === 'user').map((m) => m.content).join('\n');
    });
}
