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
import { Command, CommanderError } from 'commander';
import * as path from 'node:path';
import { version as VERSION } from '../../package.json';
import { isVltError, VltError, toVltError } from '../core/errors';
import { offerEarlyRead, type EarlyRead } from '../core/store/store';
import { processIo } from '../node/stdio';
import type { CliIo } from '../protocol/cli';
import { registerCoderagCommands } from './coderag-commands';
import type { CommandContext } from './command-context';
import { registerContextCommands } from './context-commands';
import { registerDaemonCommands } from './daemon-commands';
import { registerEvalCommands } from './eval-commands';
import { writeLine } from './io';
import { registerMemoryCommands } from './memory-commands';
import { registerOracleCommand } from './oracle-command';
import { ProgressReporter, stderrLogger, type LogLevel } from './progress';
import { processRuntime, type CliRuntime, type CliWiring } from './runtime';
import { registerServerCommands } from './server-commands';
import { registerTrustCommands } from './trust-commands';

interface GlobalOpts {
  workspace?: string;
  verbose?: boolean;
  quiet?: boolean;
  daemon?: boolean;
}

/** Help is wrapped at a fixed width, so that the front can print it without building the program. */
export const HELP_WIDTH = 80;

/** The program: its global options, and every command group registered over one {@link CommandContext}. */
export function buildProgram(io: CliIo = processIo(), runtime: CliRuntime = processRuntime): Command {
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
  const out = (text: string) => writeLine(io.stdout, text);
  const root = (p?: string) => path.resolve(io.cwd, p ?? globals().workspace ?? '.');
  const wiring = (): CliWiring & { level: LogLevel } => {
    const g = globals();
    const level: LogLevel = g.quiet ? 'error' : g.verbose ? 'debug' : 'info';
    const progress = new ProgressReporter(io.stderr, !g.quiet, io.term);
    const logger = stderrLogger(io.stderr, level, () => progress.clear());
    return { logger, progress, signal: io.signal, level };
  };
  const c: CommandContext = {
    io,
    runtime,
    out,
    json: (value) => out(JSON.stringify(value, null, 2)),
    root,
    wiring,
    workspace: (p) => runtime.workspace(root(p), wiring()),
    here: (name) => {
      if (runtime.kind === 'daemon') throw new VltError('USAGE', `\`vlt ${name}\` runs in the process that asked for it, not in the workspace daemon`);
    },
  };
  registerCoderagCommands(program, c);
  registerServerCommands(program, c);
  registerOracleCommand(program, c);
  registerMemoryCommands(program, c);
  registerEvalCommands(program, c);
  registerContextCommands(program, c);
  registerTrustCommands(program, c);
  registerDaemonCommands(program, c);
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
