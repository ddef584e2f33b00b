import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, cpSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');
export const CLI = path.join(ROOT, 'dist/cli.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built `vlt` binary, as a user would, with a clean environment (no API keys).
 * Asynchronous on purpose: a test may serve the CLI from its own process (the fake OpenAI
 * server), which a blocking spawn would starve.
 */
export function vlt(args: string[], opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number; stdinFile?: string } = {}): Promise<CliResult> {
  const child = vltAsync(args, opts);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

export function vltAsync(args: string[], opts: { cwd?: string; env?: Record<string, string>; stdinFile?: string } = {}): ChildProcess {
  // Each command in a process of its own, as before the workspace daemon: a test that wants the
  // daemon sets VLT_DAEMON=1 and stops it (test/node/daemon.test.ts).
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', VLT_DAEMON: '0', ...opts.env };
  const stdin = opts.stdinFile ? openSync(opts.stdinFile, 'r') : 'ignore';
  const child = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? ROOT, env, stdio: [stdin, 'pipe', 'pipe'] });
  if (typeof stdin === 'number') closeSync(stdin);
  return child;
}

export function tempDir(prefix = 'vlt-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

/** A private copy of a fixture tree (relative to the repository, or absolute), removed by the returned cleanup. */
export function copyFixture(rel: string): { dir: string; cleanup: () => void } {
  const dir = tempDir();
  cpSync(path.isAbsolute(rel) ? rel : path.join(ROOT, rel), dir, { recursive: true });
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
