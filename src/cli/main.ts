/**
 * The `vlt` command line: the CLI host's one wiring file. It defines every command, builds the
 * engine's ports (Node file system, stderr logger, progress), runs one command, prints results
 * to stdout and maps errors to exit codes: 0 success, 1 failure, 2 usage error, 130 cancelled.
 *
 * Commands write through a {@link CliIo} and reach the workspace through a {@link CliRuntime}:
 * this process's terminal and a fresh open of the index (`--no-daemon`), or, inside the
 * workspace daemon, the client's terminal at the other end of the socket and the daemon's warm
 * workspace server. The thin front (front.ts) decides which.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import * as path from 'node:path';
import { version as VERSION } from '../../package.json';
import type { Engine } from '../core/engine';
import type { LanguageServers } from '../core/intel/lsp';
import type { Navigator } from '../core/intel/navigate';
import { DEFAULT_MAP_TOKENS, RepoMapper } from '../core/intel/repomap';
import { locatorFor } from '../core/locate/locate';
import { isVltError, VltError, toVltError } from '../core/errors';
import { LANGUAGES } from '../core/types';
import { offerEarlyRead, type EarlyRead } from '../core/store/store';
import { nodeWorkspaceFs } from '../node/fs';
import { gitLocateHistory } from '../node/locate-history';
import { ProgressReporter, stderrLogger, type LogLevel } from './progress';
import { registerContextCommands } from './context-commands';
import { registerEvalCommands } from './eval-commands';
import { registerMemoryCommands } from './memory-commands';
import { registerTrustCommands } from './trust-commands';
import { SOURCE_FAMILIES, type SourceFamily } from '../core/oracle/oracle';
import { decodeCursor, encodeCursor, requestFingerprint } from '../core/tools/budget';
import { writeLine } from './io';
import { processIo } from '../node/stdio';
import type { CliIo } from '../protocol/cli';
import { processRuntime, summarizeIndexLine, type CliRuntime, type CliWiring } from './runtime';
import { formatDryRun, formatExplain, formatLocate, formatNavAnswer, formatSearch } from './format';
import { renderStatus } from './status-output';
import { CHUNK_KINDS, type ChunkKindFilter } from '../core/search/rank';

interface GlobalOpts {
  workspace?: string;
  verbose?: boolean;
  quiet?: boolean;
  daemon?: boolean;
}

/** Help is wrapped at a fixed width, so that the front can print it without building the program. */
export const HELP_WIDTH = 80;

function parsePositiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

function parseKinds(v: string): ChunkKindFilter[] {
  const list = v.split(',').map((x) => x.trim()).filter(Boolean);
  const bad = list.filter((x) => !(CHUNK_KINDS as readonly string[]).includes(x));
  if (bad.length || list.length === 0) throw new InvalidArgumentError(`expected a comma-separated list of ${CHUNK_KINDS.join(', ')}; got ${bad.join(', ') || 'nothing'}`);
  return list as ChunkKindFilter[];
}

function parseSources(v: string): SourceFamily[] {
  const list = v.split(',').map((x) => x.trim()).filter(Boolean);
  const bad = list.filter((x) => !(SOURCE_FAMILIES as readonly string[]).includes(x));
  if (bad.length || list.length === 0) throw new InvalidArgumentError(`expected a comma-separated list of ${SOURCE_FAMILIES.join(', ')}; got ${bad.join(', ') || 'nothing'}`);
  return list as SourceFamily[];
}

