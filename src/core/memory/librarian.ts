/**
 * The Librarian (seed 001, research area 6): a subagent that organises the notes vault. It runs
 * its own tool loop over a {@link ChatModel} with the vault tools only (read, write, list, move,
 * create index), at most ten turns, and reports `{success, files_modified, summary}`.
 *
 * Every tool failure goes back to the model as the tool's answer (`{"error": …}`), so it can
 * correct itself; only a failure of the model itself, or a cancellation, ends the loop early.
 */
import { z } from 'zod';
import { VltError, toVltError } from '../errors';
import type { ChatMessage, ChatModel, ChatTool, ChatToolCall } from '../llm/chat';
import type { PromptLibrary } from '../llm/prompts';
import { silentLogger, type Logger } from '../ports';
import type { Vault } from '../notes/vault';
import { clip } from './extract';
import { jsonSchemaOf } from '../llm/tool-schema';

export const LIBRARIAN_MAX_TURNS = 10;

/** A tool answer longer than this is cut: the model needs the gist, and its context is finite. */
const MAX_TOOL_ANSWER_CHARS = 16_000;

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
  vault: Vault;
  prompts: PromptLibrary;
  logger?: Logger;
  maxTurns?: number;
  signal?: AbortSignal;
}

interface LibrarianTool<S extends z.ZodObject> {
  name: string;
  description: string;
  schema: S;
  run(vault: Vault, args: z.output<S>, modified: Set<string>): Promise<unknown>;
}

function tool<S extends z.ZodObject>(t: LibrarianTool<S>): LibrarianTool<z.ZodObject> {
  return t as unknown as LibrarianTool<z.ZodObject>;
}

const notePath = z.string().min(1).max(1000);

/** The only tools the Librarian gets: the vault, nothing else. */
export const LIBRARIAN_TOOLS = [
  tool({
    name: 'vault_list',
    description: 'List the notes in a folder of the vault (every note when folder is omitted): path, title and tags of each.',
    schema: z.strictObject({ folder: z.string().max(1000).optional().describe('Folder path relative to the vault root, e.g. "architecture"; omit for the whole vault.') }),
    async run(vault, args) {
      const notes = await vault.list(args.folder !== undefined ? { folder: args.folder } : {});
      return notes.map((n) => ({ path: n.path, title: n.title, tags: n.tags, read_only: n.read_only }));
    },
  }),
  tool({
    name: 'vault_read',
    description: 'Read one note: its full Markdown text (frontmatter included) and the notes it links to.',
    schema: z.strictObject({ path: notePath.describe('Note path such as "architecture/cache.md", or a note name.') }),
    async run(vault, args) {
      const note = await vault.read(args.path);
      return { path: note.path, title: note.title, read_only: note.read_only, content: note.content, links: note.links };
    },
  }),
  tool({
    name: 'vault_write',
    description: 'Create or replace a note with the given Markdown text (frontmatter included). Read-only notes (the workspace docs) cannot be written.',
    schema: z.strictObject({
      path: notePath.describe('Note path relative to the vault root; ".md" is added when missing.'),
      content: z.string().max(1_000_000).describe('The complete new text of the note.'),
    }),
    async run(vault, args, modified) {
      const res = await vault.write(args.path, args.content);
      modified.add(res.path);
      return res;
    },
  }),
  tool({
    name: 'vault_move',
    description: 'Move or rename a note. Every link to it in other notes is rewritten so that it still reaches the note.',
    schema: z.strictObject({
      from: notePath.describe('Current note path.'),
      to: notePath.describe('New note path, or a folder ending in "/" to keep the file name.'),
    }),
    async run(vault, args, modified) {
      const res = await vault.move(args.from, args.to);
      modified.add(res.from);
      for (const p of [res.to, ...res.rewritten]) modified.add(p);
      return res;
    },
  }),
  tool({
    name: 'vault_create_index',
    description: "Create or refresh a folder's index.md: a link to every note in the folder with its summary, and to its subfolders.",
    schema: z.strictObject({ folder: z.string().max(1000).describe('Folder path relative to the vault root; "" for the root.') }),
    async run(vault, args, modified) {
      const res = await vault.createIndex(args.folder);
      modified.add(res.path);
      return res;
    },
  }),
];

