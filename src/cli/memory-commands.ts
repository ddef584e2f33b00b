/**
 * `vlt thread …`, `vlt notes …` and `vlt session …`: development memory on the command line.
 * A command that has a memory tool (thread_push, list_notes, …) runs the tool, so its `--json`
 * is the tool's answer over MCP; `notes issues` and the session commands have no tool and read
 * memory directly. Results go to stdout, logs to stderr, and failures are thrown as VltErrors
 * for `main.ts` to map to exit codes (1, or 2 for usage errors).
 *
 * `--session ID` on any memory command records the call and its result in that shared
 * conversation context, the same record the MCP server and the chat append to.
 */
import type { Command } from 'commander';
import { VltError } from '../core/errors';
import { DEFAULT_SESSION_ID, Memory, recordToolExchange } from '../core/memory';
import type { ThreadView } from '../core/memory/threads';
import { MAX_ANSWER_TOKENS } from '../core/tools/budget';
import type { ToolInput, ToolName, ToolOutput } from '../core/tools';
import { writeLine } from './io';
import type { CommandContext } from './command-context';
import { intIn, positiveInt } from './options';


interface JsonOpt {
  json?: boolean;
  session?: string;
}

/** What a memory text's `code_changed` says, as a line's tail: empty when nothing changed. */
function changedNote(changed: ReadonlyArray<{ path: string }> | undefined): string {
  return changed?.length ? `  (code changed since: ${changed.map((c) => c.path).join(', ')})` : '';
}

function printThread(out: (t: string) => void, v: Pick<ThreadView, 'thread' | 'entry_count' | 'summary' | 'entries_truncated'> & { entries: Array<ThreadView['entries'][number] & { code_changed?: Array<{ path: string }> }> }): void {
  const covers = v.summary.last_summarized_node_id ? `, covers entries through id ${v.summary.last_summarized_node_id}` : '';
  out(`# ${v.thread}  (${v.entry_count} entries, ${v.summary.kind} summary${covers}${v.summary.newly_summarized ? `, ${v.summary.newly_summarized} folded in now` : ''})`);
  out('');
  out(v.summary.text || '(no summary)');
  if (v.summary.note) out(`\nnote: ${v.summary.note}`);
  if (v.entries.length) {
    out('');
    out(`## ${v.entries_truncated ? `Latest ${v.entries.length} entries` : 'Entries'}`);
    for (const e of v.entries) out(`#${e.seq} [${e.created_at.slice(0, 16).replace('T', ' ')} ${e.author}] ${e.text}${changedNote(e.code_changed)}`);
  }
}

/** What the memory commands share: output, stdin, and one way to run a command over memory. */
interface MemoryCli {
  out(text: string): void;
  json(value: unknown): void;
  warn(text: string): void;
  readStdin(what: string): Promise<string>;
  /**
   * Opens memory, runs one command that has no tool, prints its result (JSON or human), records
   * it in the named session, and closes memory whatever happens.
   */
  run<T>(tool: string, input: Record<string, unknown>, o: JsonOpt, fn: (m: Memory) => Promise<T>, human: (r: T) => void): Promise<void>;
  /** Runs a memory tool as an agent's call runs it, prints its answer, and records it in the named session. */
  runTool<N extends ToolName>(name: N, input: ToolInput<N>, o: JsonOpt, human: (r: ToolOutput<N>) => void): Promise<void>;
}

export function registerMemoryCommands(program: Command, ctx: CommandContext): void {
  const h = memoryCli(ctx);
  registerThreadCommands(program, h);
  registerNotesCommands(program, h);
  registerSessionCommands(program, h);
}

function memoryCli(ctx: CommandContext): MemoryCli {
  const out = (text: string) => writeLine(ctx.io.stdout, text);
  const json = (value: unknown) => out(JSON.stringify(value, null, 2));
  const warn = (text: string) => ctx.io.stderr.write(`warn: ${text}\n`);
  const readStdin = async (what: string): Promise<string> => {
    const text = await ctx.io.readStdin();
    if (text === undefined) throw new VltError('USAGE', `no ${what} given: pass it as an argument, with --text, or on stdin`);
    return text;
  };

  /**
   * Opens memory, runs one command, prints its result (JSON or human), records it in the named
   * session, and closes memory whatever happens.
   */
  const run = async <T>(tool: string, input: Record<string, unknown>, o: JsonOpt, fn: (m: Memory) => Promise<T>, human: (r: T) => void): Promise<void> => {
    await ctx.workspace().memory(async (memory) => {
      const result = await fn(memory);
      if (o.json) json(result);
      else human(result);
      if (o.session !== undefined) await recordToolExchange(memory.session(o.session), { tool, author: 'user', input, output: result });
    });
  };

  const runTool = async <N extends ToolName>(name: N, input: ToolInput<N>, o: JsonOpt, human: (r: ToolOutput<N>) => void): Promise<void> => {
    const ws = ctx.workspace();
    const result = await ws.tool(name, input);
    if (o.json) json(result);
    else human(result);
    if (o.session !== undefined) await ws.memory((memory) => recordToolExchange(memory.session(o.session!), { tool: name, author: 'user', input, output: result }));
  };

  return { out, json, warn, readStdin, run, runTool };
}

