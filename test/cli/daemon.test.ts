/**
 * The workspace daemon as a user meets it: the built `vlt` of a private install (a copy of
 * dist/, so that its build can be changed), run as whole processes with VLT_DAEMON=1. The
 * first command starts a daemon, later ones forward to it; a killed, stale, older or
 * differently configured daemon is replaced; answers are byte-identical to `--no-daemon`;
 * Ctrl-C cancels the command in the daemon; edits reach the index without a sync; the socket
 * is private to its user and never a TCP port.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync, symlinkSync, utimesSync, writeFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pathToFileURL } from 'node:url';
import { createProtocolConnection, StreamMessageReader, StreamMessageWriter, type ProtocolConnection } from 'vscode-languageserver-protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editorDefinitionRequest, editorReferencesRequest, searchRequest, statusRequest, type InitializationOptions, type ServerStatus } from '../../src/protocol/lsp';
import { ROOT, tempDir, type CliResult } from '../helpers/cli';

interface Install {
  dir: string;
  cli: string;
}

/** A private install of the built program: the bundles copied, the large assets linked. */
function install(): Install {
  const dir = tempDir('vlt-install-');
  const dist = path.join(dir, 'dist');
  mkdirSync(dist);
  for (const f of ['cli.js', 'cli-main.js', 'status-fast.js', 'help.json', 'parse-worker.js', 'tokenizer.js']) copyFileSync(path.join(ROOT, 'dist', f), path.join(dist, f));
  for (const d of ['wasm', 'queries']) symlinkSync(path.join(ROOT, 'dist', d), path.join(dist, d));
  symlinkSync(path.join(ROOT, 'prompts'), path.join(dir, 'prompts'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return { dir, cli: path.join(dist, 'cli.js') };
}

function run(inst: Install, args: string[], opts: { cwd: string; env?: Record<string, string>; stdin?: string; onSpawn?: (pid: number) => void }): Promise<CliResult> {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', VLT_DAEMON: '1', ...opts.env };
  const child = spawn(process.execPath, [inst.cli, ...args], { cwd: opts.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  if (child.pid !== undefined) opts.onSpawn?.(child.pid);
  child.stdin.end(opts.stdin ?? '');
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : -1), stdout, stderr });
    });
  });
}

interface DaemonRecordFile {
  pid: number;
  socket: string;
  build: string;
}

