/**
 * `vlt daemon status|stop|run`: what the user sees of the workspace daemon, and running one in
 * the foreground.
 */
import { Command } from 'commander';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { remoteStatus, stopRemote } from '../daemon/client';
import { daemonPaths, readRecord } from '../daemon/socket';
import { type DaemonStatusInfo } from '../protocol/daemon';
import { liveDaemons, maxDaemons } from '../daemon/registry';
import { formatBytes } from './progress';
import type { CommandContext } from './command-context';
import { positiveInt } from './options';

/** The folder of the bundles: where this code runs from once built (dist/). */
const BUNDLE_DIR = __dirname;

export interface DaemonStatusReport {
  running: boolean;
  workspace: string;
  socket: string;
  daemon: DaemonStatusInfo | null;
  /** A record left by a daemon that no longer answers (a crash, kill -9). */
  stale_record: boolean;
}

export async function daemonStatus(root: string): Promise<DaemonStatusReport> {
  const real = realRoot(root);
  const paths = daemonPaths(real);
  const info = await remoteStatus(real, BUNDLE_DIR);
  return { running: Boolean(info), workspace: real, socket: paths.socket, daemon: info ?? null, stale_record: !info && readRecord(paths.record) !== undefined };
}

export function formatDaemonStatus(s: DaemonStatusReport): string {
  if (!s.daemon) {
    return [`no daemon serves ${s.workspace}${s.stale_record ? ' (a stale record is left; the next command replaces it)' : ''}`, 'the next `vlt` command in this workspace starts one (VLT_DAEMON=0 or --no-daemon: none)'].join('\n');
  }
  const d = s.daemon;
  return [
    `daemon      pid ${d.pid}, vlt ${d.version} (build ${d.build}, protocol ${d.protocol})`,
    `workspace   ${d.workspace}`,
    `socket      ${d.socket}`,
    `up          ${formatUptime(d.uptime_s)} since ${d.started_at}; exits after ${d.idle_minutes} idle minutes`,
    `memory      ${formatBytes(d.rss_bytes)} resident`,
    `requests    ${d.requests} served, ${d.active} running; ${d.mcp_sessions} MCP session${d.mcp_sessions === 1 ? '' : 's'} connected`,
    `editors     ${d.editors} connected${d.editors ? `, ${d.editors_shared} sharing this index` : ''}`,
    `index       ${d.index}${d.warming ? ' (warming up in the background)' : ''}`,
  ].join('\n');
}

export async function stopDaemon(root: string): Promise<string> {
  const real = realRoot(root);
  const r = await stopRemote(real, BUNDLE_DIR);
  return r.stopped ? `stopped the daemon of ${real}${r.pid !== undefined ? ` (pid ${r.pid})` : ''}` : `no daemon serves ${real}`;
}

function formatUptime(s: number): string {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function realRoot(root: string): string {
  try {
    return fs.realpathSync(root);
  } catch {
    return path.resolve(root);
  }
}

export interface AllDaemonsReport {
  /** How many may run at once (VLT_DAEMON_MAX). */
  max: number;
  daemons: Array<{ pid: number; workspace: string; last_used: string; status: DaemonStatusInfo | null }>;
}

/** Every daemon of this user that runs now, least recently used first, with what each says of itself. */
export async function allDaemons(): Promise<AllDaemonsReport> {
  const daemons = await Promise.all(
    liveDaemons().map(async (d) => ({ pid: d.pid, workspace: d.workspace, last_used: d.last_used, status: (await remoteStatus(d.workspace, BUNDLE_DIR).catch(() => undefined)) ?? null })),
  );
  return { max: maxDaemons(), daemons };
}

export function formatAllDaemons(r: AllDaemonsReport): string {
  if (r.daemons.length === 0) return `no daemon runs (at most ${r.max} at once; VLT_DAEMON_MAX)`;
  const lines = [`${r.daemons.length} daemon${r.daemons.length === 1 ? '' : 's'} running (at most ${r.max} at once; VLT_DAEMON_MAX), least recently used first:`];
  for (const d of r.daemons) {
    const s = d.status;
    lines.push(`  pid ${String(d.pid).padEnd(7)} ${s ? formatBytes(s.rss_bytes).padStart(9) : '        ?'}  last used ${d.last_used}  ${s ? `${s.active} running, ${s.mcp_sessions + s.editors} connected` : 'not answering'}  ${d.workspace}`);
  }
  return lines.join('\n');
}

export function registerDaemonCommands(program: Command, c: CommandContext): void {
  const { out, json } = c;
  program
    .command('daemon')
    .description('the workspace daemon: the background process that keeps the index, memory and language servers warm for every `vlt` command of one workspace (VLT_DAEMON=0 or --no-daemon: none)')
    .exitOverride()
    .addCommand(
      new Command('status')
        .description('whether a daemon serves this workspace: its pid, version, socket, uptime, memory and requests')
        .option('--all', 'every daemon of this user that runs now, with its memory and when it was last used')
        .option('--json', 'machine-readable output')
        .action(async (o: { json?: boolean; all?: boolean }) => {
          c.here('daemon status');
          if (o.all) {
            const r = await allDaemons();
            if (o.json) json(r);
            else out(formatAllDaemons(r));
            return;
          }
          const s = await daemonStatus(c.root());
          if (o.json) json(s);
          else out(formatDaemonStatus(s));
        }),
    )
    .addCommand(
      new Command('stop')
        .description("stop this workspace's daemon (it commits queued edits first)")
        .action(async () => {
          c.here('daemon stop');
          out(await stopDaemon(c.root()));
        }),
    )
    .addCommand(
      new Command('run')
        .description('run the daemon in the foreground (the first `vlt` command of a workspace starts it in the background)')
        .option('--idle <minutes>', 'exit after this long without a request (default 15, or VLT_DAEMON_IDLE_MINUTES)', positiveInt)
        .action(async (o: { idle?: number }) => {
          c.here('daemon run');
          const { logger } = c.wiring();
          const { runDaemon } = await import('../daemon/server');
          const { daemonHosts } = await import('./daemon-host');
          await runDaemon({ workspace: c.root(), logger, hosts: daemonHosts(logger), ...(o.idle !== undefined ? { idleMinutes: o.idle } : {}) });
        }),
    );
}