/** `vlt thread`: development memory. */
function registerThreadCommands(program: Command, { out, readStdin, runTool }: MemoryCli): void {
  const thread = program.command('thread').description('development memory: append-only threads with lazy summaries').exitOverride();

  thread
    .command('push')
    .description('append an entry to a thread (no language model is called)')
    .argument('<thread>', 'thread name, e.g. auth-refactor')
    .argument('[text...]', 'the entry; read from stdin when omitted')
    .option('--author <id>', 'who records it (default: user)')
    .option('--json', 'machine-readable output')
    .option('--session <id>', 'also record this call in a shared session context')
    .action(async (name: string, words: string[], o: JsonOpt & { author?: string }) => {
      const text = words.length ? words.join(' ') : await readStdin('entry text');
      await runTool('thread_push', { thread: name, text, ...(o.author !== undefined ? { author: o.author } : {}) }, o, (e) => out(`pushed #${e.seq} to ${e.thread}`));
    });

  thread
    .command('read')
    .description('show a thread with its summary (built now for entries not yet summarised)')
    .argument('<thread>', 'thread name')
    .option('-n, --entries <n>', 'latest entries to show (0-200; older ones go first when they pass --max-tokens)', intIn(0, 200), 20)
    .option('--max-tokens <n>', 'size of the answer, in tokens', intIn(100, MAX_ANSWER_TOKENS), MAX_ANSWER_TOKENS)
    .option('--json', 'machine-readable output')
    .option('--session <id>', 'also record this call in a shared session context')
    .action(async (name: string, o: JsonOpt & { entries: number; maxTokens: number }) => {
      await runTool('thread_read', { thread: name, entries: o.entries, max_tokens: o.maxTokens }, o, (v) => printThread(out, v));
    });

  thread
    .command('seek')
    .description('search thread entries (BM25, plus vectors when embeddings are configured)')
    .argument('<query...>', 'what to look for')
    .option('-k, --limit <n>', 'number of results (1-50)', intIn(1, 50), 10)
    .option('--thread <name>', 'only this thread')
    .option('--json', 'machine-readable output')
    .option('--session <id>', 'also record this call in a shared session context')
    .action(async (words: string[], o: JsonOpt & { limit: number; thread?: string }) => {
      const query = words.join(' ');
      await runTool('thread_seek', { query, limit: o.limit, ...(o.thread ? { thread: o.thread } : {}) }, o, ({ hits }) => {
          if (!hits.length) out('no results');
          hits.forEach((h, i) => out(`${String(i + 1).padStart(2)}. ${h.thread} #${h.seq} [${h.created_at.slice(0, 16).replace('T', ' ')} ${h.author}]  ${h.score}\n      ${h.text.replace(/\s+/g, ' ').slice(0, 200)}${changedNote(h.code_changed)}`));
      });
    });

  thread
    .command('list')
    .description('list threads, most recently updated first')
    .option('--json', 'machine-readable output')
    .option('--session <id>', 'also record this call in a shared session context')
    .action(async (o: JsonOpt) => {
      await runTool('thread_list', {}, o, ({ threads, total }) => {
        if (!threads.length) out('no threads');
        if (total > threads.length) out(`the ${threads.length} most recent of ${total} threads`);
        for (const t of threads) out(`${t.thread.padEnd(32)} ${String(t.entry_count).padStart(5)} entries  ${t.updated_at.slice(0, 16).replace('T', ' ')}  ${t.last_author}  summary ${t.summary}`);
      });
    });

}

