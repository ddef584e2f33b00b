/**
 * Shared plumbing of the MCP end-to-end tests: the built CLI, a real SDK client over stdio or
 * Streamable HTTP, a running `vlt serve`, and small process probes.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { CLI, ROOT } from './cli';

/** Builds the CLI bundle when it is missing or older than the sources (a lone `vitest run test/mcp`). */
export function ensureBuilt(): void {
  const newest = (dir: string): number => {
    let m = 0;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      m = Math.max(m, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
    }
    return m;
  };
  if (!existsSync(CLI) || statSync(CLI).mtimeMs < newest(path.join(ROOT, 'src'))) execFileSync(process.execPath, ['esbuild.mjs'], { cwd: ROOT });
}

/**
 * The environment the CLI runs in: no API keys, nothing inherited but PATH and HOME, and the
 * server in the process the test starts (no workspace daemon; test/cli/daemon.test.ts has it).
 */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', VLT_DAEMON: '0', ...extra };
}

export interface McpSession {
  client: Client;
  /** Errors the client saw on the transport: a non-protocol line on stdout would land here. */
  errors: Error[];
}

export interface StdioSession extends McpSession {
  transport: StdioClientTransport;
  pid: number;
  stderr: () => string;
}

export async function connectStdio(args: string[], opts: { env?: Record<string, string> } = {}): Promise<StdioSession> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, ...args], cwd: ROOT, env: cleanEnv(opts.env), stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const client = new Client({ name: 'vlt-test', version: '0.0.0' });
  const errors: Error[] = [];
  client.onerror = (e) => errors.push(e);
  await client.connect(transport);
  return { client, transport, pid: transport.pid!, stderr: () => stderr, errors };
}

export interface HttpSession extends McpSession {
  transport: StreamableHTTPClientTransport;
}

export async function connectHttp(url: string, token: string | undefined, headers: Record<string, string> = {}): Promise<HttpSession> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { ...(token !== undefined ? { Authorization: `Bearer ${token}` } : {}), ...headers } },
  });
  const client = new Client({ name: 'vlt-test', version: '0.0.0' });
  const errors: Error[] = [];
  client.onerror = (e) => errors.push(e);
  await client.connect(transport);
  return { client, transport, errors };
}

export async function call(s: McpSession, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await s.client.callTool({ name, arguments: args })) as CallToolResult;
}

export function textOf(r: CallToolResult): string {
  const c = r.content[0];
  return c && c.type === 'text' ? c.text : '';
}

/** A running `vlt serve`, as the line it printed on stdout describes it. */
export interface Served {
  child: ChildProcess;
  pid: number;
  url: string;
  port: number;
  token_file: string | null;
  stderr: () => string;
  /** Resolves with the exit code (or the signal's name) once the process is gone. */
  exited: Promise<number | string>;
}

/**
 * Starts `vlt serve` with the given arguments (add `--mcp-port 0`) and waits for its one line of
 * JSON on stdout. Rejects with its stderr if it exits first.
 */
export function startServe(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<Served> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { cwd: ROOT, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`vlt serve did not start in ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const nl = stdout.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      const line = JSON.parse(stdout.slice(0, nl)) as { url: string; token_file: string | null; pid: number };
      resolve({ child, pid: child.pid!, url: line.url, port: Number(new URL(line.url).port), token_file: line.token_file, stderr: () => stderr, exited });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`vlt serve exited (${code}) before it listened:\n${stderr}`));
    });
  });
}

/** Stops a server with SIGTERM and waits for it to exit; SIGKILL after `graceMs`. */
export async function stopServe(s: Served, graceMs = 10_000): Promise<number | string> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return s.exited;
  s.child.kill('SIGTERM');
  const timer = setTimeout(() => s.child.kill('SIGKILL'), graceMs);
  const code = await s.exited;
  clearTimeout(timer);
  return code;
}

export function rssKb(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A Go file large enough to be split into several chunks, with one definition per name. */
const VERBS = ['Parse', 'Render', 'Merge', 'Split', 'Flush', 'Encode', 'Decode', 'Verify'];
const NOUNS = ['Ledger', 'Invoice', 'Packet', 'Header', 'Token'];
/** Writes `go/big.go` into a copy of the language fixture; returns each function's definition line. */
export function writeBigGo(dir: string): Map<string, number> {
  const lines = ['// Package big holds many small functions, so that it is indexed as several chunks.', 'package big', ''];
  const defLine = new Map<string, number>();
  for (const v of VERBS) {
    for (const n of NOUNS) {
      lines.push(`// ${v}${n} applies the ${v.toLowerCase()} step to a ${n.toLowerCase()}.`);
      defLine.set(`${v}${n}`, lines.length + 1);
      lines.push(`func ${v}${n}(in []byte) ([]byte, error) {`);
      for (let i = 0; i < 8; i++) lines.push(`\tin = append(in, byte(${i}))`);
      lines.push('\treturn in, nil', '}', '');
    }
  }
  writeFileSync(path.join(dir, 'go/big.go'), lines.join('\n'));
  return defLine;
}

/** The lowest of a series of readings: the floor of the saw that garbage collection draws. */
export function floor(xs: Array<number | undefined>): number | undefined {
  const v = xs.filter((x): x is number => x !== undefined);
  return v.length ? Math.min(...v) : undefined;
}