/** The tools as the model sees them: JSON-schema function definitions. */
export function librarianChatTools(): ChatTool[] {
  return LIBRARIAN_TOOLS.map((t) => {
    return { name: t.name, description: t.description, parameters: jsonSchemaOf(t.schema) };
  });
}

/** Runs the Librarian on one task. Throws LLM_NOT_CONFIGURED without a model, CANCELLED on abort. */
export async function runLibrarian(task: string, deps: LibrarianDeps): Promise<LibrarianResult> {
  if (!task.trim()) throw new VltError('USAGE', 'the Librarian needs a task');
  const logger = deps.logger ?? silentLogger;
  const maxTurns = Math.max(1, Math.min(deps.maxTurns ?? LIBRARIAN_MAX_TURNS, LIBRARIAN_MAX_TURNS));
  const writable = deps.vault.mounts.filter((m) => m.writable).map((m) => (m.logical ? `${m.logical}/` : '(the vault root)'));
  const readOnly = deps.vault.mounts.filter((m) => !m.writable).map((m) => (m.kind === 'file' ? m.logical : `${m.logical}/`));
  const system = deps.prompts.render('librarian', {
    max_turns: maxTurns,
    writable: writable.join(', ') || '(none)',
    read_only: readOnly.join(', ') || '(none)',
  });
  const messages: ChatMessage[] = [
    { role: 'system', content: system },
    { role: 'user', content: task.trim() },
  ];
  const tools = librarianChatTools();
  const modified = new Set<string>();
  const done = (success: boolean, summary: string, turns: number): LibrarianResult => ({ success, files_modified: [...modified].sort(), summary, turns });

  for (let turn = 1; turn <= maxTurns; turn++) {
    let res;
    try {
      res = await deps.chat.complete({ messages, tools, temperature: 0, ...(deps.signal ? { signal: deps.signal } : {}) });
    } catch (e) {
      const err = toVltError(e, 'LLM_FAILED');
      if (err.code === 'CANCELLED') throw err;
      logger.warn(`librarian: the language model failed on turn ${turn}: ${err.message}`);
      return done(false, `stopped on turn ${turn}: ${err.message}`, turn);
    }
    if (res.toolCalls.length === 0) return done(true, res.text.trim() || 'finished without a report', turn);
    messages.push({ role: 'assistant', content: res.text || null, toolCalls: res.toolCalls });
    for (const call of res.toolCalls) {
      const answer = await runTool(call, deps.vault, modified, logger);
      messages.push({ role: 'tool', toolCallId: call.id, content: answer });
    }
  }
  return done(false, `stopped after ${maxTurns} turns without a final report; the changes listed were made`, maxTurns);
}

async function runTool(call: ChatToolCall, vault: Vault, modified: Set<string>, logger: Logger): Promise<string> {
  const def = LIBRARIAN_TOOLS.find((t) => t.name === call.name);
  if (!def) return JSON.stringify({ error: `USAGE: unknown tool ${call.name}; use one of ${LIBRARIAN_TOOLS.map((t) => t.name).join(', ')}` });
  let raw: unknown;
  try {
    raw = call.arguments.trim() ? JSON.parse(call.arguments) : {};
  } catch {
    return JSON.stringify({ error: 'USAGE: the arguments are not valid JSON' });
  }
  const parsed = def.schema.safeParse(raw);
  if (!parsed.success) {
    return JSON.stringify({ error: `USAGE: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ')}` });
  }
  try {
    const out = await def.run(vault, parsed.data, modified);
    logger.debug(`librarian: ${call.name} ok`);
    return clip(JSON.stringify(out), MAX_TOOL_ANSWER_CHARS);
  } catch (e) {
    const err = toVltError(e);
    logger.debug(`librarian: ${call.name} failed: ${err.message}`);
    return JSON.stringify({ error: `${err.code}: ${err.message}` });
  }
}