/** `vlt notes`: the notes vault. */
// eslint-disable-next-line max-lines-per-function -- a table of nine commands, one chained declaration each: long, not deep
function registerNotesCommands(program: Command, { out, warn, readStdin, run, runTool }: MemoryCli): void {
  const notes = program.command('notes').description('the notes vault: README and docs/ (read-only) plus .vlt/notes/, or [vault] root').exitOverride();

  notes
    .command('list')
    .description('list notes')
    .argument('[folder]', 'only notes under this folder')
    .option('--limit <n>', 'notes per page (1-500)', intIn(1, 500), 200)
    .option('--cursor <cursor>', 'the next page: the cursor a previous answer printed')
    .option('--json', 'machine-readable output')
    .option('--session <id>', 'also record this call in a shared session context')
    .action(async (folder: string | undefined, o: JsonOpt & { limit: number; cursor?: string }) => {
      await runTool('list_notes', { ...(folder !== undefined ? { folder } : {}), limit: o.limit, ...(o.cursor !== undefined ? { cursor: o.cursor } : {}) }, o, ({ notes: list, total, next_cursor }) => {
        if (!list.length) out('no notes');
        if (next_cursor) warn(`${list.length} of ${total} notes; the next page: --cursor ${next_cursor}`);
        for (const n of list) out(`${n.path}  ${n.title}${n.tags.length ? `  #${n.tags.join(' #')}` : ''}${n.read_only ? '  (read-only)' : ''}`);
      });
    });

  notes
    .command('read')
    .description('print a note (by path, or by name)')
    .argument('<note>', 'note path or name')
    .option('--max-tokens <n>', 'size of the answer, in tokens; a longer note is cut', intIn(100, MAX_ANSWER_TOKENS), MAX_ANSWER_TOKENS)
    .option('--json', 'machine-readable output (frontmatter, links, issues)')
    .option('--session <id>', 'also record this call in a shared session context')
    .action(async (ref: string, o: JsonOpt & { maxTokens: number }) => {
      await runTool('read_note', { path: ref, max_tokens: o.maxTokens }, o, (n) => {
        out(n.content);
        if (n.code_changed?.length) warn(`${n.path} names code changed since it was written: ${n.code_changed.map((c) => c.path).join(', ')}`);
        if (n.truncated) warn(`${n.path} was cut to --max-tokens ${o.maxTokens}; the whole note is in the vault`);
      });
    });

  notes
    .command('write')
    .description('create or replace a note; the text comes from --text or stdin')
    .argument('<path>', 'note path relative to the vault (".md" added when missing)')
    .option('--text <markdown>', 'the note text (otherwise read from stdin)')
    .option('--json', 'machine-readable output')
    .option('--session <id>', 'also record this call in a shared session context')
    .action(async (ref: string, o: JsonOpt & { text?: string }) => {
      const text = o.text ?? (await readStdin('note text'));
      await runTool('write_note', { path: ref, content: text }, o, (r) => {
        out(`${r.created ? 'created' : 'updated'} ${r.path}`);
        for (const i of r.issues) warn(`${r.path}:${i.line}: ${i.message}`);
      });
    });

  notes
    .command('rm')
    .description('delete a note (exact path)')
    .argument('<path>', 'note path')
    .option('--json', 'machine-readable output')
    .option('--session <id>', 'also record this call in a shared session context')
    .action(async (ref: string, o: JsonOpt) => {
      await runTool('delete_note', { path: ref }, o, (r) => out(`deleted ${r.path}`));
    });

  notes
    .command('mv')
    .description('move or rename a note, rewriting every link to it')
    .argument('<from>', 'current note path')
    .argument('<to>', 'new note path, or a folder ending in /')
    .option('--json', 'machine-readable output')
    .option('--session <id>', 'also record this call in a shared session context')
    .action(async (from: string, to: string, o: JsonOpt) => {
      await runTool('move_note', { from, to }, o, (r) => {
        out(`moved ${r.from} → ${r.to}; rewrote ${r.links_rewritten} link${r.links_rewritten === 1 ? '' : 's'} in ${r.rewritten.length} note${r.rewritten.length === 1 ? '' : 's'}`);
        for (const p of r.rewritten) out(`  ${p}`);
        for (const n of r.not_rewritten) warn(`${n.path} links to ${r.from} but was not changed: ${n.reason}`);
      });
    });

  notes
    .command('search')
    .description('full-text search over titles, tags, frontmatter and text (BM25)')
    .argument('<query...>', 'what to look for')
    .option('-k, --limit <n>', 'number of results (1-50)', intIn(1, 50), 10)
    .option('--tag <tag>', 'only notes with this tag')
    .option('--folder <folder>', 'only notes under this folder')
    .option('--json', 'machine-readable output')
    .option('--session <id>', 'also record this call in a shared session context')
    .action(async (words: string[], o: JsonOpt & { limit: number; tag?: string; folder?: string }) => {
      const query = words.join(' ');
      await runTool('search_notes', { query, limit: o.limit, ...(o.tag ? { tag: o.tag } : {}), ...(o.folder ? { folder: o.folder } : {}) }, o, ({ hits }) => {
        if (!hits.length) out('no results');
        hits.forEach((h, i) => out(`${String(i + 1).padStart(2)}. ${h.path}:${h.line}  ${h.title}  ${h.score}${changedNote(h.code_changed)}\n      ${h.snippet}`));
      });
    });

  notes
    .command('backlinks')
    .description('notes that link to a note')
    .argument('<note>', 'note path or name')
    .option('--json', 'machine-readable output')
    .option('--session <id>', 'also record this call in a shared session context')
    .action(async (ref: string, o: JsonOpt) => {
      await runTool('get_backlinks', { path: ref }, o, ({ backlinks: links }) => {
        if (!links.length) out('no backlinks');
        for (const b of links) out(`${b.path}:${b.line}  ${b.context}`);
      });
    });

  notes
    .command('tags')
    .description('every tag with its note count')
    .option('--json', 'machine-readable output')
    .option('--session <id>', 'also record this call in a shared session context')
    .action(async (o: JsonOpt) => {
      await runTool('get_tags', {}, o, ({ tags }) => {
        if (!tags.length) out('no tags');
        for (const t of tags) out(`#${t.tag}  ${t.count}`);
      });
    });

  notes
    .command('index')
    .description("create or refresh a folder's index.md linking its notes")
    .argument('[folder]', 'folder relative to the vault (default: the vault root)', '')
    .option('--json', 'machine-readable output')
    .option('--session <id>', 'also record this call in a shared session context')
    .action(async (folder: string, o: JsonOpt) => {
      await runTool('create_index', { folder }, o, (r) => out(`${r.created ? 'created' : 'refreshed'} ${r.path} (${r.notes} notes)`));
    });

  notes
    .command('issues')
    .description('problems found in notes (invalid frontmatter, oversized or non-UTF-8 files), with file and line')
    .option('--json', 'machine-readable output')
    .action(async (o: JsonOpt) => {
      await run('note_issues', {}, o, (m) => m.vault.issues(), (issues) => {
        if (!issues.length) out('no issues');
        for (const i of issues) out(`${i.path}:${i.line}: ${i.message}`);
      });
    });

}

/** `vlt session`: the shared conversation context. */
function registerSessionCommands(program: Command, { out, run }: MemoryCli): void {
  const session = program.command('session').description('the shared conversation context of agents, the MCP server and the chat').exitOverride();

  session
    .command('show')
    .description('print a session as a prompt would see it (summary, key facts, recent exchanges)')
    .option('--session <id>', 'session id', DEFAULT_SESSION_ID)
    .option('--json', 'machine-readable state, focus and events')
    .action(async (o: { session: string; json?: boolean }) => {
      await run('session_show', {}, { json: Boolean(o.json) }, async (m) => {
        const s = m.session(o.session);
        return { state: await s.state(), focus: await s.focus(), events: await s.events(), text: await s.render() };
      }, (r) => out(r.text || `session ${o.session} is empty`));
    });

  session
    .command('search')
    .description('search a session, compressed history included')
    .argument('<query...>', 'what to look for')
    .option('--session <id>', 'session id', DEFAULT_SESSION_ID)
    .option('-k, --limit <n>', 'number of results', positiveInt, 10)
    .option('--json', 'machine-readable output')
    .action(async (words: string[], o: { session: string; limit: number; json?: boolean }) => {
      await run('session_search', {}, { json: Boolean(o.json) }, (m) => m.session(o.session).search(words.join(' '), o.limit), (hits) => {
        if (!hits.length) out('no results');
        for (const h of hits) out(`${h.source === 'summary' ? `summary of exchanges ${h.from_exchange}-${h.to_exchange}` : `exchange ${h.exchange} ${h.kind}${h.tool ? ` ${h.tool}` : ''}`}  ${h.score}\n      ${h.text}`);
      });
    });

  session
    .command('clear')
    .description('forget a session')
    .option('--session <id>', 'session id', DEFAULT_SESSION_ID)
    .action(async (o: { session: string }) => {
      await run('session_clear', {}, {}, (m) => m.session(o.session).clear(), () => out(`cleared session ${o.session}`));
    });
}
