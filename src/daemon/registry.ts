/**
 * The user's running daemons, one small file each in a private folder
 * (`<tmp>/vlt-<uid>/daemons/<hash>.json`): which workspace, which process, when last used. It
 * bounds how many run at once: a daemon that starts past the bound stops the least recently
 * used idle ones (no command running, no editor or agent connected), so ten short commands in
 * ten folders leave a few warm daemons, not ten. One used in the last minute is never stopped.
 * `vlt daemon status --all` lists them.
 *
 * Advisory: a file whose process is gone is removed by the next reader; a daemon that cannot
 * write its file serves all the same.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { alive, privateSocketDir } from './socket';

export interface RegisteredDaemon {
  pid: number;
  workspace: string;
  socket: string;
  started_at: string;
  /** When it last finished a command or a session (ISO). */
  last_used: string;
}

/** Daemons that may run at once unless VLT_DAEMON_MAX says otherwise. */
export const DEFAULT_MAX_DAEMONS = 4;

export function maxDaemons(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.VLT_DAEMON_MAX);
  return Number.isInteger(n) && n >= 1 ? n : DEFAULT_MAX_DAEMONS;
}

/**
 * A daemon used within this long is not stopped by the bound, however many run: the folders a
 * person is working in now stay warm (VLT_DAEMON_EVICT_IDLE_S, seconds).
 */
export const DEFAULT_EVICT_IDLE_S = 60;

export function evictIdleMs(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.VLT_DAEMON_EVICT_IDLE_S);
  return (Number.isFinite(n) && n >= 0 && env.VLT_DAEMON_EVICT_IDLE_S !== undefined && env.VLT_DAEMON_EVICT_IDLE_S !== '' ? n : DEFAULT_EVICT_IDLE_S) * 1000;
}

function registryDir(): string {
  return path.join(privateSocketDir(), 'daemons');
}

function fileOf(workspace: string): string {
  return path.join(registryDir(), `${createHash('sha256').update(workspace).digest('hex').slice(0, 16)}.json`);
}


/** Records (or refreshes) this process as the daemon of `workspace`. */
export function register(entry: RegisteredDaemon): void {
  try {
    const dir = registryDir();
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = fileOf(entry.workspace);
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, file);
  } catch {
    // Advisory only.
  }
}

/** Removes this process's record of `workspace` (another daemon's is left alone). */
export function unregister(workspace: string, pid = process.pid): void {
  const file = fileOf(workspace);
  if (read(file)?.pid === pid) fs.rmSync(file, { force: true });
}

function read(file: string): RegisteredDaemon | undefined {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<RegisteredDaemon>;
    if (typeof v.pid !== 'number' || typeof v.workspace !== 'string' || typeof v.socket !== 'string') return undefined;
    return { pid: v.pid, workspace: v.workspace, socket: v.socket, started_at: String(v.started_at ?? ''), last_used: String(v.last_used ?? v.started_at ?? '') };
  } catch {
    return undefined;
  }
}

/** The live daemons, least recently used first; records of gone processes are removed. */
export function liveDaemons(): RegisteredDaemon[] {
  let names: string[];
  try {
    names = fs.readdirSync(registryDir()).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const out: RegisteredDaemon[] = [];
  for (const n of names) {
    const file = path.join(registryDir(), n);
    const d = read(file);
    if (d && alive(d.pid)) out.push(d);
    else fs.rmSync(file, { force: true });
  }
  return out.sort((a, b) => a.last_used.localeCompare(b.last_used));
}

/**
 * The daemons to stop so that at most `max` run, this one included: the least recently used
 * others, skipping those `busy` says are serving (a command running, a session connected).
 */
export async function overBound(self: number, max: number, busy: (d: RegisteredDaemon) => Promise<boolean>): Promise<RegisteredDaemon[]> {
  const others = liveDaemons().filter((d) => d.pid !== self);
  let excess = others.length + 1 - max;
  const out: RegisteredDaemon[] = [];
  for (const d of others) {
    if (excess <= 0) break;
    if (await busy(d)) continue;
    out.push(d);
    excess--;
  }
  return out;
}
