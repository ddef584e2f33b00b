/**
 * Agent tools over development memory: the notes vault (list, read, write, delete, search,
 * backlinks, tags) and threads (push, read, seek, list). Defined once here, like the code
 * tools in `definitions.ts`, and adapted by each host.
 *
 * The handlers reach memory through `ToolContext.getMemory`, which the host opens on first
 * use; a host that serves no memory does not list these tools (`allTools`).
 */
import { z } from 'zod';
import type { Memory } from '../memory';
import { MAX_ENTRY_CHARS } from '../memory/threads';
import { NOTE_MAX_BYTES } from '../notes/vault';
import { charsForTokens } from '../tokens';
import { MAX_ANSWER_TOKENS, decodeCursor, encodeCursor, requestFingerprint } from './budget';
import { VltError } from '../errors';
import { defineTool, maxTokensArg, strictArgs, type ToolContext } from './definitions';
import { codeChangedSince, type CodeChange } from '../context/memory-freshness';
import { backlinksOutput, createIndexOutput, deleteNoteOutput, listNotesOutput, moveNoteOutput, readNoteOutput, searchNotesOutput, tagsOutput, threadListOutput, threadPushOutput, threadReadOutput, threadSeekOutput, writeNoteOutput } from './outputs';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

const notePathArg = z.string().min(1).max(1000);
const threadArg = z
  .string()
  .min(1)
  .max(128)
  .describe('Thread name: letters, digits, ".", "_" or "-", e.g. "auth-refactor" or "oracle-session-2025-01-31".');

/** Cuts `text` so that it takes at most `chars`, marking the cut. */
function cut(text: string, chars: number): { text: string; truncated: boolean } {
  if (text.length <= chars) return { text, truncated: false };
  return { text: `${text.slice(0, Math.max(0, chars - 1))}…`, truncated: true };
}

/** The workspace's memory, which the host opens on first use; USAGE when the host has none. */
function memoryOf(ctx: ToolContext): Promise<Memory> {
  if (!ctx.getMemory) return Promise.reject(new VltError('USAGE', 'this host keeps no notes or threads'));
  return ctx.getMemory();
}

/** Checks texts for code they name that changed after they were written; undefined when the workspace has no index to ask. */
type FreshnessCheck = (text: string, writtenAt: string) => Promise<CodeChange[]>;

async function freshnessCheck(ctx: ToolContext): Promise<FreshnessCheck | undefined> {
  // An index that cannot be opened (none yet, another process rebuilding it) costs the flag, never the answer.
  const engine = await ctx.peekEngine?.().catch(() => undefined);
  if (!engine) return undefined;
  return (text, writtenAt) => codeChangedSince(engine, ctx.fs, text, Date.parse(writtenAt));
}

/** `item` with `code_changed` set when the code its text names changed after `writtenAt`. */
async function withFreshness<T extends object>(check: FreshnessCheck | undefined, item: T, text: string, writtenAt: string): Promise<T & { code_changed?: CodeChange[] }> {
  const changed = check ? await check(text, writtenAt) : [];
  return changed.length ? { ...item, code_changed: changed } : item;
}