const record = (ws: string): DaemonRecordFile | undefined => {
  try {
    return JSON.parse(readFileSync(path.join(ws, '.vlt', 'daemon.json'), 'utf8')) as DaemonRecordFile;
  } catch {
    return undefined;
  }
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the workspace daemon', () => {
  let inst: Install;
  let ws: string;
  const started = new Set<number>();
  const vlt = async (args: string[], opts: { env?: Record<string, string>; stdin?: string; cwd?: string } = {}) => {
    const r = await run(inst, args, { cwd: opts.cwd ?? ws, ...opts });
    const rec = record(ws);
    if (rec) started.add(rec.pid);
    return r;
  };

  beforeAll(async () => {
    inst = install();
    ws = tempDir('vlt-daemon-');
    cpSync(path.join(ROOT, 'test/fixtures/intel/go'), ws, { recursive: true });
    cpSync(path.join(ROOT, 'test/fixtures/intel/ts'), path.join(ws, 'web'), { recursive: true });
  });

  afterAll(async () => {
    for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(ws, { recursive: true, force: true });
    rmSync(inst.dir, { recursive: true, force: true });
  });

  it('starts with the first command and serves the next ones from the same process', async () => {
    const init = await vlt(['coderag', 'init']);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toMatch(/^indexed \d+ files/);
    const first = record(ws);
    expect(first).toBeDefined();
    expect(alive(first!.pid)).toBe(true);
    const search = await vlt(['coderag', 'search', 'Helper', '--json']);
    expect(search.code, search.stderr).toBe(0);
    expect(JSON.parse(search.stdout).length).toBeGreaterThan(0);
    expect(record(ws)?.pid).toBe(first!.pid);
    const status = await vlt(['daemon', 'status', '--json']);
    const s = JSON.parse(status.stdout);
    expect(s.running).toBe(true);
    expect(s.daemon.pid).toBe(first!.pid);
    expect(s.daemon.requests).toBeGreaterThanOrEqual(2);
    // The index status names the daemon as the process keeping the index current.
    const idx = await vlt(['coderag', 'status']);
    expect(idx.stdout).toMatch(/^queue: vlt daemon \(pid \d+\)/m);
  });

  it('answers byte-identically to --no-daemon, in JSON and text, exit codes included', async () => {
    const cases = [
      ['coderag', 'search', 'Helper', '--json'],
      ['coderag', 'search', 'serve requests', '-k', '3'],
      ['coderag', 'def', 'Server.Serve', '--no-lsp', '--json'],
      ['coderag', 'refs', 'util.Helper', '--no-lsp', '--json'],
      ['coderag', 'refs', 'util.Helper', '--no-lsp', '-k', '1'],
      ['coderag', 'refs', 'run.go:2:1', '--no-lsp'],
      ['coderag', 'map', '--tokens', '300'],
      ['coderag', 'search', '--path'],
      ['oracle', '--no-llm', '--json', 'Where is Helper used?'],
    ];
    for (const args of cases) {
      const [viaDaemon, here] = [await vlt(args), await vlt(['--no-daemon', ...args])];
      expect(viaDaemon.code, args.join(' ')).toBe(here.code);
      // Timings differ from run to run, wherever the command runs.
      const strip = (t: string) =>
        t
          .replace(/"(ms|rewrite|analyze|retrieve|expand|rerank|assemble|answer|total)": [\d.e+-]+/g, '"$1": 0')
          .replace(/\(\d+ ms\)/g, '(0 ms)')
          .replace(/, \d+ ms\)/g, ', 0 ms)');
      expect(strip(viaDaemon.stdout), args.join(' ')).toBe(strip(here.stdout));
      expect(viaDaemon.stderr, args.join(' ')).toBe(here.stderr);
    }
  });

  it('writes answers straight to stdout, through pipes and to a reader that leaves early (`| head`)', async () => {
    expect((await vlt(['coderag', 'init'])).code).toBe(0);
    // A reader that is gone before the answer comes (EPIPE): the front exits 0, with nothing on stderr.
    const child = spawn(process.execPath, [inst.cli, 'coderag', 'search', 'serve requests', '-k', '50'], { cwd: ws, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', VLT_DAEMON: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    expect(code, stderr).toBe(0);
    expect(stderr).toBe('');
    // A large answer arrives whole through a pipe.
    const big = await vlt(['coderag', 'search', 'serve requests', '-k', '200', '--json']);
    expect(big.code, big.stderr).toBe(0);
    expect(JSON.parse(big.stdout).length).toBeGreaterThan(0);
  });

  it('runs two commands at once side by side, each with its own answer', async () => {
    const [a, b] = await Promise.all([vlt(['coderag', 'search', 'Helper', '--json']), vlt(['coderag', 'refs', 'util.Helper', '--no-lsp', '--json'])]);
    const [a2, b2] = [await vlt(['--no-daemon', 'coderag', 'search', 'Helper', '--json']), await vlt(['--no-daemon', 'coderag', 'refs', 'util.Helper', '--no-lsp', '--json'])];
    const strip = (t: string) => t.replace(/"ms": [\d.e+-]+/g, '"ms": 0');
    expect(strip(a.stdout)).toBe(strip(a2.stdout));
    expect(strip(b.stdout)).toBe(strip(b2.stdout));
  });

  it('serves `vlt mcp` as a session of the same daemon: one index for the agent and the terminal', async () => {
    const pid = record(ws)!.pid;
    const transport = new StdioClientTransport({ command: process.execPath, args: [inst.cli, 'mcp'], cwd: ws, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', VLT_DAEMON: '1' }, stderr: 'pipe' });
    const client = new Client({ name: 'vlt-daemon-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('search_code');
      const r = (await client.callTool({ name: 'search_code', arguments: { query: 'Helper' } })) as CallToolResult;
      expect(r.isError).toBeFalsy();
      expect(JSON.stringify(r.content)).toContain('util/util.go');
      // The terminal's commands go to the same process meanwhile.
      const status = JSON.parse((await vlt(['daemon', 'status', '--json'])).stdout);
      expect(status.daemon.pid).toBe(pid);
      expect(status.daemon.mcp_sessions).toBe(1);
      const search = await vlt(['coderag', 'search', 'Helper', '--json']);
      expect(search.code, search.stderr).toBe(0);
      expect(record(ws)!.pid).toBe(pid);
    } finally {
      await client.close();
    }
    await until('the MCP session to end in the daemon', async () => JSON.parse((await vlt(['daemon', 'status', '--json'])).stdout).daemon.mcp_sessions === 0);
  });

  it('serves `vlt serve` on loopback from the daemon, until the command is stopped', async () => {
    const pid = record(ws)!.pid;
    const child = spawn(process.execPath, [inst.cli, 'serve', '--mcp-port', '0', '--no-chat'], { cwd: ws, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', VLT_DAEMON: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      child.once('exit', (code) => reject(new Error(`vlt serve exited ${code}: ${stderr}`)));
    });
    const listening = JSON.parse(line) as { url: string; token_file: string; pid: number };
    // The daemon serves it: the same process as the terminal's commands, one index.
    expect(listening.pid).toBe(pid);
    const token = readFileSync(listening.token_file, 'utf8').trim();
    const client = new Client({ name: 'vlt-daemon-http', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(listening.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    const r = (await client.callTool({ name: 'search_code', arguments: { query: 'Helper' } })) as CallToolResult;
    expect(JSON.stringify(r.content)).toContain('util/util.go');
    await client.close();
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // The endpoint went with the command; the daemon stays.
    await until('the endpoint to close', async () => {
      try {
        await fetch(listening.url, { method: 'POST' });
        return false;
      } catch {
        return true;
      }
    });
    expect(alive(pid)).toBe(true);
  });

  /** An editor's `vlt lsp --stdio`, as vscode-languageclient starts it, initialized. */
  const editor = async (init: InitializationOptions, onConn?: (c: ProtocolConnection) => void) => {
    const child = spawn(process.execPath, [inst.cli, 'lsp', '--stdio', `--clientProcessId=${process.pid}`], { cwd: ws, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', VLT_DAEMON: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const conn = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    conn.onRequest('window/workDoneProgress/create', () => null);
    conn.onRequest('client/registerCapability', () => null);
    onConn?.(conn);
    conn.listen();
    const uri = pathToFileURL(ws).toString();
    await conn.sendRequest('initialize', { processId: process.pid, rootUri: uri, workspaceFolders: [{ uri, name: 'ws' }], capabilities: { window: { workDoneProgress: true } }, clientInfo: { name: 'daemon-test-editor' }, initializationOptions: init });
    await conn.sendNotification('initialized', {});
    const ready = async (): Promise<ServerStatus> => {
      let st: ServerStatus | undefined;
      await until('the editor\'s server to be ready', async () => (st = await conn.sendRequest(statusRequest).catch(() => undefined))?.state === 'ready');
      return st!;
    };
    const close = async () => {
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      await conn.sendRequest('shutdown');
      await conn.sendNotification('exit');
      const code = await exited;
      conn.dispose();
      return code;
    };
    return { conn, ready, close, stderr: () => stderr };
  };

  it("serves the editor's `vlt lsp` in the same daemon: one index for the editor, the terminal and agents", async () => {
    const pid = record(ws)!.pid;
    const asked: string[] = [];
    const e = await editor({ editorBridge: true, editorServers: { go: 'Scripted Go' }, fallbackLanguages: [], trusted: true }, (c) => {
      // The scripted editor's Go server: the definition at a position is that position, and it
      // knows one use of Helper, in main.go.
      c.onRequest(editorDefinitionRequest, (p) => ({ ok: true, value: [{ uri: p.uri, range: { start: p.position, end: p.position } }], server: 'Scripted Go' }));
      c.onRequest(editorReferencesRequest, (p) => {
        asked.push(p.uri);
        return { ok: true, value: [{ uri: pathToFileURL(path.join(ws, 'main.go')).toString(), range: { start: { line: 10, character: 12 }, end: { line: 10, character: 18 } } }], server: 'Scripted Go' };
      });
    });
    const st = await e.ready();
    // The daemon serves it, sharing its index.
    expect(st.pid).toBe(pid);
    expect(st.shared).toBe(true);
    expect(st.files).toBeGreaterThan(0);
    const found = await e.conn.sendRequest(searchRequest, { query: 'Helper', k: 5 });
    expect(found.hits.map((h) => h.path)).toContain('util/util.go');
    const status = JSON.parse((await vlt(['daemon', 'status', '--json'])).stdout);
    expect(status.daemon.pid).toBe(pid);
    expect(status.daemon.editors).toBe(1);
    expect(status.daemon.editors_shared).toBe(1);
    // While it is attached, the editor's live language servers answer the terminal's navigation too.
    const refs = await vlt(['coderag', 'refs', 'util/util.go:4:6', '--json']);
    expect(refs.code, refs.stderr).toBe(0);
    expect(asked.length).toBeGreaterThan(0);
    expect(JSON.parse(refs.stdout).locations).toEqual([expect.objectContaining({ path: 'main.go', line: 11, provenance: 'lsp' })]);
    // An `exit` ends the editor's session, not the daemon.
    expect(await e.close()).toBe(0);
    expect(alive(pid)).toBe(true);
    await until('the editor to leave the daemon', async () => JSON.parse((await vlt(['daemon', 'status', '--json'])).stdout).daemon.editors === 0);
    // Gone with it: its language servers. The terminal's answers come from the index again.
    const after = await vlt(['coderag', 'refs', 'util/util.go:4:6', '--no-lsp', '--json']);
    expect(JSON.parse(after.stdout).locations.map((l: { path: string }) => l.path)).toEqual(expect.arrayContaining(['main.go', 'util/more.go']));
  });

  it('gives an editor in Restricted Mode a server of its own; the extension keeps it out of the daemon', async () => {
    const pid = record(ws)!.pid;
    // An editor in Restricted Mode that reaches the daemon anyway: served there, but by a
    // restricted server of its own, not the daemon's.
    const own = await editor({ restricted: true, trusted: false });
    const st = await own.ready();
    expect(st.pid).toBe(pid);
    expect(st.shared).toBe(false);
    expect(st.restricted).toBe(true);
    expect(await own.close()).toBe(0);
    // The extension starts `vlt lsp --no-daemon` in Restricted Mode: its own process, no daemon.
    const child = spawn(process.execPath, [inst.cli, 'lsp', '--no-daemon', '--stdio'], { cwd: ws, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', VLT_DAEMON: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    const conn = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    conn.onRequest('window/workDoneProgress/create', () => null);
    conn.listen();
    const uri = pathToFileURL(ws).toString();
    await conn.sendRequest('initialize', { processId: process.pid, rootUri: uri, capabilities: {}, initializationOptions: { restricted: true } });
    await conn.sendNotification('initialized', {});
    let rst: ServerStatus | undefined;
    await until('the restricted server to be ready', async () => (rst = await conn.sendRequest(statusRequest).catch(() => undefined))?.state === 'ready');
    expect(rst!.pid).toBe(child.pid);
    expect(rst!.shared).toBe(false);
    expect(rst!.restricted).toBe(true);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
    await exited;
    conn.dispose();
    expect(record(ws)!.pid).toBe(pid);
  });

  it('reads stdin through the client, and records memory in the daemon', async () => {
    const push = await vlt(['thread', 'push', 'daemon-notes'], { stdin: 'the socket lives under .vlt\n' });
    expect(push.code, push.stderr).toBe(0);
    expect(push.stdout).toMatch(/^pushed #1 to daemon-notes/);
    const read = await vlt(['--no-daemon', 'thread', 'read', 'daemon-notes', '--json']);
    expect(JSON.parse(read.stdout).entries[0].text).toContain('the socket lives under .vlt');
  });

  it('sees an edit without a sync: the daemon watches the files', async () => {
    writeFileSync(path.join(ws, 'util', 'fresh.go'), 'package util\n\n// Zanzibarize turns a string into the daemon test word.\nfunc Zanzibarize(s string) string { return s }\n');
    await until('the edit to be searchable', async () => {
      const r = await vlt(['coderag', 'search', 'Zanzibarize', '--json']);
      return r.code === 0 && (JSON.parse(r.stdout) as Array<{ path: string }>).some((h) => h.path === 'util/fresh.go');
    });
  });

  it('says another process is building the first index, and watches files once the index opens', async () => {
    const other = tempDir('vlt-daemon-first-');
    cpSync(path.join(ROOT, 'test/fixtures/intel/go'), other, { recursive: true });
    // A live process (this test's) holds the writer lock, and there is no index yet.
    mkdirSync(path.join(other, '.vlt'));
    writeFileSync(path.join(other, '.vlt', 'index.lock'), JSON.stringify({ pid: process.pid, hostname: os.hostname(), startedAt: new Date().toISOString() }));
    try {
      const busy = await vlt(['coderag', 'search', 'Helper'], { cwd: other });
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(new RegExp(`(^|\\n)vlt: another vlt process \\(pid ${process.pid}\\) is building this workspace's first index; run the command again when it has finished\\n$`));
      const here = await vlt(['--no-daemon', 'coderag', 'search', 'Helper'], { cwd: other });
      expect(here.code).toBe(1);
      expect(here.stderr.split('\n').at(-2)).toBe(busy.stderr.split('\n').at(-2));
      rmSync(path.join(other, '.vlt', 'index.lock'));
      const init = await vlt(['coderag', 'init'], { cwd: other });
      expect(init.code, init.stderr).toBe(0);
      // The daemon that could not open the index at first watches the files now.
      writeFileSync(path.join(other, 'util', 'late.go'), 'package util\n\n// Quokkalize is the late daemon test word.\nfunc Quokkalize() {}\n');
      await until('the edit to be searchable', async () => {
        const r = await vlt(['coderag', 'search', 'Quokkalize', '--json'], { cwd: other });
        return r.code === 0 && (JSON.parse(r.stdout) as Array<{ path: string }>).some((h) => h.path === 'util/late.go');
      });
    } finally {
      const rec = record(other);
      if (rec && alive(rec.pid)) process.kill(rec.pid, 'SIGKILL');
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('keeps its socket private: mode 0600, owned by this user, refused to another user, and no TCP port', async () => {
    const rec = record(ws)!;
    const st = statSync(rec.socket);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
    expect(st.uid).toBe(process.getuid!());
    if (process.getuid!() === 0) {
      // As root another user can be tried for real: nobody may not connect.
      const probe = `require('net').connect(${JSON.stringify(rec.socket)}).on('connect',()=>{console.log('connected');process.exit(0)}).on('error',(e)=>{console.log(e.code);process.exit(0)})`;
      const out = await new Promise<string>((resolve) => {
        const c = spawn(process.execPath, ['-e', probe], { uid: 65534, gid: 65534, stdio: ['ignore', 'pipe', 'ignore'] });
        let o = '';
        c.stdout.on('data', (d: Buffer) => (o += d.toString()));
        c.on('close', () => resolve(o.trim()));
      });
      expect(out).toBe('EACCES');
    }
    // The daemon's sockets: none of them is a listening TCP socket.
    const inodes = new Set(
      readdirSync(`/proc/${rec.pid}/fd`)
        .map((fd) => {
          try {
            return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${rec.pid}/fd/${fd}`))?.[1];
          } catch {
            return undefined;
          }
        })
        .filter((x): x is string => x !== undefined),
    );
    expect(inodes.size).toBeGreaterThan(0);
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      if (!existsSync(table)) continue;
      const listening = readFileSync(table, 'utf8')
        .split('\n')
        .slice(1)
        .map((l) => l.trim().split(/\s+/))
        .filter((f) => f[3] === '0A')
        .map((f) => f[9]);
      for (const inode of listening) expect(inodes.has(inode!)).toBe(false);
    }
  });

  it('cancels the command in the daemon on Ctrl-C, and keeps serving', async () => {
    // A command that takes a while: a full re-index of a larger tree.
    cpSync(path.join(ROOT, 'src'), path.join(ws, 'big'), { recursive: true });
    let pid = 0;
    const pending = run(inst, ['coderag', 'sync'], { cwd: ws, onSpawn: (p) => (pid = p) });
    await new Promise((r) => setTimeout(r, 600));
    process.kill(pid, 'SIGINT');
    const r = await pending;
    // 130 from the daemon itself: the command stopped there (the front does not give up on it).
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).not.toMatch(/did not stop/);
    const after = await vlt(['daemon', 'status', '--json']);
    const s = JSON.parse(after.stdout);
    expect(s.running).toBe(true);
    await until('the cancelled command to end in the daemon', async () => JSON.parse((await vlt(['daemon', 'status', '--json'])).stdout).daemon.active === 0);
    const ok = await vlt(['coderag', 'search', 'Helper', '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    rmSync(path.join(ws, 'big'), { recursive: true, force: true });
  });

  it('replaces a daemon killed with -9, leaving a stale socket, and answers correctly', async () => {
    const before = record(ws)!;
    process.kill(before.pid, 'SIGKILL');
    await until('the daemon to die', () => !alive(before.pid));
    expect(existsSync(before.socket)).toBe(true);
    const r = await vlt(['coderag', 'search', 'Helper', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const here = await vlt(['--no-daemon', 'coderag', 'search', 'Helper', '--json']);
    expect(r.stdout).toBe(here.stdout);
    const after = record(ws)!;
    expect(after.pid).not.toBe(before.pid);
    expect(alive(after.pid)).toBe(true);
  });

  it('replaces a daemon of another build, and one started with another environment', async () => {
    const old = record(ws)!;
    // A new build of the program: the bundle changed.
    const bundle = path.join(inst.dir, 'dist', 'cli-main.js');
    const t = new Date(Date.now() + 5_000);
    utimesSync(bundle, t, t);
    const r = await vlt(['coderag', 'search', 'Helper', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const upgraded = record(ws)!;
    expect(upgraded.pid).not.toBe(old.pid);
    expect(upgraded.build).not.toBe(old.build);
    await until('the old daemon to exit', () => !alive(old.pid));
    // Another environment (a key or endpoint setting): its own daemon, not answers made with another's.
    const other = await vlt(['coderag', 'search', 'Helper', '--json'], { env: { VLT_LLM_MODEL: 'another/model' } });
    expect(other.code, other.stderr).toBe(0);
    expect(record(ws)!.pid).not.toBe(upgraded.pid);
    await until('the replaced daemon to exit', () => !alive(upgraded.pid));
  });

  it('stops when asked, and after its idle time', async () => {
    const rec = record(ws)!;
    const stop = await vlt(['daemon', 'stop']);
    expect(stop.stdout).toMatch(new RegExp(`stopped the daemon of .* \\(pid ${rec.pid}\\)`));
    expect(alive(rec.pid)).toBe(false);
    expect(record(ws)).toBeUndefined();
    const status = await vlt(['daemon', 'status', '--json']);
    expect(JSON.parse(status.stdout).running).toBe(false);
    // A short idle time: gone by itself, with its record.
    const r = await vlt(['coderag', 'search', 'Helper'], { env: { VLT_DAEMON_IDLE_MINUTES: '0.1' } });
    expect(r.code, r.stderr).toBe(0);
    const idle = record(ws)!;
    await until('the idle daemon to exit', () => !alive(idle.pid), 20_000);
    expect(record(ws)).toBeUndefined();
  });

  it('starts no daemon for a read in a folder never indexed, nor with VLT_DAEMON=0, nor in CI unless asked', async () => {
    const empty = tempDir('vlt-noindex-');
    const r = await run(inst, ['coderag', 'status'], { cwd: empty });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no index/);
    expect(existsSync(path.join(empty, '.vlt'))).toBe(false);
    const off = await run(inst, ['coderag', 'init'], { cwd: empty, env: { VLT_DAEMON: '0' } });
    expect(off.code, off.stderr).toBe(0);
    expect(record(empty)).toBeUndefined();
    // In CI, no daemon unless asked for with VLT_DAEMON=1.
    const ci = await run(inst, ['coderag', 'sync'], { cwd: empty, env: { VLT_DAEMON: '', CI: 'true' } });
    expect(ci.code, ci.stderr).toBe(0);
    expect(record(empty)).toBeUndefined();
    rmSync(empty, { recursive: true, force: true });
  });

  it('prints --version and --help from the front, as the full CLI does', async () => {
    const v = await vlt(['--version']);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    for (const args of [['--help'], ['coderag', 'search', '--help'], ['help', 'coderag'], ['thread', 'push', '-h']]) {
      const front = await vlt(args);
      // The full CLI, loaded directly: the same text.
      const full = await new Promise<string>((resolve) => {
        const c = spawn(process.execPath, ['-e', `require(${JSON.stringify(path.join(inst.dir, 'dist', 'cli-main.js'))}).runInProcess(${JSON.stringify(args)})`], { cwd: ws, env: { PATH: process.env.PATH ?? '' } });
        let o = '';
        c.stdout.on('data', (d: Buffer) => (o += d.toString()));
        c.on('close', () => resolve(o));
      });
      expect(front.code, args.join(' ')).toBe(0);
      expect(front.stdout, args.join(' ')).toBe(full);
    }
  });
});