export function buildProgram(io: CliIo = processIo(), runtime: CliRuntime = processRuntime): Command {
  const out = (text: string) => writeLine(io.stdout, text);
  const json = (value: unknown) => out(JSON.stringify(value, null, 2));
  const program = new Command('vlt')
    .description('Vlt Oracle: codebase context for AI coding agents')
    .configureOutput({ writeOut: (t) => io.stdout.write(t), writeErr: (t) => io.stderr.write(t) })
    .configureHelp({ helpWidth: HELP_WIDTH })
    .version(VERSION)
    .option('-C, --workspace <dir>', 'workspace root (default: current directory)')
    .option('-v, --verbose', 'debug logs on stderr')
    .option('-q, --quiet', 'only errors on stderr')
    .option('--no-daemon', 'run in this process instead of the workspace daemon (also VLT_DAEMON=0)')
    .showHelpAfterError()
    .exitOverride();
  const globals = (): GlobalOpts => program.opts<GlobalOpts>();
  const root = (p?: string) => path.resolve(io.cwd, p ?? globals().workspace ?? '.');
  const wiring = (): CliWiring & { level: LogLevel } => {
    const g = globals();
    const level: LogLevel = g.quiet ? 'error' : g.verbose ? 'debug' : 'info';
    const progress = new ProgressReporter(io.stderr, !g.quiet, io.term);
    const logger = stderrLogger(io.stderr, level, () => progress.clear());
    return { logger, progress, signal: io.signal, level };
  };
  const workspace = (p?: string) => runtime.workspace(root(p), wiring());
  /** Commands that hold this terminal or serve clients themselves: never run for another client. */
  const here = (name: string) => {
    if (runtime.kind === 'daemon') throw new VltError('USAGE', `\`vlt ${name}\` runs in the process that asked for it, not in the workspace daemon`);
  };

  /** `init` and `sync`: an incremental index run with progress. */
  const indexCommand = async (p: string | undefined, o: { json?: boolean; force?: boolean }): Promise<void> => {
    const r = await workspace(p).index(o.force ? { force: true } : {});
    if (o.json) json(r);
    else out(summarizeIndexLine(r));
  };

  const coderag = program.command('coderag').description('index and search the code of a workspace').exitOverride();

  coderag
    .command('init')
    .description('index a workspace (incremental when an index exists)')
    .argument('[path]', 'workspace root')
    .option('--dry-run', 'show what would be indexed, write nothing')
    .option('--list-skipped', 'with --dry-run: every file that would be skipped, and why')
    .option('--json', 'machine-readable output')
    .action(async (p: string | undefined, o: { dryRun?: boolean; listSkipped?: boolean; json?: boolean }) => {
      if (o.listSkipped && !o.dryRun) throw new VltError('USAGE', '--list-skipped goes with --dry-run (or `vlt coderag status --list-skipped` for the index)');
      if (!o.dryRun) return indexCommand(p, o);
      const r = await workspace(p).dryRun({ listSkipped: Boolean(o.listSkipped) });
      if (o.json) json(r);
      else out(formatDryRun(r));
    });

  coderag
    .command('sync')
    .description('re-index changed files now')
    .option('--force', 'parse every file again, changed or not; the index committed before keeps answering until the run commits (a stopped run resumes)')
    .option('--json', 'machine-readable output')
    .action((o: { json?: boolean; force?: boolean }) => indexCommand(undefined, o));

  coderag
    .command('status')
    .description('what the index holds, and what was skipped and why')
    .option('--list-skipped', 'every skipped file and folder, and why')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean; listSkipped?: boolean }) => {
      await workspace().existing(async (engine) => {
        io.stdout.write(renderStatus(engine.status(), { json: o.json === true, ...(o.listSkipped ? { skippedFiles: engine.store.getSkipped() } : {}) }));
      });
    });

  coderag
    .command('watch')
    .description('keep the index current while files change: edits are indexed as they happen and committed in batches (vlt.toml [index] queue_*); Ctrl-C commits what is queued')
    .option('--json', 'one JSON line per commit on stdout')
    .action(async (o: { json?: boolean }) => {
      here('coderag watch');
      const { logger, progress } = wiring();
      const deps = { fs: nodeWorkspaceFs, logger };
      const { WorkspaceServer } = await import('../server/workspace');
      const { watchWorkspace } = await import('../server/watch');
      // The queue's thresholds come from vlt.toml ([index] queue_*).
      const ws = await WorkspaceServer.open({ workspace: root(), logger, onProgress: progress.sink, deps, writer: true, hostName: 'vlt coderag watch' });
      const stop = new AbortController();
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => stop.abort());
      try {
        await watchWorkspace(ws, {
          logger,
          signal: stop.signal,
          onCommit: (s) => (o.json ? out(JSON.stringify({ committed: s.lastCommit, commits: s.commits })) : out(`committed at ${s.lastCommit ?? '?'} (${s.commits} commit${s.commits === 1 ? '' : 's'} so far)`)),
        });
      } finally {
        await ws.close();
      }
    });

  coderag
    .command('search')
    .description('hybrid code search (BM25 + symbols + paths, and vectors when configured)')
    .argument('<query...>', 'what to look for: words, identifiers, or a pasted bug report')
    .option('-k, --limit <n>', 'number of results', parsePositiveInt, 10)
    .addOption(new Option('--lang <language>', 'only this language').choices([...LANGUAGES]))
    .option('--path <glob>', 'only paths matching this glob (e.g. "net/http/**")')
    .option('--kind <kinds>', `only these kinds, comma-separated: ${CHUNK_KINDS.join(', ')}`, parseKinds)
    .option('--json', 'machine-readable output (stable contract, see docs/cli.md)')
    .option('--explain', 'show each retriever and the fusion')
    .action(async (words: string[], o: { limit: number; lang?: string; path?: string; kind?: ChunkKindFilter[]; json?: boolean; explain?: boolean }) => {
      const query = words.join(' ');
      if (!query.trim()) throw new VltError('USAGE', 'the search query is empty');
      const w = wiring();
      const res = await runtime.workspace(root(), w).query((engine) =>
        engine.search(query, { k: o.limit, ...(o.lang ? { language: o.lang } : {}), ...(o.path ? { pathGlob: o.path } : {}), ...(o.kind ? { kinds: o.kind } : {}), signal: io.signal }),
      );
      if (o.json) {
        // The --json contract is the list of hits; what to know about them goes to stderr.
        for (const n of res.notes) w.logger.warn(n);
        json(o.explain ? { hits: res.hits, notes: res.notes, explain: res.explain } : res.hits);
      } else out(formatSearch(res, Boolean(o.explain)));
    });

  coderag
    .command('locate')
    .description('the files to change for a bug report, stack trace or issue text, each with its reasons')
    .argument('[report...]', 'the report, or - (or nothing) to read it from stdin')
    .option('-k, --limit <n>', 'number of files', parsePositiveInt, 10)
    .option('--json', 'machine-readable output')
    .option('--explain', "each channel's share of each file's score")
    .action(async (words: string[], o: { limit: number; json?: boolean; explain?: boolean }) => {
      let report = words.join(' ');
      if (report.trim() === '' || report.trim() === '-') {
        report = (await io.readStdin()) ?? '';
        if (!report.trim()) throw new VltError('USAGE', 'no report given: pass it as arguments or on stdin (vlt coderag locate - < issue.txt)');
      }
      const w = wiring();
      const res = await runtime.workspace(root(), w).query(async (engine) => {
        const history = await gitLocateHistory(engine.root, w.logger).get(io.signal);
        return locatorFor(engine).locate(report, { k: o.limit, signal: io.signal, ...(history ? { history } : {}) });
      });
      for (const n of res.notes) w.logger.warn(n);
      if (o.json) json(res);
      else out(formatLocate(res, Boolean(o.explain)));
    });

  coderag
    .command('map')
    .description('repository map: files and their most important definitions, ranked by use (PageRank), within a token budget')
    .option('--scope <dir>', 'only files under this directory (ranking still uses the whole repository)')
    .option('--tokens <n>', 'token budget of the map', parsePositiveInt, DEFAULT_MAP_TOKENS)
    .option('--focus <item>', 'rank around a file, directory, symbol or words (repeatable)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--cursor <cursor>', 'continue after a previous map (its next_cursor)')
    .option('--json', 'machine-readable output')
    .action(async (o: { scope?: string; tokens: number; focus: string[]; cursor?: string; json?: boolean }) => {
      const w = wiring();
      // A person at a terminal asked for this many tokens: no cap (the agent tool has one).
      const res = await runtime.workspace(root(), w).query((engine) =>
        new RepoMapper(engine).render({
          maxTokens: o.tokens,
          allowLarge: true,
          ...(o.scope !== undefined ? { scope: o.scope } : {}),
          ...(o.focus.length ? { focus: o.focus } : {}),
          ...(o.cursor !== undefined ? { cursor: o.cursor } : {}),
        }),
      );
      if (o.json) json(res);
      else {
        out(res.text || '(no definitions to show)');
        if (res.next_cursor) w.logger.info(`more definitions rank below; continue with --cursor ${res.next_cursor}`);
      }
    });

  /** Navigation commands: language servers only when the call may use them (not with --no-lsp). */
  const withNavigator = <T>(opts: { lsp: boolean }, fn: (nav: Navigator, engine: Engine, lsp: LanguageServers | undefined) => Promise<T>): Promise<T> => workspace().navigate(opts, fn);

  const navOptions = (o: { lsp?: boolean; lspTimeout?: number }) => ({ noLsp: o.lsp === false, ...(o.lspTimeout !== undefined ? { lspTimeoutMs: o.lspTimeout } : {}) });

  coderag
    .command('def')
    .description('where a symbol is defined: language server first, then ctags, the index, search')
    .argument('<target>', 'a symbol name (Writer.Close) or FILE:LINE:COL')
    .option('--json', 'machine-readable output')
    .option('--explain', 'which providers ran, which were skipped and why, and how long each took')
    .option('--no-lsp', 'do not start language servers (the fallback chain alone)')
    .option('--lsp-timeout <ms>', 'upper bound for the language server', parsePositiveInt)
    .action(async (target: string, o: { json?: boolean; explain?: boolean; lsp?: boolean; lspTimeout?: number }) => {
      await withNavigator({ lsp: o.lsp !== false }, async (nav) => {
        const a = await nav.definition(target, navOptions(o));
        if (o.json) json(a);
        else out(formatNavAnswer(a, 'definition', Boolean(o.explain)));
      });
    });

  coderag
    .command('refs')
    .description('where a symbol is used: language server first, then the index resolving each use')
    .argument('<target>', 'a symbol name or FILE:LINE:COL')
    .option('-k, --limit <n>', 'most references listed on this page (the total counts them all)', parsePositiveInt, 200)
    .option('--cursor <cursor>', 'the next page: the cursor a previous answer printed, with the same other arguments')
    .option('--budget <ms>', 'without a language server: answer with what was found after this long, saying the list is partial', parsePositiveInt)
    .option('--json', 'machine-readable output')
    .option('--explain', 'which providers ran, which were skipped and why, and how long each took')
    .option('--no-lsp', 'do not start language servers (the fallback chain alone)')
    .option('--lsp-timeout <ms>', 'upper bound for the language server', parsePositiveInt)
    .action(async (target: string, o: { limit: number; cursor?: string; budget?: number; json?: boolean; explain?: boolean; lsp?: boolean; lspTimeout?: number }) => {
      const fingerprint = requestFingerprint([target, o.lsp !== false, o.budget ?? null, o.limit]);
      const offset = o.cursor !== undefined ? decodeCursor(o.cursor, fingerprint, Number.MAX_SAFE_INTEGER) : 0;
      await withNavigator({ lsp: o.lsp !== false }, async (nav) => {
        const a = await nav.references(target, { ...navOptions(o), limit: offset + o.limit, ...(o.budget !== undefined ? { budgetMs: o.budget } : {}) });
        const page = { ...a, locations: a.locations.slice(offset), offset };
        const more = a.total !== undefined ? a.total > offset + o.limit : a.locations.length >= offset + o.limit;
        const answer = more ? { ...page, next_cursor: encodeCursor(offset + o.limit, fingerprint) } : page;
        if (o.json) json(answer);
        else out(formatNavAnswer(answer, 'references', Boolean(o.explain)));
      });
    });

  coderag
    .command('diag')
    .description("a file's diagnostics (type errors, warnings) from its language server; with LINE:COL, the hover text there too")
    .argument('<file>', 'FILE or FILE:LINE:COL')
    .option('--json', 'machine-readable output')
    .option('--timeout <ms>', 'upper bound for the language server', parsePositiveInt, 30_000)
    .action(async (target: string, o: { json?: boolean; timeout: number }) => {
      await withNavigator({ lsp: true }, async (nav, engine, lsp) => {
        if (!lsp) throw new VltError('INTERNAL', 'diag runs without language servers');
        const m = /^(.+):(\d+):(\d+)$/.exec(target);
        const file = nav.relPath(m?.[1] ?? target);
        const st = await nodeWorkspaceFs.stat(path.join(engine.root, file)).catch(() => undefined);
        if (!st) throw new VltError('PATH_NOT_FOUND', `${file} does not exist in the workspace`);
        const d = await lsp.diagnostics(file, { timeoutMs: o.timeout });
        if (!d.ok) throw new VltError('LSP_UNAVAILABLE', `no diagnostics for ${file}: ${d.failure} (${d.reason})`);
        let hover: string | null | undefined;
        if (m?.[2] && m[3]) {
          const h = await lsp.hover({ path: file, line: Number(m[2]), col: Number(m[3]) }, { timeoutMs: o.timeout });
          hover = h.ok ? h.value : null;
        }
        if (o.json) json({ file, server: d.server, diagnostics: d.value, ...(hover !== undefined ? { hover } : {}) });
        else {
          const lines = d.value.map((x) => `${x.range.path}:${x.range.startLine}:${x.range.startCol}  ${x.severity}  ${x.message.split('\n')[0] ?? ''}${x.code ? `  [${x.code}]` : ''}`);
          out([`${file}: ${d.value.length} diagnostic${d.value.length === 1 ? '' : 's'} from ${d.server}`, ...lines, ...(hover ? ['', 'hover:', hover] : [])].join('\n'));
        }
      });
    });

  const mcp = program
    .command('mcp')
    .description("serve every agent tool (search_code, find_definition, find_references, ask_oracle, notes, threads, …) over MCP on stdin/stdout; logs go to stderr")
    .exitOverride()
    .action(async () => {
      here('mcp');
      // The global -C/--workspace is read here, so `vlt mcp --workspace DIR` and `vlt -C DIR mcp` agree.
      const { logger, progress } = wiring();
      // Loaded on demand, so that other commands do not pay for initialising the MCP SDK (~5 ms).
      const { runMcpStdio } = await import('../mcp/main');
      await runMcpStdio({ workspace: root(), logger, onProgress: progress.sink });
    });

  mcp
    .command('info')
    .description('the MCP server of this workspace: HTTP address, bearer token, and configuration for Claude Code, Cursor and VS Code')
    .option('--json', 'machine-readable output')
    .option('--chat-link', "print a new one-time link to the running `vlt serve`'s browser chat instead")
    .action(async (o: { json?: boolean; chatLink?: boolean }) => {
      const { logger } = wiring();
      const { mcpInfo, formatMcpInfo, newChatLink } = await import('../mcp/info');
      if (o.chatLink) {
        const link = await newChatLink(root(), logger);
        if (o.json) json(link);
        else out(link.chat_url);
        return;
      }
      const info = await mcpInfo(root(), logger, io.cwd);
      if (o.json) json(info);
      else out(formatMcpInfo(info));
    });

  program
    .command('lsp')
    .description('serve the workspace to an editor over the Language Server Protocol on stdin/stdout (workspace symbols, navigation, vlt/* requests, the MCP endpoint)')
    .option('--stdio', 'talk over stdin/stdout (the default and only transport)')
    // Clients add their own arguments (vscode-languageclient: --clientProcessId=PID).
    .allowUnknownOption(true)
    .allowExcessArguments(true)
    .action(async () => {
      here('lsp');
      // The workspace comes from the client's initialize request; the LSP log goes to the client.
      const { runLspServer } = await import('../lsp/main');
      const { startMcpEndpoint } = await import('../mcp/main');
      await runLspServer({ startMcp: (ws, o) => startMcpEndpoint(ws, o) });
      process.exit(0);
    });

  program
    .command('serve')
    .description('serve the agent tools over MCP Streamable HTTP and the chat in a browser (bearer token, loopback only); prints {"url","chat_url",...} as one JSON line on stdout')
    .option('--mcp-port <n>', 'port of the MCP endpoint (default 7457; 0 picks a free one)', (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('expected a port number, 0-65535');
      return n;
    })
    .option('--host <address>', 'address to listen on (default 127.0.0.1; non-loopback needs --allow-remote)')
    .option('--allow-remote', 'permit a --host other machines can reach (anyone with the token can then read the code)')
    .option('--no-chat', 'do not serve the browser chat at /chat/ (its one-time login link is printed as chat_url)')
    .action(async (o: { mcpPort?: number; host?: string; allowRemote?: boolean; chat?: boolean }) => {
      here('serve');
      const { logger, progress } = wiring();
      const { runMcpHttp } = await import('../mcp/main');
      await runMcpHttp({
        workspace: root(),
        logger,
        onProgress: progress.sink,
        ...(o.mcpPort !== undefined ? { port: o.mcpPort } : {}),
        ...(o.host !== undefined ? { host: o.host } : {}),
        allowRemote: Boolean(o.allowRemote),
        chat: o.chat !== false,
        onListening: (l) => out(JSON.stringify({ url: l.url, token_file: l.token_file, pid: l.pid, ...(l.chat_url ? { chat_url: l.chat_url } : {}) })),
      });
    });

  program
    .command('oracle')
    .description('answer a question about the codebase: short, cited [path:line]; an extractive evidence brief without a language model')
    .argument('<question...>', 'the question, or a pasted bug report (quote it, or pass - to read it from stdin)')
    .option('--source <list>', `sources to consult, comma-separated: ${SOURCE_FAMILIES.join(',')}`, parseSources)
    .option('--explain', 'each retrieval path with its results and timing, the fusion and rerank, and the context with token counts')
    .option('--json', 'machine-readable output (the whole answer object)')
    .option('--session <id>', 'the shared conversation context to read follow-ups from and record into')
    .option('--no-llm', 'the extractive evidence brief even when a language model is configured')
    .option('--agent', 'let the language model call search and navigation tools in a loop')
    .option('--max-turns <n>', 'agent mode: most model turns', parsePositiveInt)
    .option('--tokens <n>', 'context budget in tokens (default by question type)', parsePositiveInt)
    .option('--lsp', 'ask language servers and ctags for definitions and references (slower to start)')
    .action(async (words: string[], o: { source?: SourceFamily[]; explain?: boolean; json?: boolean; session?: string; llm?: boolean; agent?: boolean; maxTurns?: number; tokens?: number; lsp?: boolean }) => {
      const { logger, progress } = wiring();
      const question = words.length === 1 && words[0] === '-' ? ((await io.readStdin()) ?? '') : words.join(' ');
      let streamed = false;
      const ans = await workspace().oracle({ lsp: Boolean(o.lsp), noLlm: o.llm === false }, (oracle) =>
        oracle.ask(question, {
          ...(o.source ? { sources: o.source } : {}),
          explain: Boolean(o.explain),
          ...(o.session !== undefined ? { session: o.session } : {}),
          author: 'user',
          noLlm: o.llm === false,
          agent: Boolean(o.agent),
          ...(o.maxTurns ? { maxTurns: o.maxTurns } : {}),
          ...(o.tokens ? { budgetTokens: o.tokens } : {}),
          signal: io.signal,
          onEvent: (e) => {
            if (e.type === 'phase') progress.status(e.message);
            else if (e.type === 'tool') logger.info(`oracle: calling ${e.name} ${e.args.slice(0, 160)}`);
            else if (e.type === 'text' && !o.json) {
              if (!streamed) progress.clear();
              streamed = true;
              io.stdout.write(e.text);
            }
          },
        }),
      );
      progress.clear();
      if (o.json) json(ans);
      else {
        // A streamed answer is already on stdout; the brief and the no-context reply are not.
        if (!streamed || ans.mode === 'extractive') out(`${streamed ? '\n\n' : ''}${ans.answer}`);
        else out('');
        if (ans.details) out(`\n**Details**\n\n${ans.details}`);
        if (ans.degraded) logger.warn(`oracle: ${ans.degraded}`);
        if (o.explain && ans.explain) out(formatExplain(ans.explain));
      }
    });

  registerMemoryCommands(program, { io, memory: (fn) => workspace().memory(fn) });
  registerEvalCommands(program, { io, root: () => root(), wiring, here });
  registerContextCommands(program, {
    io,
    query: (fn) => {
      const w = wiring();
      return runtime.workspace(root(), w).query((engine) => fn(engine, w.logger));
    },
  });
  registerTrustCommands(program, {
    io,
    workspace: (p) => {
      here('trust');
      return root(p);
    },
  });

  program
    .command('daemon')
    .description('the workspace daemon: the background process that keeps the index, memory and language servers warm for every `vlt` command of one workspace (VLT_DAEMON=0 or --no-daemon: none)')
    .exitOverride()
    .addCommand(
      new Command('status')
        .description('whether a daemon serves this workspace: its pid, version, socket, uptime, memory and requests')
        .option('--all', "every daemon of this user that runs now, with its memory and when it was last used")
        .option('--json', 'machine-readable output')
        .action(async (o: { json?: boolean; all?: boolean }) => {
          here('daemon status');
          if (o.all) {
            const { allDaemons, formatAllDaemons } = await import('./daemon-commands');
            const r = await allDaemons();
            if (o.json) json(r);
            else out(formatAllDaemons(r));
            return;
          }
          const { daemonStatus, formatDaemonStatus } = await import('./daemon-commands');
          const s = await daemonStatus(root());
          if (o.json) json(s);
          else out(formatDaemonStatus(s));
        }),
    )
    .addCommand(
      new Command('stop')
        .description("stop this workspace's daemon (it commits queued edits first)")
        .action(async () => {
          here('daemon stop');
          const { stopDaemon } = await import('./daemon-commands');
          out(await stopDaemon(root()));
        }),
    )
    .addCommand(
      new Command('run')
        .description('run the daemon in the foreground (the first `vlt` command of a workspace starts it in the background)')
        .option('--idle <minutes>', 'exit after this long without a request (default 15, or VLT_DAEMON_IDLE_MINUTES)', parsePositiveInt)
        .action(async (o: { idle?: number }) => {
          here('daemon run');
          const { logger } = wiring();
          const { runDaemon } = await import('../daemon/server');
          const { daemonHosts } = await import('./daemon-host');
          await runDaemon({ workspace: root(), logger, hosts: daemonHosts(logger), ...(o.idle !== undefined ? { idleMinutes: o.idle } : {}) });
        }),
    );

  return program;
}

