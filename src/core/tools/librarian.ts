/**
 * The Librarian (seed 001, research area 6): a subagent that organises the notes vault. It runs
 * the one tool loop (`llm/tool-loop.ts`, shared with the oracle's agent) over a
 * {@link ChatModel} with five of the memory tools, as agents have them (list_notes, read_note,
 * write_note, move_note, create_index: nothing that deletes, nothing outside the vault), at
 * most ten turns, and reports `{success, files_modified, summary}`.
 *
 * Every tool failure goes back to the model as the tool's answer (`{"error": …}`), so it can
 * correct itself; only a failure of the model itself, or a cancellation, ends the loop early.
 */
import { VltError } from '../errors';
import type { ChatModel } from '../llm/chat';
import type { PromptLibrary } from '../llm/prompts';
import { jsonSchemaOf } from '../llm/tool-schema';
import { runToolLoop, type LoopTool } from '../llm/tool-loop';
import type { Memory } from '../memory';
import { silentLogger, type Logger } from '../ports';
import { z } from 'zod';
import { defineTool, invokeTool, strictArgs, type ToolContext, type ToolDefinition } from './definitions';
import { MEMORY_TOOLS } from './memory-tools';
import { librarianOutput } from './outputs';

export const LIBRARIAN_MAX_TURNS = 10;

/** A tool answer longer than this is cut: the model needs the gist, and its context is finite. */
const MAX_TOOL_ANSWER_CHARS = 16_000;

/** The tools the Librarian gets: the vault's, without delete. */
export const LIBRARIAN_TOOL_NAMES = ['list_notes', 'read_note', 'write_note', 'move_note', 'create_index'] as const;

export interface LibrarianResult {
  /** The model finished within its turns without a fatal error. */
  success: boolean;
  /** Vault paths written, created, moved (both ends) or rewritten, sorted. */
  files_modified: string[];
  /** The model's own closing report, or why the run stopped. */
  summary: string;
  turns: number;
}

export interface LibrarianDeps {
  chat: ChatModel;
  prompts: PromptLibrary;
  /** The host's tool context; its `getMemory` opens the vault the Librarian works on. */
  ctx: ToolContext;
  logger?: Logger;
  maxTurns?: number;
  signal?: AbortSignal;
}

/** The Librarian's tools as the loop runs them: each through the tool's own definition. */
export function librarianTools(ctx: ToolContext): LoopTool[] {
  const wanted = new Set<string>(LIBRARIAN_TOOL_NAMES);
  const defs: readonly ToolDefinition[] = MEMORY_TOOLS;
  return defs.filter((d) => wanted.has(d.name)).map((d) => ({
    name: d.name,
    description: d.description,
    parameters: jsonSchemaOf(d.inputSchema),
    async run(args: unknown, signal?: AbortSignal): Promise<string> {
      const outcome = await invokeTool(d, { ...ctx, author: 'librarian', ...(signal ? { signal } : {}) }, args);
      if (!outcome.ok) throw outcome.error;
      return JSON.stringify(outcome.value);
    },
  }));
}

/** Runs the Librarian on one task. Throws LLM_NOT_CONFIGURED without a model, CANCELLED on abort. */
export async function runLibrarian(task: string, deps: LibrarianDeps): Promise<LibrarianResult> {
  if (!task.trim()) throw new VltError('USAGE', 'the Librarian needs a task');
  if (!deps.ctx.getMemory) throw new VltError('USAGE', 'the Librarian needs the workspace memory');
  const memory: Memory = await deps.ctx.getMemory();
  const logger = deps.logger ?? silentLogger;
  const maxTurns = Math.max(1, Math.min(deps.maxTurns ?? LIBRARIAN_MAX_TURNS, LIBRARIAN_MAX_TURNS));
  const mounts = memory.vault.mounts;
  const writable = mounts.filter((m) => m.writable).map((m) => (m.logical ? `${m.logical}/` : '(the vault root)'));
  const readOnly = mounts.filter((m) => !m.writable).map((m) => (m.kind === 'file' ? m.logical : `${m.logical}/`));
  const system = deps.prompts.render('librarian', {
    max_turns: maxTurns,
    writable: writable.join(', ') || '(none)',
    read_only: readOnly.join(', ') || '(none)',
  });
  const run = await runToolLoop({
    chat: deps.chat,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: task.trim() },
    ],
    tools: librarianTools(deps.ctx),
    maxTurns,
    maxToolResultChars: MAX_TOOL_ANSWER_CHARS,
    lastTurn: 'tools',
    // Its tools write: one after another, in the order the model wrote them.
    concurrentCalls: false,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  const files_modified = modifiedBy(run.calls).sort();
  const done = (success: boolean, summary: string): LibrarianResult => ({ success, files_modified, summary, turns: run.turns });
  if (run.stopped === 'model_failed') {
    logger.warn(`librarian: the language model failed on turn ${run.turns}: ${run.error?.message ?? 'unknown error'}`);
    return done(false, `stopped on turn ${run.turns}: ${run.error?.message ?? 'the language model failed'}`);
  }
  if (run.stopped === 'answer') return done(true, run.text.trim() || 'finished without a report');
  return done(false, `stopped after ${maxTurns} turns without a final report; the changes listed were made`);
}

/** The vault paths the successful writing calls of a run changed: written, moved (both ends), rewritten, indexed. */
function modifiedBy(calls: ReadonlyArray<{ name: string; ok: boolean; output?: string }>): string[] {
  const paths = new Set<string>();
  for (const c of calls) {
    if (!c.ok || c.output === undefined) continue;
    const out = JSON.parse(c.output) as { path?: string; from?: string; to?: string; rewritten?: string[] };
    if (c.name === 'write_note' || c.name === 'create_index') {
      if (out.path) paths.add(out.path);
    } else if (c.name === 'move_note') {
      for (const p of [out.from, out.to, ...(out.rewritten ?? [])]) if (p) paths.add(p);
    }
  }
  return [...paths];
}

const delegateInput = strictArgs({
  task: z.string().min(1).max(4000).describe('What to do in the notes vault, in a sentence or two: "file the design notes in inbox/ under architecture/ and index the folder", "merge the two caching notes into one".'),
}).meta({ examples: [{ task: 'File the design notes in inbox/ under architecture/ and give the folder an index.' }] });

export const delegateLibrarianTool = defineTool({
  name: 'delegate_librarian',
  title: 'Delegate to the Librarian',
  description: [
    'Hand a task of organising the notes vault to the Librarian, a subagent with five note tools (list, read, write, move with link rewriting, folder index) and at most ten turns: filing notes into folders, merging duplicates, renaming, indexing.',
    'It never deletes a note and never changes the read-only workspace docs. Returns whether it finished, the vault paths it changed, and its own report.',
    'Needs a configured language model (LLM_NOT_CONFIGURED otherwise). For one note, write_note or move_note directly is cheaper.',
  ].join(' '),
  inputSchema: delegateInput,
  outputSchema: librarianOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async handler(ctx, input): Promise<LibrarianResult> {
    const model = await ctx.getModel?.();
    if (!model) throw new VltError('LLM_NOT_CONFIGURED', 'the Librarian needs a language model; set [llm] in vlt.toml and an API key (VLT_LLM_API_KEY or OPENROUTER_API_KEY), in a trusted workspace');
    return runLibrarian(input.task, { chat: ctx.chat ?? model.chat, prompts: model.prompts, ctx, logger: ctx.logger, ...(ctx.signal ? { signal: ctx.signal } : {}) });
  },
});