const listNotesInput = strictArgs({
  folder: z.string().max(1000).optional().describe('Only notes under this folder, e.g. "architecture"; omit for the whole vault.'),
  limit: z.number().int().min(1).max(500).default(200).describe('Notes per page (1-500).'),
  cursor: z.string().max(200).optional().describe('The next_cursor of a previous answer, to get the next page; pass the same folder and limit.'),
}).meta({ examples: [{"folder": "decisions"}] });
const readNoteInput = strictArgs({
  path: notePathArg.describe('Note path relative to the vault, e.g. "architecture/cache.md" (".md" optional), or a note name such as "cache".'),
  max_tokens: maxTokensArg(''),
}).meta({ examples: [{"path": "decisions/caching.md"}] });
const writeNoteInput = strictArgs({
  path: notePathArg.describe('Note path relative to the vault, e.g. "decisions/caching.md"; ".md" is added when missing. Folders are created.'),
  content: z.string().max(NOTE_MAX_BYTES).describe('The complete Markdown text, optionally starting with YAML frontmatter between --- lines (title, tags, summary, …).'),
}).meta({ examples: [{"path": "decisions/caching.md", "content": "---\ntags: [cache]\n---\n# Caching\n\nAn LRU in front of the store; see [[storage]]."}] });
const deleteNoteInput = strictArgs({ path: notePathArg.describe('Exact note path relative to the vault, as list_notes shows it.') }).meta({ examples: [{"path": "ideas/old.md"}] });
const searchNotesInput = strictArgs({
  query: z.string().min(1).max(2000).describe('Words, names or identifiers to look for in titles, tags, frontmatter fields and text.'),
  limit: z.number().int().min(1).max(50).default(10).describe('How many notes to return (1-50).'),
  tag: z.string().max(200).optional().describe('Only notes with this tag (without "#").'),
  folder: z.string().max(1000).optional().describe('Only notes under this folder.'),
}).meta({ examples: [{"query": "auth flow"}] });
const backlinksInput = strictArgs({ path: notePathArg.describe('The note whose backlinks to list: a path or a note name.') }).meta({ examples: [{"path": "storage"}] });
const tagsInput = strictArgs({}).meta({ examples: [{}] });
const moveNoteInput = strictArgs({
  from: notePathArg.describe('Exact path of the note to move, as list_notes shows it.'),
  to: notePathArg.describe('Its new path ("decisions/cache.md"), or a folder ending in "/" to keep its file name.'),
}).meta({ examples: [{"from": "ideas/lru.md", "to": "decisions/"}] });
const createIndexInput = strictArgs({
  folder: z.string().max(1000).default('').describe('Folder relative to the vault whose index.md to write; "" for the vault root.'),
}).meta({ examples: [{"folder": "decisions"}] });
const pushInput = strictArgs({
  thread: threadArg,
  text: z.string().min(1).max(MAX_ENTRY_CHARS).describe('The entry: a decision, finding, question or progress note, in a few sentences. Name symbols and files exactly.'),
  author: z.string().min(1).max(128).optional().describe('Who records it; defaults to the calling agent.'),
}).meta({ examples: [{"thread": "auth-refactor", "text": "Chose JWT over sessions because the API is stateless."}] });
const readInput = strictArgs({
  thread: threadArg,
  entries: z.number().int().min(0).max(200).default(20).describe('How many of the latest entries to include besides the summary (0-200).'),
  max_tokens: maxTokensArg(''),
}).meta({ examples: [{"thread": "auth-refactor"}] });
const seekInput = strictArgs({
  query: z.string().min(1).max(2000).describe('What to look for across thread entries: words, names, identifiers.'),
  limit: z.number().int().min(1).max(50).default(10).describe('How many entries to return (1-50).'),
  thread: threadArg.optional().describe('Only entries of this thread.'),
}).meta({ examples: [{"query": "why JWT"}] });
const listInput = strictArgs({}).meta({ examples: [{}] });