/**
 * Runs one command line and gives its exit code: 0 success, 1 failure, 2 usage error, 130
 * cancelled. Failures are one line on the command's stderr.
 */
export async function runCommand(argv: readonly string[], io: CliIo, runtime: CliRuntime): Promise<number> {
  const program = buildProgram(io, runtime);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version exit 0; every other commander error is a usage error.
      return e.exitCode === 0 || e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : 2;
    }
    const err = isVltError(e) ? e : toVltError(e);
    if (io.signal.aborted) return 130;
    io.stderr.write(`vlt: ${err.message}${err.code === 'INTERNAL' && process.env.VLT_DEBUG ? `\n${(e as Error).stack}` : ''}\n`);
    return err.code === 'USAGE' ? 2 : 1;
  }
}

/**
 * The help text of every command, keyed by its path (`""`, `"coderag"`, `"coderag search"`):
 * written next to the bundles at build time, so that `vlt … --help` prints without loading this
 * module.
 */
export function helpTexts(): Record<string, string> {
  const texts: Record<string, string> = {};
  const walk = (c: Command, prefix: string[]) => {
    texts[prefix.join(' ')] = c.helpInformation();
    for (const s of c.commands) walk(s, [...prefix, s.name()]);
  };
  walk(buildProgram(), []);
  return texts;
}

