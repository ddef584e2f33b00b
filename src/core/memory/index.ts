/**
 * Memory: the facade over development memory that hosts open once per workspace: threads,
 * the notes vault, shared session contexts, the Librarian, and oracle session logging.
 *
 * Hosts build it with their ports (logger, clock) and the optional language model and
 * embedding provider; without a model every summary is extractive and the Librarian is
 * unavailable, everything else works the same.
 */
import * as path from 'node:path';
import type { VltConfig } from '../config';
import { VltError, errorMessage } from '../errors';
import type { ChatModel } from '../llm/chat';
import { PromptLibrary } from '../llm/prompts';
import { systemClock, type Clock, type EmbeddingProvider, type Logger } from '../ports';
import { Vault } from '../notes/vault';
import { MemoryDb, num, optStr, str } from './db';
import { SessionContext, checkSessionId, foldSessionJournal } from './session';
import { ThreadStore, oracleSessionThread, type ThreadEntry } from './threads';

export { oracleSessionThread } from './threads';
export { recordToolExchange, recordToolExchanges, type ToolExchange } from './session';

/** One entry of {@link Memory.listSessions}. */
export interface SessionSummary {
  id: string;
  /** The first question (or the first tool call), cut to one line. */
  title: string;
  created_at: string;
  updated_at: string;
  /** Exchanges recorded so far, compressed ones included. */
  exchanges: number;
}

/** A session's title: its first question; an `ask_oracle` call's question; else the call; else the summary. */
export function sessionTitle(first: { kind: string; text: string } | undefined, summary: string | undefined): string {
  let text = first?.text ?? summary ?? '';
  if (first?.kind === 'tool_call') {
    const m = /^([\w.-]+)\((.*)\)$/s.exec(first.text);
    if (m) {
      try {
        const args = JSON.parse(m[2] ?? '') as { question?: unknown };
        text = typeof args.question === 'string' ? args.question : `${m[1] ?? ''} ${m[2] ?? ''}`;
      } catch {
        text = first.text;
      }
    }
  }
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 100 ? `${line.slice(0, 99)}…` : line || '(empty session)';
}

/** The session id hosts use when the caller names none. */
export const DEFAULT_SESSION_ID = 'default';

/** Who answers in logged oracle sessions. */
export const ORACLE_AUTHOR = 'oracle';

export interface MemoryDeps {
  logger: Logger;
  config: VltConfig;
  /** The language model for summaries, compression and the Librarian; see `createChatModel`. */
  chat?: ChatModel | undefined;
  /** Vector search over thread entries; lexical only without it. */
  embeddings?: EmbeddingProvider | undefined;
  clock?: Clock;
  /**
   * The folder of the prompt templates (the package's `prompts/`), or a function that finds
   * it. Hosts know where their bundle puts it; the engine never guesses. Required with `chat`.
   */
  promptsDir?: string | (() => string | undefined) | undefined;
  /** Freshness window of the notes index, in ms; see {@link Vault}. */
  vaultStaleAfterMs?: number;
}

export class Memory {
  private readonly sessions = new Map<string, SessionContext>();

  private constructor(
    readonly root: string,
    private readonly db: MemoryDb,
    readonly threads: ThreadStore,
    readonly vault: Vault,
    private readonly deps: MemoryDeps,
    private readonly prompts: PromptLibrary | undefined,
  ) {}

  /** Opens the memory of `root` (a workspace). Nothing is written until the first change. */
  static async open(root: string, deps: MemoryDeps): Promise<Memory> {
    const abs = path.resolve(root);
    const promptsDir = typeof deps.promptsDir === 'function' ? deps.promptsDir() : deps.promptsDir;
    if (deps.chat && !promptsDir) throw new VltError('INTERNAL', 'Memory.open: a chat model needs promptsDir, the folder of the prompt templates');
    const prompts = promptsDir ? new PromptLibrary(promptsDir) : undefined;
    const db = await MemoryDb.open(abs, deps.logger);
    const clock = deps.clock ?? systemClock;
    const threads = new ThreadStore(db, { chat: deps.chat, embeddings: deps.embeddings, prompts, clock, logger: deps.logger });
    const vault = new Vault(abs, {
      root: deps.config.vault.root,
      confined: deps.config.vault.confined,
      deny: deps.config.security.deny,
      logger: deps.logger,
      ...(deps.vaultStaleAfterMs !== undefined ? { staleAfterMs: deps.vaultStaleAfterMs } : {}),
    });
    return new Memory(abs, db, threads, vault, deps, prompts);
  }

