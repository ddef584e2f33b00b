/**
 * End-to-end tests of `vlt serve`: a real MCP SDK client talks Streamable HTTP to the built
 * binary, as an agent would. They pin the tool answers over HTTP, the security checks in front
 * of the SDK (Host, Origin, bearer token, body size, JSON), sessions per the spec, the token
 * file, the bind-address guard, `vlt mcp info`, shutdown, and a fuzz run over one server.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { chmodSync, existsSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VltError } from '../../src/core/errors';
import { silentLogger } from '../../src/core/ports';
import { TOOLS, type SearchCodeHit, type SearchCodeResult } from '../../src/core/tools/definitions';
import { resolveBindHost, startMcpHttpServer } from '../../src/mcp/http';
import { createMcpServer } from '../../src/mcp/server';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { CLI, copyFixture, tempDir, vlt } from '../helpers/cli';
import { alive, call, connectHttp, ensureBuilt, floor, rssKb, startServe, stopServe, textOf, writeBigGo, type HttpSession, type Served } from '../helpers/mcp-client';
import { fuzzer } from '../helpers/mcp-fuzz';

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * One HTTP request with full control over the headers (fetch refuses to set Host) and over how
 * the body is sent: whole, or as `chunks` of a given size streamed without a Content-Length.
 * Resolves on the response, even when the server closes the connection while the body is still
 * being written, which is what a server that refuses a large body should do.
 */
function raw(port: number, opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string; stream?: { chunk: number; total: number } }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: opts.method ?? 'POST', path: opts.path ?? '/mcp', headers: opts.headers ?? {}, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', (e) => {
      if (!answered) reject(e);
    });
    if (opts.stream) {
      const chunk = Buffer.alloc(opts.stream.chunk, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < opts.stream!.total && !answered && !req.destroyed) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (!req.destroyed) req.end();
      };
      pump();
    } else {
      req.end(opts.body);
    }
  });
}

const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });

function rpcError(r: RawResponse): { code: number; message: string } {
  return (JSON.parse(r.body) as { error: { code: number; message: string } }).error;
}

function search(r: CallToolResult): SearchCodeResult {
  expect(r.isError, textOf(r)).toBeFalsy();
  return r.structuredContent as unknown as SearchCodeResult;
}

function infoJson(ws: string): Promise<{ code: number; info: { http: { running: boolean; url: string; pid?: number }; token: string; token_file: string | null; config: Record<string, unknown> }; stderr: string }> {
  return vlt(['mcp', 'info', '--json', '--workspace', ws]).then((r) => ({ code: r.code, info: r.code === 0 ? JSON.parse(r.stdout) : undefined, stderr: r.stderr }));
}