/**
 * The CLI in this process, as the front runs it when no daemon takes the command: exits once
 * stdout is flushed.
 */
/**
 * Runs a command in this process. `indexRead`: the front's read of the workspace's index.db,
 * begun before this program was loaded, for the command's store to take over.
 */
export function runInProcess(argv: readonly string[], opts: { indexRead?: { file: string; read: Promise<EarlyRead | undefined> } } = {}): void {
  if (opts.indexRead) offerEarlyRead(opts.indexRead.file, opts.indexRead.read);
  // `vlt … | head` closes stdout early; that is the reader's choice, not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  // Exit explicitly once stdout is flushed: terminated parse workers otherwise keep the process
  // around for a few seconds while their WebAssembly heaps are torn down.
  const exit = (code: number) => process.stdout.write('', () => process.exit(code));
  // Never silent: a command whose work stopped on a promise that can no longer settle lets the
  // event loop run dry, and Node would exit 0 with nothing printed.
  let settled = false;
  process.once('beforeExit', () => {
    if (settled) return;
    process.stderr.write('vlt: internal error: the command stopped without an answer (please report it with the command line)\n');
    process.exit(1);
  });
  runCommand(argv, processIo(), processRuntime).then(
    (code) => {
      settled = true;
      exit(code);
    },
    (e: unknown) => {
      settled = true;
      process.stderr.write(`vlt: ${String(e)}\n`);
      exit(1);
    },
  );
}

if (require.main === module) runInProcess(process.argv.slice(2));