  /** Whether a language model is configured (LLM summaries, model compression, the Librarian). */
  get hasLanguageModel(): boolean {
    return this.deps.chat !== undefined;
  }

  /** The shared conversation context `id` (default `default`), one object per id. */
  session(id: string = DEFAULT_SESSION_ID): SessionContext {
    checkSessionId(id);
    let s = this.sessions.get(id);
    if (!s) {
      s = new SessionContext(this.db, id, {
        budgetTokens: this.deps.config.session.budgetTokens,
        chat: this.deps.chat,
        prompts: this.prompts,
        ...(this.deps.clock ? { clock: this.deps.clock } : {}),
        logger: this.deps.logger,
      });
      this.sessions.set(id, s);
    }
    return s;
  }

  /**
   * Logs one oracle question and its answer to the dated thread `oracle-session-YYYY-MM-DD`
   * (seed 000, FR-039/040): the question under its author (an agent id, or `user`), the answer
   * under `oracle`. With `session`, both also go to that shared context.
   */
  async logOracleExchange(ex: { question: string; answer: string; author?: string; session?: string; signal?: AbortSignal }): Promise<{ thread: string; entries: ThreadEntry[] }> {
    const clock = this.deps.clock ?? systemClock;
    const thread = oracleSessionThread(new Date(clock.now()));
    const author = ex.author?.trim() || 'user';
    const q = await this.threads.push(thread, ex.question, { author });
    const a = await this.threads.push(thread, ex.answer, { author: ORACLE_AUTHOR });
    if (ex.session !== undefined) {
      const s = this.session(ex.session);
      const opts = ex.signal ? { signal: ex.signal } : {};
      await s.append({ kind: 'question', author, text: ex.question }, opts);
      await s.append({ kind: 'answer', author: ORACLE_AUTHOR, text: ex.answer }, opts);
    }
    return { thread, entries: [q, a] };
  }

  /**
   * Recent sessions, most recently updated first, each titled by its first question (for a
   * session of agent calls only, its first call), for a host's session picker.
   */
  async listSessions(limit = 20): Promise<SessionSummary[]> {
    await this.flush();
    return this.db.read((tx) =>
      tx.all('SELECT id, created_at, updated_at, summary, last_exchange FROM sessions ORDER BY updated_at DESC, id LIMIT ?', [Math.max(1, Math.min(200, limit))]).map((row) => {
        const id = str(row.id);
        const first = tx.first("SELECT kind, text FROM session_events WHERE session = ? AND kind IN ('question', 'tool_call') ORDER BY id LIMIT 1", [id]);
        return {
          id,
          title: sessionTitle(first ? { kind: str(first.kind), text: str(first.text) } : undefined, optStr(row.summary)),
          created_at: new Date(num(row.created_at)).toISOString(),
          updated_at: new Date(num(row.updated_at)).toISOString(),
          exchanges: num(row.last_exchange),
        };
      }),
    );
  }

  /**
   * Folds what was recorded cheaply (the session journal) into the store, so that the journal
   * a process leaves behind is short; readers would fold it anyway. Never throws.
   */
  async flush(): Promise<void> {
    try {
      await foldSessionJournal(this.db, this.deps.config.session.budgetTokens);
    } catch (e) {
      this.deps.logger.warn(`could not fold the session journal: ${errorMessage(e)}`);
    }
  }

  async close(): Promise<void> {
    await this.flush();
    this.sessions.clear();
    await this.threads.close();
    await this.db.close();
  }
}

/**
 * The author id of an MCP client, from the `clientInfo` of its initialize request
 * (`{name: "claude-code", version: "1.2.0"}` → `claude-code@1.2.0`), or `user` without one.
 */
export function agentIdFromClientInfo(info: { name?: unknown; version?: unknown } | undefined): string {
  const clean = (v: unknown): string => (typeof v === 'string' ? v.replace(/[^\w.@:/+-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) : '');
  const name = clean(info?.name);
  if (!name) return 'user';
  const version = clean(info?.version);
  return version ? `${name}@${version}` : name;
}
