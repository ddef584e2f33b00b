import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');
export const CLI = path.join(ROOT, 'dist/cli.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built `vlt` binary, as a user would, with a clean environment (no API keys). */
export function vlt(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): CliResult {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...opts.env };
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? ROOT, env, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export function vltAsync(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): ChildProcess {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...opts.env };
  return spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

export function tempDir(prefix = 'vlt-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

/** A private copy of a fixture tree, removed by the returned cleanup. */
export function copyFixture(rel: string): { dir: string; cleanup: () => void } {
  const dir = tempDir();
  cpSync(path.join(ROOT, rel), dir, { recursive: true });
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
