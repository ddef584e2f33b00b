/**
 * What every command group gets from the program (`main.ts`): where it writes, the workspace
 * it works on (through this process or the daemon, see runtime.ts), its logger and progress,
 * and the guard of commands that must run in the asking process.
 */
import type { CliIo } from '../protocol/cli';
import type { LogLevel } from './progress';
import type { CliRuntime, CliWiring, CliWorkspace } from './runtime';

export interface CommandContext {
  readonly io: CliIo;
  readonly runtime: CliRuntime;
  /** A result line on stdout. */
  out(text: string): void;
  /** A result as indented JSON on stdout (a `--json` answer). */
  json(value: unknown): void;
  /** The workspace root: `p` (relative to the caller's directory), else the global `-C`, else the caller's directory. */
  root(p?: string): string;
  /** This command's logger, progress and cancellation, from the global -v/-q. */
  wiring(): CliWiring & { level: LogLevel };
  /** The workspace at {@link root}, as this process or the daemon reaches it. */
  workspace(p?: string): CliWorkspace;
  /** Throws USAGE when the command runs in the daemon: it holds the asking terminal or serves clients itself. */
  here(name: string): void;
}