describe('vlt serve: MCP over Streamable HTTP', () => {
  let ws: { dir: string; cleanup: () => void };
  let defLines: Map<string, number>;
  let served: Served;
  let token: string;
  let s: HttpSession;

  beforeAll(async () => {
    ensureBuilt();
    ws = copyFixture('test/fixtures/lang');
    defLines = writeBigGo(ws.dir);
    served = await startServe(['--workspace', ws.dir, '--mcp-port', '0']);
    token = readFileSync(served.token_file!, 'utf8').trim();
    s = await connectHttp(served.url, token);
  }, 120_000);

  afterAll(async () => {
    await s?.client.close();
    if (served) await stopServe(served);
    ws?.cleanup();
  });

  it('prints where it listens as one line of JSON, on the loopback address', () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(served.port).toBeGreaterThan(0);
    expect(served.token_file).toBe(path.join(ws.dir, '.vlt/mcp-token'));
    expect(served.stderr()).toMatch(/mcp: serving \d+ tools for .* at http:\/\/127\.0\.0\.1:\d+\/mcp/);
  });

  it('calls every listed tool and gets real answers: the right file and lines', async () => {
    const { tools } = await s.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['search_code', 'index_status']));
    const checked = new Set<string>();
    for (const t of tools) {
      if (t.name === 'search_code') {
        const r = await call(s, 'search_code', { query: 'VerifyPacket' });
        const top = search(r).hits[0] as SearchCodeHit;
        expect(top.path).toBe('go/big.go');
        const def = defLines.get('VerifyPacket')!;
        expect(top.start_line).toBeLessThanOrEqual(def);
        expect(top.end_line).toBeGreaterThanOrEqual(def);
        const lines = readFileSync(path.join(ws.dir, 'go/big.go'), 'utf8').split('\n');
        expect(lines[def - 1]).toBe('func VerifyPacket(in []byte) ([]byte, error) {');
        // The snippet starts at the definition, and snippet_line says where that is.
        expect(top.snippet_line).toBe(def);
        expect(top.snippet).toBe(lines.slice(def - 1, Math.min(top.end_line, def - 1 + 12)).join('\n'));
        expect(JSON.parse(textOf(r))).toEqual(r.structuredContent);
        // A Python definition, found through the language filter.
        const py = search(await call(s, 'search_code', { query: 'total', language: 'python' }));
        expect(py.hits.length).toBeGreaterThan(0);
        expect(py.hits.every((h) => h.path.endsWith('.py'))).toBe(true);
        checked.add(t.name);
      } else if (t.name === 'index_status') {
        const r = await call(s, 'index_status', {});
        expect(r.isError, textOf(r)).toBeFalsy();
        const st = r.structuredContent as { files: number; workspace: string; languages: Record<string, number> };
        expect(st.workspace).toBe(ws.dir);
        expect(st.files).toBeGreaterThanOrEqual(16);
        expect(st.languages.go).toBe(2);
        checked.add(t.name);
      } else if (t.name === 'ask_oracle') {
        const r = await call(s, 'ask_oracle', { question: 'Where is VerifyPacket defined?' });
        expect(r.isError, textOf(r)).toBeFalsy();
        const ans = r.structuredContent as { files: string[]; citations: Array<{ path: string; line?: number }>; answer: string };
        expect(ans.files[0]).toBe('go/big.go');
        expect(ans.citations[0]!.line).toBeLessThanOrEqual(defLines.get('VerifyPacket')!);
        expect(ans.answer).toContain('func VerifyPacket(in []byte) ([]byte, error) {');
        checked.add(t.name);
      } else if (t.name === 'read_file_range') {
        const def = defLines.get('VerifyPacket')!;
        const r = await call(s, 'read_file_range', { path: 'go/big.go', start_line: def, end_line: def });
        expect(r.isError, textOf(r)).toBeFalsy();
        expect((r.structuredContent as { text: string }).text).toBe(`${def}│ func VerifyPacket(in []byte) ([]byte, error) {`);
        checked.add(t.name);
      } else {
        // A tool added since this test was written: it must at least answer a call with its
        // required arguments filled in, with a result or a readable isError, over HTTP.
        const args: Record<string, unknown> = {};
        const props = (t.inputSchema.properties ?? {}) as Record<string, { type?: string; minimum?: number }>;
        for (const k of t.inputSchema.required ?? []) args[k] = props[k]?.type === 'string' ? 'Circle' : props[k]?.type === 'boolean' ? false : (props[k]?.minimum ?? 1);
        const r = await call(s, t.name, args);
        expect(r.isError ? textOf(r).length : r.content.length, t.name).toBeGreaterThan(0);
      }
    }
    expect([...checked].sort()).toEqual(['ask_oracle', 'index_status', 'read_file_range', 'search_code']);
  });

  it('answers schema-invalid arguments and unknown tools with isError results, and keeps serving', async () => {
    const bad = await call(s, 'search_code', { query: 'x', limit: 1001 });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/limit/);
    const unknown = await call(s, 'no_such_tool', {});
    expect(unknown.isError).toBe(true);
    expect(search(await call(s, 'search_code', { query: 'EncodeLedger' })).hits[0]?.path).toBe('go/big.go');
  });

  it('GET /health answers {ok:true} without a token and says nothing else', async () => {
    const r = await raw(served.port, { method: 'GET', path: '/health', headers: { Host: `127.0.0.1:${served.port}` } });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ ok: true });
  });

  it('refuses requests without the token, or with a wrong one: 401 with WWW-Authenticate', async () => {
    const host = { Host: `127.0.0.1:${served.port}`, ...MCP_HEADERS };
    for (const auth of [undefined, 'Bearer wrong-token', `Bearer ${token}x`, `Basic ${Buffer.from(`u:${token}`).toString('base64')}`, token, `Bearer ${token.slice(0, -1)}`]) {
      const r = await raw(served.port, { headers: { ...host, ...(auth ? { Authorization: auth } : {}) }, body: INIT });
      expect(r.status, String(auth)).toBe(401);
      expect(r.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(rpcError(r).message).toMatch(/Unauthorized/);
    }
    // The SDK client, too, gets 401 without the token: connecting fails.
    await expect(connectHttp(served.url, undefined)).rejects.toThrow(/401|Unauthorized/);
    await expect(connectHttp(served.url, 'not-the-token')).rejects.toThrow(/401|Unauthorized/);
    // The right token, in any case of "Bearer", is let in.
    const ok = await raw(served.port, { headers: { ...host, Authorization: `bearer ${token}` }, body: INIT });
    expect(ok.status).toBe(200);
  });

  it('refuses a foreign Origin (403) even with the token; its own origins pass', async () => {
    const base = { Host: `127.0.0.1:${served.port}`, Authorization: `Bearer ${token}`, ...MCP_HEADERS };
    for (const origin of ['https://evil.example', 'http://127.0.0.1', `http://127.0.0.1:${served.port + 1}`, `https://127.0.0.1:${served.port}`, 'null', `http://localhost.evil.example:${served.port}`]) {
      const r = await raw(served.port, { headers: { ...base, Origin: origin }, body: INIT });
      expect(r.status, origin).toBe(403);
      expect(rpcError(r).message).toMatch(/Origin/);
    }
    for (const origin of [`http://127.0.0.1:${served.port}`, `http://localhost:${served.port}`]) {
      const r = await raw(served.port, { headers: { ...base, Origin: origin }, body: INIT });
      expect(r.status, origin).toBe(200);
    }
    // Through the SDK client as well.
    await expect(connectHttp(served.url, token, { Origin: 'https://evil.example' })).rejects.toThrow(/403|Forbidden/);
  });

  it('refuses a Host header that is not this server (DNS rebinding): 403, before the token is looked at', async () => {
    for (const host of ['evil.example', `evil.example:${served.port}`, `127.0.0.1:${served.port + 1}`, `0.0.0.0:${served.port}`, `localhost.evil.example:${served.port}`]) {
      const r = await raw(served.port, { headers: { Host: host, Authorization: `Bearer ${token}`, ...MCP_HEADERS }, body: INIT });
      expect(r.status, host).toBe(403);
    }
    const r = await raw(served.port, { headers: { Host: `localhost:${served.port}`, Authorization: `Bearer ${token}`, ...MCP_HEADERS }, body: INIT });
    expect(r.status).toBe(200);
    // /health is behind the Host check too: a rebinding page learns nothing, not even that we run.
    expect((await raw(served.port, { method: 'GET', path: '/health', headers: { Host: `evil.example:${served.port}` } })).status).toBe(403);
  });

  it('refuses a body over 4 MiB with 413, declared or streamed, and keeps serving', async () => {
    const headers = { Host: `127.0.0.1:${served.port}`, Authorization: `Bearer ${token}`, ...MCP_HEADERS };
    const declared = await raw(served.port, { headers: { ...headers, 'Content-Length': String(5 * 1024 * 1024) }, stream: { chunk: 64 * 1024, total: 5 * 1024 * 1024 } });
    expect(declared.status).toBe(413);
    expect(rpcError(declared).message).toMatch(/Payload Too Large/);
    const rssBefore = rssKb(served.pid);
    // Chunked, no length: the server counts while reading and stops at the limit, long before
    // the 64 MiB this client would send.
    const streamed = await raw(served.port, { headers, stream: { chunk: 256 * 1024, total: 64 * 1024 * 1024 } });
    expect(streamed.status).toBe(413);
    const rssAfter = rssKb(served.pid);
    if (rssBefore !== undefined && rssAfter !== undefined) expect(rssAfter - rssBefore).toBeLessThan(40 * 1024);
    // A body just under the limit is read (and is simply bad JSON-RPC).
    const under = await raw(served.port, { headers, body: `{"jsonrpc":"2.0","id":1,"method":"ping","pad":"${'x'.repeat(4 * 1024 * 1024 - 100)}"}` });
    expect(under.status).not.toBe(413);
    expect(search(await call(s, 'search_code', { query: 'VerifyPacket' })).hits[0]?.path).toBe('go/big.go');
  });

  it('answers malformed JSON with a JSON-RPC parse error (400) and keeps serving', async () => {
    const headers = { Host: `127.0.0.1:${served.port}`, Authorization: `Bearer ${token}`, ...MCP_HEADERS };
    for (const body of ['{"jsonrpc":"2.0",', 'not json', '', '\u0000\u0001', '['.repeat(100_000)]) {
      const r = await raw(served.port, { headers, body });
      expect(r.status, body.slice(0, 20)).toBe(400);
      expect(rpcError(r).code).toBe(-32700);
    }
    // Well-formed JSON that is not JSON-RPC, inside a session, is refused by the SDK, also 400.
    const sid = s.transport.sessionId!;
    const notRpc = await raw(served.port, { headers: { ...headers, 'Mcp-Session-Id': sid }, body: '{"hello":"world"}' });
    expect(notRpc.status).toBe(400);
    expect(alive(served.pid)).toBe(true);
    expect(search(await call(s, 'search_code', { query: 'VerifyPacket' })).hits[0]?.path).toBe('go/big.go');
  });

  it('keeps sessions per the spec: a session id, 404 for an unknown one, DELETE ends one', async () => {
    const headers = { Host: `127.0.0.1:${served.port}`, Authorization: `Bearer ${token}`, ...MCP_HEADERS };
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    // No session and no initialize: 400.
    expect((await raw(served.port, { headers, body: list })).status).toBe(400);
    // An unknown session: 404, code -32001, so that the client starts a new one.
    const unknown = await raw(served.port, { headers: { ...headers, 'Mcp-Session-Id': '00000000-0000-4000-8000-000000000000' }, body: list });
    expect(unknown.status).toBe(404);
    expect(rpcError(unknown).code).toBe(-32001);
    for (const method of ['GET', 'DELETE']) {
      expect((await raw(served.port, { method, headers: { ...headers, 'Mcp-Session-Id': 'nope' } })).status, method).toBe(404);
    }
    expect((await raw(served.port, { method: 'PUT', headers, body: list })).status).toBe(405);

    // A second client gets a session of its own; ending it leaves the first one working.
    const other = await connectHttp(served.url, token);
    const sid = other.transport.sessionId!;
    expect(sid).toMatch(/^[0-9a-f-]{36}$/);
    expect(sid).not.toBe(s.transport.sessionId);
    expect((await call(other, 'index_status', {})).isError).toBeFalsy();
    await other.transport.terminateSession();
    const after = await raw(served.port, { headers: { ...headers, 'Mcp-Session-Id': sid }, body: list });
    expect(after.status).toBe(404);
    await other.client.close();
    expect(search(await call(s, 'search_code', { query: 'VerifyPacket' })).hits[0]?.path).toBe('go/big.go');
  });

  it('stores the token owner-only (0600) in .vlt/, outside version control, and vlt mcp info prints it with configs', async () => {
    const file = path.join(ws.dir, '.vlt/mcp-token');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(readFileSync(path.join(ws.dir, '.vlt/.gitignore'), 'utf8')).toMatch(/^\*$/m);
    const { code, info } = await infoJson(ws.dir);
    expect(code).toBe(0);
    expect(info.token).toBe(token);
    expect(info.token_file).toBe(file);
    expect(info.http).toMatchObject({ running: true, url: served.url, pid: served.pid });
    expect(info.config.claude_code_http).toBe(`claude mcp add --transport http vlt ${served.url} --header "Authorization: Bearer ${token}"`);
    // The stdio command is this very program (Node and the CLI script, absolute): it works from a checkout.
    expect(info.config.claude_code_stdio).toBe(`claude mcp add vlt -- ${process.execPath} ${CLI} mcp --workspace ${ws.dir}`);
    expect(info.config.vscode_http).toMatchObject({ servers: { vlt: { type: 'http', url: served.url } } });
    expect(info.config.vscode_stdio).toMatchObject({ servers: { vlt: { type: 'stdio', command: process.execPath, args: [CLI, 'mcp', '--workspace', '${workspaceFolder}'] } } });
    expect(info.config.cursor_http).toMatchObject({ mcpServers: { vlt: { url: served.url, headers: { Authorization: `Bearer ${token}` } } } });
    const text = await vlt(['mcp', 'info'], { cwd: ws.dir });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(token);
    expect(text.stdout).toContain(`claude mcp add vlt -- ${process.execPath} ${CLI} mcp --workspace .`);
    expect(text.stdout).toContain('.vscode/mcp.json');
  });

  it('answers 300 fuzzed calls with results or isError, stays up and does not grow', async () => {
    const warm = fuzzer(7);
    for (let i = 0; i < 150; i++) {
      const { name, args } = warm();
      await call(s, name, args);
    }
    const next = fuzzer(Number(process.env.VLT_FUZZ_SEED ?? 20_240_602));
    const N = 300;
    const rss: Array<number | undefined> = [];
    const failures: string[] = [];
    let ok = 0;
    let errors = 0;
    let i = 0;
    const worker = async () => {
      while (i < N) {
        const { name, args } = next();
        if (i % 5 === 0) rss.push(rssKb(served.pid));
        i++;
        try {
          const r = await call(s, name, args);
          if (r.isError) {
            errors++;
            if (!textOf(r) || textOf(r).length > 2000) failures.push(`${name}: unreadable error`);
          } else ok++;
        } catch (e) {
          failures.push(`${name} ${JSON.stringify(args).slice(0, 200)} threw ${(e as Error).message.slice(0, 200)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    rss.push(rssKb(served.pid));
    expect(failures).toEqual([]);
    expect(ok + errors).toBe(N);
    expect(ok).toBeGreaterThan(20);
    expect(errors).toBeGreaterThan(20);
    expect(alive(served.pid)).toBe(true);
    const before = floor(rss.slice(0, 15));
    const after = floor(rss.slice(-15));
    if (before !== undefined && after !== undefined) expect(after - before, `RSS ${before} → ${after} kB`).toBeLessThan(50 * 1024);
    expect(s.errors).toEqual([]);
  }, 120_000);
});

describe('vlt serve: token, binding and lifecycle', () => {
  let ws: { dir: string; cleanup: () => void };

  beforeAll(async () => {
    ensureBuilt();
    ws = copyFixture('test/fixtures/lang');
    // Indexed once up front: each server below would otherwise start by building the index.
    expect((await vlt(['coderag', 'init', ws.dir])).code).toBe(0);
  }, 120_000);

  afterAll(() => ws?.cleanup());

  it('refuses a non-loopback --host without --allow-remote: exit 2, a clear message, nothing written', async () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.20', 'example.com']) {
      const r = await vlt(['serve', '--workspace', ws.dir, '--host', host, '--mcp-port', '0'], { timeoutMs: 20_000 });
      expect(r.code, host).toBe(2);
      expect(r.stderr).toMatch(/--allow-remote|loopback/);
      expect(r.stdout).toBe('');
    }
    expect(existsSync(path.join(ws.dir, '.vlt/mcp-token'))).toBe(false);
    const badPort = await vlt(['serve', '--workspace', ws.dir, '--mcp-port', '70000']);
    expect(badPort.code).toBe(2);
  });

  it('keeps the token across restarts, replaces one others can read, and lets VLT_MCP_TOKEN override it', async () => {
    const first = await startServe(['--workspace', ws.dir, '--mcp-port', '0', '--host', 'localhost']);
    const file = first.token_file!;
    const token = readFileSync(file, 'utf8').trim();
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:/);
    const firstExit = await stopServe(first);
    expect(firstExit, first.stderr()).toBe(0);
    // A clean stop removes the record of the running server.
    expect(existsSync(path.join(ws.dir, '.vlt/mcp-server.json'))).toBe(false);

    const restarted = await startServe(['--workspace', ws.dir, '--mcp-port', '0']);
    expect(readFileSync(file, 'utf8').trim()).toBe(token);
    await stopServe(restarted);

    // vlt makes the file 0600: one others can read is a copy or a checkout, or has leaked.
    chmodSync(file, 0o644);
    const second = await startServe(['--workspace', ws.dir, '--mcp-port', '0']);
    const replaced = readFileSync(file, 'utf8').trim();
    expect(replaced).not.toBe(token);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(second.stderr()).toMatch(/readable by others .* replaced by a new one/);
    await expect(connectHttp(second.url, token)).rejects.toThrow(/401|Unauthorized/);
    const c = await connectHttp(second.url, replaced);
    expect((await call(c, 'index_status', {})).isError).toBeFalsy();
    await c.client.close();
    await stopServe(second);

    const envToken = 'env-token-0123456789-abcdefghij';
    const third = await startServe(['--workspace', ws.dir, '--mcp-port', '0'], { VLT_MCP_TOKEN: envToken });
    expect(third.token_file).toBeNull();
    await expect(connectHttp(third.url, token)).rejects.toThrow(/401|Unauthorized/);
    const e = await connectHttp(third.url, envToken);
    expect((await call(e, 'index_status', {})).isError).toBeFalsy();
    await e.client.close();
    await stopServe(third);
    const weak = await vlt(['serve', '--workspace', ws.dir, '--mcp-port', '0'], { env: { VLT_MCP_TOKEN: 'short' }, timeoutMs: 20_000 });
    expect(weak.code).toBe(2);
    expect(weak.stderr).toMatch(/VLT_MCP_TOKEN must be at least/);
  }, 120_000);

  it('mcp info creates the token when missing and reports a server that is gone as not running', async () => {
    const other = tempDir();
    try {
      const { code, info } = await infoJson(other);
      expect(code).toBe(0);
      expect(info.http.running).toBe(false);
      expect(info.http.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      expect(statSync(path.join(other, '.vlt/mcp-token')).mode & 0o777).toBe(0o600);
      // A record left by a server killed without cleaning up: its pid is above Linux's pid_max.
      writeFileSync(path.join(other, '.vlt/mcp-server.json'), JSON.stringify({ pid: 2 ** 22 + 17, url: 'http://127.0.0.1:1/mcp', host: '127.0.0.1', port: 1, started: '' }));
      const again = await infoJson(other);
      expect(again.info.http.running).toBe(false);
      expect(again.info.token).toBe(info.token);
      const missing = await vlt(['mcp', 'info', '--workspace', path.join(other, 'nope')]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/does not exist/);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('refuses a token file that is a link, rather than trusting it', async () => {
    const other = tempDir();
    try {
      const first = await infoJson(other);
      const file = path.join(other, '.vlt/mcp-token');
      rmSync(file);
      symlinkSync('/etc/hostname', file);
      const r = await vlt(['serve', '--workspace', other, '--mcp-port', '0'], { timeoutMs: 20_000 });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/not a regular file/);
      expect(first.code).toBe(0);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('with --allow-remote listens beyond loopback and warns loudly; a port in use is a clear error', async () => {
    const remote = await startServe(['--workspace', ws.dir, '--mcp-port', '0', '--host', '0.0.0.0', '--allow-remote']);
    try {
      expect(remote.stderr()).toMatch(/WARNING: listening on 0\.0\.0\.0/);
      const token = readFileSync(remote.token_file!, 'utf8').trim();
      const c = await connectHttp(`http://127.0.0.1:${remote.port}/mcp`, token);
      expect((await call(c, 'index_status', {})).isError).toBeFalsy();
      await c.client.close();
      // Still no foreign Host names.
      expect((await raw(remote.port, { headers: { Host: `evil.example:${remote.port}`, Authorization: `Bearer ${token}`, ...MCP_HEADERS }, body: INIT })).status).toBe(403);
      const clash = await vlt(['serve', '--workspace', ws.dir, '--mcp-port', String(remote.port), '--host', '0.0.0.0', '--allow-remote'], { timeoutMs: 20_000 });
      expect(clash.code).toBe(2);
      expect(clash.stderr).toMatch(/in use/);
    } finally {
      await stopServe(remote);
    }
  }, 60_000);

  it('stops cleanly on SIGTERM with a client connected: exit 0, record removed, quickly', async () => {
    const sv = await startServe(['--workspace', ws.dir, '--mcp-port', '0']);
    const token = readFileSync(sv.token_file!, 'utf8').trim();
    const c = await connectHttp(sv.url, token);
    expect((await call(c, 'search_code', { query: 'Circle' })).isError).toBeFalsy();
    expect(existsSync(path.join(ws.dir, '.vlt/mcp-server.json'))).toBe(true);
    const t0 = performance.now();
    expect(await stopServe(sv)).toBe(0);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(existsSync(path.join(ws.dir, '.vlt/mcp-server.json'))).toBe(false);
    expect(existsSync(path.join(ws.dir, '.vlt/index.lock'))).toBe(false);
    await c.client.close();
  }, 60_000);
});

describe('the HTTP transport in process: binding rules, idle expiry and the session cap', () => {
  it('resolves --host to a loopback literal, and refuses anything else without allowRemote', () => {
    expect(resolveBindHost('localhost', false)).toBe('127.0.0.1');
    expect(resolveBindHost('127.0.0.1', false)).toBe('127.0.0.1');
    expect(resolveBindHost('127.0.0.2', false)).toBe('127.0.0.2');
    expect(resolveBindHost('[::1]', false)).toBe('::1');
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.20', 'example.com', '::ffff:10.0.0.1', '']) {
      expect(() => resolveBindHost(h, false), h).toThrow(VltError);
    }
    expect(resolveBindHost('0.0.0.0', true)).toBe('0.0.0.0');
  });

  it('expires idle sessions (404 afterwards) and makes room past the cap by closing the least recently used one', async () => {
    const ctx = { fs: nodeWorkspaceFs, logger: silentLogger, getEngine: () => Promise.reject(new VltError('INDEX_MISSING', 'no index in this test')) };
    const server = await startMcpHttpServer({
      host: '127.0.0.1',
      port: 0,
      token: 't'.repeat(43),
      allowRemote: false,
      newSession: () => createMcpServer(TOOLS, ctx, { name: 'test', version: '0' }),
      logger: silentLogger,
      limits: { sessionIdleMs: 400, maxSessions: 2 },
    });
    try {
      const headers = { Host: `127.0.0.1:${server.port}`, Authorization: `Bearer ${'t'.repeat(43)}`, ...MCP_HEADERS };
      const open = async () => {
        const r = await raw(server.port, { headers, body: INIT });
        expect(r.status).toBe(200);
        return r.headers['mcp-session-id'] as string;
      };
      const ping = (sid: string) => raw(server.port, { headers: { ...headers, 'Mcp-Session-Id': sid }, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }) }).then((r) => r.status);
      const a = await open();
      const b = await open();
      expect(server.sessionCount()).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await ping(b)).toBe(200);
      // A third session: a, the least recently used, makes room.
      const c = await open();
      expect(server.sessionCount()).toBe(2);
      expect(await ping(a)).toBe(404);
      expect(await ping(b)).toBe(200);
      expect(await ping(c)).toBe(200);
      // Idle past the limit (the sweep runs every second at most): both go.
      await new Promise((resolve) => setTimeout(resolve, 2200));
      expect(server.sessionCount()).toBe(0);
      expect(await ping(b)).toBe(404);
      expect(await ping(c)).toBe(404);
    } finally {
      await server.close();
    }
  });
});