/** The memory tools (notes vault, threads), in the order hosts list them. */
export const MEMORY_TOOLS = [
  defineTool({
    name: 'list_notes',
    title: 'List notes',
    description:
      "List the notes of the project's notes vault (its README and docs/, read-only, and notes agents wrote): path, title, tags, last change, and whether the note is read-only. Pages with next_cursor.",
    inputSchema: listNotesInput,
    outputSchema: listNotesOutput,
    annotations: READ_ONLY,
    async handler(ctx, input) {
      const memory = await memoryOf(ctx);
      const notes = await memory.vault.list(input.folder !== undefined ? { folder: input.folder } : {});
      const fingerprint = requestFingerprint(['list_notes', input.folder ?? null, input.limit]);
      const offset = input.cursor !== undefined ? decodeCursor(input.cursor, fingerprint, notes.length) : 0;
      const page = notes.slice(offset, offset + input.limit);
      return { notes: page, total: notes.length, ...(offset + page.length < notes.length ? { next_cursor: encodeCursor(offset + page.length, fingerprint) } : {}) };
    },
  }),
  defineTool({
    name: 'read_note',
    title: 'Read note',
    description:
      'Read one note of the vault by path or name: its frontmatter fields, its Markdown text, the notes it links to (with whether each link resolves), and any frontmatter problems with their line. Long notes are cut to max_tokens. When the note names files or definitions whose code changed after the note was last modified, code_changed lists them.',
    inputSchema: readNoteInput,
    outputSchema: readNoteOutput,
    annotations: READ_ONLY,
    async handler(ctx, input) {
      const memory = await memoryOf(ctx);
      const note = await memory.vault.read(input.path);
      const budget = charsForTokens(input.max_tokens);
      const { content: _content, body: _body, context: _context, ...rest } = note;
      const fresh = await withFreshness(await freshnessCheck(ctx), rest, note.content, note.modified);
      const overhead = JSON.stringify(fresh).length + 100;
      const text = cut(note.content, Math.max(0, budget - overhead));
      return { ...fresh, content: text.text, truncated: text.truncated };
    },
  }),
  defineTool({
    name: 'write_note',
    title: 'Write note',
    description:
      'Create or replace a note in the vault with Markdown text (frontmatter allowed). Use it to record research, decisions and explanations for later sessions. Link other notes with [[Name]]. The workspace docs are read-only.',
    inputSchema: writeNoteInput,
    outputSchema: writeNoteOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async handler(ctx, input) {
      const memory = await memoryOf(ctx);
      return memory.vault.write(input.path, input.content);
    },
  }),
  defineTool({
    name: 'delete_note',
    title: 'Delete note',
    description: 'Delete one note of the vault by its exact path. Links to it become broken; check get_backlinks first.',
    inputSchema: deleteNoteInput,
    outputSchema: deleteNoteOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    async handler(ctx, input) {
      const memory = await memoryOf(ctx);
      return memory.vault.delete(input.path);
    },
  }),
  defineTool({
    name: 'search_notes',
    title: 'Search notes',
    description:
      'Full-text search (BM25) over the notes vault: titles, tags, every frontmatter field and the text. Returns path, title, score, the best matching line and tags of each note, and code_changed when the code the note names changed after it was written; read_note gives the whole note.',
    inputSchema: searchNotesInput,
    outputSchema: searchNotesOutput,
    annotations: READ_ONLY,
    async handler(ctx, input) {
      const memory = await memoryOf(ctx);
      const hits = await memory.vault.search(input.query, { k: input.limit, ...(input.tag ? { tag: input.tag } : {}), ...(input.folder ? { folder: input.folder } : {}) });
      const check = await freshnessCheck(ctx);
      // A note's whole text and its time are what the check needs; the hit has a snippet only.
      const flag = async (h: (typeof hits)[number]) => {
        const note = check ? await memory.vault.read(h.path).catch(() => undefined) : undefined;
        return note ? withFreshness(check, h, note.content, note.modified) : h;
      };
      const out: Array<(typeof hits)[number] & { code_changed?: CodeChange[] }> = await Promise.all(hits.map(flag));
      return { hits: out };
    },
  }),
  defineTool({
    name: 'get_backlinks',
    title: 'Get backlinks',
    description: 'List the notes that link to a note ([[wikilinks]] and Markdown links), with the line of each link.',
    inputSchema: backlinksInput,
    outputSchema: backlinksOutput,
    annotations: READ_ONLY,
    async handler(ctx, input) {
      const memory = await memoryOf(ctx);
      const note = await memory.vault.read(input.path);
      return { note: note.path, backlinks: await memory.vault.backlinks(note.path) };
    },
  }),
  defineTool({
    name: 'get_tags',
    title: 'Get tags',
    description: 'List every tag used in the vault (frontmatter tags and inline #tags) with how many notes carry it.',
    inputSchema: tagsInput,
    outputSchema: tagsOutput,
    annotations: READ_ONLY,
    async handler(ctx) {
      const memory = await memoryOf(ctx);
      return { tags: await memory.vault.tags() };
    },
  }),
  defineTool({
    name: 'move_note',
    title: 'Move note',
    description:
      'Move or rename a note of the vault and rewrite every [[link]] and Markdown link to it in the other notes. Returns the notes changed, and any that link to it but could not be changed (read-only ones), with why. The workspace docs are read-only.',
    inputSchema: moveNoteInput,
    outputSchema: moveNoteOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    async handler(ctx, input) {
      const memory = await memoryOf(ctx);
      return memory.vault.move(input.from, input.to);
    },
  }),
  defineTool({
    name: 'create_index',
    title: 'Create folder index',
    description:
      "Write or refresh a folder's index.md: a note linking every note in the folder, with their titles. An index.md written by hand (without the marker this tool adds) is never overwritten.",
    inputSchema: createIndexInput,
    outputSchema: createIndexOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async handler(ctx, input) {
      const memory = await memoryOf(ctx);
      return memory.vault.createIndex(input.folder);
    },
  }),
  defineTool({
    name: 'thread_push',
    title: 'Push to thread',
    description:
      'Append an entry to a development thread (created on first push): a decision and its reason, a finding, an open question, progress. Threads are memory that later sessions read. Cheap: nothing is summarised until the thread is read.',
    inputSchema: pushInput,
    outputSchema: threadPushOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async handler(ctx, input) {
      const memory = await memoryOf(ctx);
      const author = input.author ?? ctx.author ?? 'agent';
      const e = await memory.threads.push(input.thread, input.text, { author });
      return { thread: e.thread, id: e.id, seq: e.seq, author: e.author, created_at: e.created_at };
    },
  }),
  defineTool({
    name: 'thread_read',
    title: 'Read thread',
    description:
      "Read a development thread: its summary (brought up to date now, folding in only entries added since the last read; 'extractive' when no language model is configured) and its latest entries. Older entries are left out first when max_tokens is reached. An entry that names files or definitions whose code changed after it was written lists them in code_changed.",
    inputSchema: readInput,
    outputSchema: threadReadOutput,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async handler(ctx, input) {
      const memory = await memoryOf(ctx);
      const view = await memory.threads.read(input.thread, { entries: input.entries, ...(ctx.signal ? { signal: ctx.signal } : {}) });
      const check = await freshnessCheck(ctx);
      const entries = check ? await Promise.all(view.entries.map((e) => withFreshness(check, e, e.text, e.created_at))) : view.entries;
      const budget = charsForTokens(input.max_tokens);
      const summary = cut(view.summary.text, Math.floor(budget / 2));
      const result = { ...view, summary: { ...view.summary, text: summary.text }, entries: [] as typeof view.entries };
      let used = JSON.stringify(result).length;
      // Newest entries are worth most; older ones go first when the budget is short.
      for (let i = entries.length - 1; i >= 0; i--) {
        const size = JSON.stringify(entries[i]).length + 1;
        if (used + size > budget) {
          result.entries_truncated = true;
          break;
        }
        result.entries.unshift(entries[i]!);
        used += size;
      }
      return summary.truncated ? { ...result, summary_truncated: true } : result;
    },
  }),
  defineTool({
    name: 'thread_seek',
    title: 'Seek in threads',
    description:
      'Search the entries of every development thread (or one thread) for past decisions and findings: BM25 full text, plus vector similarity when embeddings are configured. Returns thread, entry number, author, time and text of each hit, and code_changed when the code the entry names changed after it was written.',
    inputSchema: seekInput,
    outputSchema: threadSeekOutput,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async handler(ctx, input) {
      const memory = await memoryOf(ctx);
      const hits = await memory.threads.seek(input.query, { k: input.limit, ...(input.thread ? { thread: input.thread } : {}), ...(ctx.signal ? { signal: ctx.signal } : {}) });
      const check = await freshnessCheck(ctx);
      const out: Array<(typeof hits)[number] & { code_changed?: CodeChange[] }> = check ? await Promise.all(hits.map((h) => withFreshness(check, h, h.text, h.created_at))) : hits;
      return { hits: out };
    },
  }),
  defineTool({
    name: 'thread_list',
    title: 'List threads',
    description: 'List the development threads of this project, most recently updated first: name, entry count, last author, and whether the cached summary is current.',
    inputSchema: listInput,
    outputSchema: threadListOutput,
    annotations: READ_ONLY,
    async handler(ctx) {
      const memory = await memoryOf(ctx);
      const threads = await memory.threads.list();
      const budget = charsForTokens(MAX_ANSWER_TOKENS);
      let used = 40;
      const shown = [];
      for (const t of threads) {
        used += JSON.stringify(t).length + 1;
        if (used > budget) break;
        shown.push(t);
      }
      if (shown.length < threads.length) return { threads: shown, total: threads.length, truncated: true };
      return { threads: shown, total: threads.length };
    },
  }),
] as const;
