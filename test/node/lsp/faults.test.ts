// The LSP client against scripted fake servers (test/fixtures/lsp/fake-lsp.mjs): every call
// resolves within its timeout with the right failure, crashed servers restart, a missing
// binary is reported fast, and nothing the servers started outlives dispose().
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { build } from 'esbuild';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LspAnswer } from '../../../src/core/intel/lsp';
import { silentLogger } from '../../../src/core/ports';
import { createLanguageServers, type LanguageServersOptions, type ServerSpec } from '../../../src/node/lsp';
import { FramingWatchdog } from '../../../src/node/lsp/process';

const FAKE = path.resolve(__dirname, '../../fixtures/lsp/fake-lsp.mjs');
/** Scheduling slack on top of a call's timeout (2-core CI machines under load). */
const SLACK_MS = 400;
/**
 * "At once" means without waiting for the call's 5 s timeout; how fast exactly is the bench's
 * business (a loaded 2-core machine stalls a process for hundreds of milliseconds).
 */
const WITHOUT_WAITING = 2_500;

let dir: string;
let servers: ReturnType<typeof createLanguageServers> | undefined;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'vlt-lsp-'));
  writeFileSync(path.join(dir, 'lib.ts'), '// lib\nexport function greet(): string {\n  return "hi";\n}\n');
  writeFileSync(path.join(dir, 'main.ts'), 'import { greet } from "./lib";\n\n\nexport function main() {\n  greet();\n}\n');
});

afterEach(async () => {
  await servers?.dispose();
  servers = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function fake(mode: string, opts: { child?: boolean; env?: Record<string, string> } = {}): ServerSpec {
  return {
    name: 'fake-lsp',
    languages: ['typescript', 'tsx', 'javascript'],
    command: process.execPath,
    args: [FAKE, mode, ...(opts.child ? ['--child'] : [])],
    env: { FAKE_LSP_PIDS: path.join(dir, 'pids'), FAKE_LSP_LOG: path.join(dir, 'log'), FAKE_LSP_STATE: path.join(dir, 'state'), ...opts.env },
    settings: { fake: { section: { answer: 42 } } },
  };
}

function start(spec: ServerSpec, extra: Partial<LanguageServersOptions> = {}): NonNullable<typeof servers> {
  servers = createLanguageServers({
    root: dir,
    logger: silentLogger,
    servers: [spec],
    readyTimeoutMs: 5_000,
    client: { settleMs: 50, diagnosticsSettleMs: 50, graceMs: 300, restartLimit: { crashes: 3, windowMs: 60_000 } },
    ...extra,
  });
  return servers;
}

/** Runs a call and checks it kept its time bound. */
async function timed<T>(timeoutMs: number, call: (opts: { timeoutMs: number }) => Promise<LspAnswer<T>>): Promise<LspAnswer<T> & { wall: number }> {
  const t0 = Date.now();
  const answer = await call({ timeoutMs });
  const wall = Date.now() - t0;
  expect(wall).toBeLessThanOrEqual(timeoutMs + SLACK_MS);
  return { ...answer, wall };
}

const POS = { path: 'main.ts', line: 5, col: 3 };

function pidsStarted(): number[] {
  const file = path.join(dir, 'pids');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number) : [];
}

function methodsSeen(): string[] {
  const file = path.join(dir, 'log');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  expect(condition()).toBe(true);
}

/** Alive and not a zombie (an orphan's zombie lingers where init does not reap). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return true;
  }
}

describe('a working server', () => {
  it('answers with engine positions: 1-based, workspace-relative, deduplicated', async () => {
    const lsp = start(fake('ok'));
    const def = await timed(10_000, (o) => lsp.definition(POS, o));
    expect(def).toMatchObject({ ok: true, server: 'fake-lsp' });
    // The fake answers a LocationLink and the same place as a Location: one result, at the
    // link's selection range (LSP 1:16-1:21 → engine 2:17-2:22).
    expect(def.ok && def.value).toEqual([{ path: 'lib.ts', startLine: 2, startCol: 17, endLine: 2, endCol: 22 }]);

    const refs = await timed(5_000, (o) => lsp.references(POS, { ...o, includeDeclaration: true }));
    expect(refs.ok && refs.value.map((r) => `${r.path}:${r.startLine}:${r.startCol}`)).toEqual([
      '/opt/elsewhere/outside.ts:1:1',
      'lib.ts:2:17',
      'main.ts:5:3',
    ]);

    const hover = await timed(5_000, (o) => lsp.hover(POS, o));
    expect(hover.ok && hover.value).toBe('```ts\nfunction greet(): string\n```');
    expect(lsp.status()).toEqual([expect.objectContaining({ name: 'fake-lsp', state: 'ready', restarts: 0 })]);
    // The server asked for its configuration and got our settings section back.
    expect(methodsSeen()).toContain('response 1000');
  });

  it('reports pushed diagnostics, and fresh ones after the file changes on disk', async () => {
    const lsp = start(fake('ok'));
    const first = await timed(10_000, (o) => lsp.diagnostics('main.ts', o));
    expect(first.ok && first.value).toEqual([
      { range: { path: 'main.ts', startLine: 2, startCol: 7, endLine: 2, endCol: 12 }, severity: 'error', message: 'fake error v1', code: '1234', source: 'fake' },
    ]);
    const again = await timed(5_000, (o) => lsp.diagnostics('main.ts', o));
    expect(again.ok && again.value[0]?.message).toBe('fake error v1');
    expect(methodsSeen().filter((m) => m === 'textDocument/didOpen')).toHaveLength(1);

    writeFileSync(path.join(dir, 'main.ts'), 'export const changed = 1;\n');
    utimesSync(path.join(dir, 'main.ts'), new Date(), new Date(Date.now() + 5_000));
    const changed = await timed(5_000, (o) => lsp.diagnostics('main.ts', o));
    expect(changed.ok && changed.value[0]?.message).toBe('fake error v2');
    expect(methodsSeen()).toContain('textDocument/didChange');
  });

  it('answers "timeout" when no diagnostics are published in time', async () => {
    const lsp = start(fake('ok', { env: { FAKE_LSP_NO_DIAGNOSTICS: '1' } }));
    const a = await timed(1_000, (o) => lsp.diagnostics('main.ts', o));
    expect(a).toMatchObject({ ok: false, failure: 'timeout', reason: expect.stringMatching(/did not answer diagnostics within/) });
    expect(a.wall).toBeGreaterThanOrEqual(950);
  });

  it('closes the least recently used document beyond the open-file limit', async () => {
    for (const name of ['a.ts', 'b.ts', 'c.ts']) writeFileSync(path.join(dir, name), 'export {};\n');
    const lsp = start(fake('ok'), { client: { settleMs: 50, maxOpenFiles: 2 } });
    for (const name of ['a.ts', 'b.ts', 'c.ts']) expect((await lsp.hover({ path: name, line: 1, col: 1 }, { timeoutMs: 10_000 })).ok).toBe(true);
    expect(methodsSeen().filter((m) => m === 'textDocument/didClose')).toHaveLength(1);
  });
});

describe('bad input', () => {
  it('answers a clear failure without starting anything', async () => {
    const lsp = start(fake('ok'));
    const zero = await lsp.definition({ path: 'main.ts', line: 0, col: 1 }, { timeoutMs: 1_000 });
    expect(zero).toMatchObject({ ok: false, failure: 'error', reason: expect.stringMatching(/invalid position/) });
    const unknown = await lsp.definition({ path: 'notes.txt', line: 1, col: 1 }, { timeoutMs: 1_000 });
    expect(unknown).toMatchObject({ ok: false, failure: 'unavailable', reason: expect.stringMatching(/no language/) });
    const python = await lsp.definition({ path: 'x.py', line: 1, col: 1 }, { timeoutMs: 1_000 });
    expect(python).toMatchObject({ ok: false, failure: 'unavailable', reason: expect.stringMatching(/no language server is known for python/) });
    expect(pidsStarted()).toEqual([]);
    const missing = await timed(5_000, (o) => lsp.definition({ path: 'gone.ts', line: 1, col: 1 }, o));
    expect(missing).toMatchObject({ ok: false, failure: 'error', reason: expect.stringMatching(/cannot read .*gone\.ts: ENOENT/) });
  });

  it('answers "timeout" at once for an aborted signal', async () => {
    const lsp = start(fake('ok'));
    const controller = new AbortController();
    controller.abort();
    const a = await timed(5_000, (o) => lsp.definition(POS, { ...o, signal: controller.signal }));
    expect(a).toMatchObject({ ok: false, failure: 'timeout', reason: 'cancelled by the caller' });
    expect(a.wall).toBeLessThan(WITHOUT_WAITING);
  });
});

describe('faulty servers', () => {
  it('a missing binary is unavailable, fast, and never retried', async () => {
    const lsp = start({ name: 'ghost', languages: ['typescript'], command: '/nonexistent/ghost-lsp', args: [] });
    const a = await timed(5_000, (o) => lsp.definition(POS, o));
    expect(a).toMatchObject({ ok: false, failure: 'unavailable', reason: expect.stringMatching(/does not exist/) });
    expect(a.wall).toBeLessThan(WITHOUT_WAITING);
    expect(lsp.serverFor('typescript')).toMatchObject({ state: 'not-installed' });
  });

  it('a command not on PATH is unavailable after one spawn attempt', async () => {
    const lsp = start({ name: 'ghost', languages: ['typescript'], command: 'vlt-no-such-language-server', args: [] });
    const a = await timed(5_000, (o) => lsp.definition(POS, o));
    expect(a).toMatchObject({ ok: false, failure: 'unavailable', reason: expect.stringMatching(/ENOENT/) });
    const b = await timed(5_000, (o) => lsp.hover(POS, o));
    expect(b).toMatchObject({ ok: false, failure: 'unavailable' });
    expect(b.wall).toBeLessThan(WITHOUT_WAITING);
    expect(lsp.status()[0]).toMatchObject({ state: 'not-installed', detail: expect.stringMatching(/ENOENT/) });
  });

  it('a server that crashes at start is unavailable, with its exit code and stderr, until the restart budget is spent', async () => {
    const lsp = start(fake('crash-at-start'));
    const a = await timed(5_000, (o) => lsp.definition(POS, o));
    expect(a).toMatchObject({ ok: false, failure: 'unavailable', reason: expect.stringMatching(/failed to start: exited with code 3.*configured to crash at start/) });
    await lsp.definition(POS, { timeoutMs: 5_000 });
    await lsp.definition(POS, { timeoutMs: 5_000 });
    expect(pidsStarted()).toHaveLength(3);
    const d = await timed(5_000, (o) => lsp.definition(POS, o));
    expect(d).toMatchObject({ ok: false, failure: 'unavailable', reason: expect.stringMatching(/crashed 3 times within 60 s/) });
    expect(d.wall).toBeLessThan(WITHOUT_WAITING);
    expect(pidsStarted()).toHaveLength(3);
    expect(lsp.status()[0]).toMatchObject({ state: 'crashed', restarts: 2, detail: expect.stringMatching(/^gave up/) });
  });

  it('a server that never answers initialize is not ready within the timeout, and is killed at the readiness bound', async () => {
    const lsp = start(fake('hang-init'), { readyTimeoutMs: 1_000 });
    const a = await timed(500, (o) => lsp.definition(POS, o));
    expect(a).toMatchObject({ ok: false, failure: 'not-ready', reason: expect.stringMatching(/initialize not answered/) });
    await until(() => pidsStarted().length === 1);
    const [pid] = pidsStarted();
    await until(() => lsp.status()[0]?.state === 'crashed', 3_000);
    expect(lsp.status()[0]).toMatchObject({ detail: expect.stringMatching(/did not answer initialize within 1000 ms/) });
    await until(() => !isAlive(pid!), 2_000);
  });

  it('a server that never answers a request times out, and the request is cancelled', async () => {
    const lsp = start(fake('hang-requests'));
    const a = await timed(1_000, (o) => lsp.references(POS, { ...o, includeDeclaration: false }));
    expect(a).toMatchObject({ ok: false, failure: 'timeout', reason: expect.stringMatching(/did not answer textDocument\/references within/) });
    await new Promise((r) => setTimeout(r, 200));
    expect(methodsSeen()).toContain('$/cancelRequest');
  });

  it('garbage on stdout at start is an error answer, not an exception or a hang', async () => {
    const lsp = start(fake('garbage'));
    const a = await timed(5_000, (o) => lsp.definition(POS, o));
    expect(a).toMatchObject({ ok: false, failure: 'error', reason: expect.stringMatching(/non-LSP output on stdout.*Hello! I am not a language server/) });
    expect(a.wall).toBeLessThan(3_000);
  });

  it('garbage on stdout in answer to a request is an error answer', async () => {
    const lsp = start(fake('garbage-on-request'));
    const a = await timed(5_000, (o) => lsp.definition(POS, o));
    expect(a).toMatchObject({ ok: false, failure: 'error', reason: expect.stringMatching(/non-LSP output.*panic/) });
  });

  it('an answer of the wrong shape is an error answer', async () => {
    const lsp = start(fake('bad-result'));
    const a = await timed(5_000, (o) => lsp.definition(POS, o));
    expect(a).toMatchObject({ ok: false, failure: 'error', reason: expect.stringMatching(/invalid definition result/) });
    // The server itself is fine: the next question is answered.
    expect((await lsp.hover(POS, { timeoutMs: 5_000 })).ok).toBe(true);
  });

  it('a server that crashes during a request answers "crashed", and gives up after the restart budget', async () => {
    const lsp = start(fake('crash-mid-request'));
    const a = await timed(5_000, (o) => lsp.definition(POS, o));
    expect(a).toMatchObject({ ok: false, failure: 'crashed', reason: expect.stringMatching(/exited with code 1.*crashing on textDocument\/definition/) });
    expect((await lsp.definition(POS, { timeoutMs: 5_000 })).ok).toBe(false);
    expect((await lsp.definition(POS, { timeoutMs: 5_000 })).ok).toBe(false);
    const d = await timed(5_000, (o) => lsp.definition(POS, o));
    expect(d).toMatchObject({ ok: false, failure: 'unavailable', reason: expect.stringMatching(/crashed 3 times/) });
    expect(pidsStarted()).toHaveLength(3);
  });

  it('a crashed server is restarted by the next call', async () => {
    const lsp = start(fake('crash-once'));
    const a = await timed(5_000, (o) => lsp.definition(POS, o));
    expect(a).toMatchObject({ ok: false, failure: 'crashed' });
    expect(lsp.status()[0]?.state).toBe('crashed');
    const b = await timed(10_000, (o) => lsp.definition(POS, o));
    expect(b).toMatchObject({ ok: true });
    expect(lsp.status()[0]).toMatchObject({ state: 'ready', restarts: 1 });
    const [first, second] = pidsStarted();
    expect(first && isAlive(first)).toBe(false);
    expect(second && isAlive(second)).toBe(true);
  });

  it('a server still reporting progress is "not ready" until its progress ends', async () => {
    const lsp = start(fake('slow-ready', { env: { FAKE_LSP_READY_MS: '1500' } }));
    const early = await timed(500, (o) => lsp.definition(POS, o));
    expect(early).toMatchObject({ ok: false, failure: 'not-ready', reason: expect.stringMatching(/busy \(Indexing fake project\)/) });
    // The request was held back, not sent: the fake would have answered it at once.
    expect(methodsSeen()).not.toContain('textDocument/definition');
    const later = await timed(5_000, (o) => lsp.definition(POS, o));
    expect(later).toMatchObject({ ok: true });
  });

  it('a request held by progress that began after the settle window is "not ready", not a timeout', async () => {
    const lsp = start(fake('late-load', { env: { FAKE_LSP_READY_MS: '2000' } }));
    const early = await timed(800, (o) => lsp.definition(POS, o));
    expect(early).toMatchObject({ ok: false, failure: 'not-ready', reason: expect.stringMatching(/busy \(Loading project\): no answer to textDocument\/definition/) });
    const later = await timed(5_000, (o) => lsp.definition(POS, o));
    expect(later).toMatchObject({ ok: true });
  });

  it('progress that never ends stops holding calls back at the readiness bound', async () => {
    const lsp = start(fake('slow-ready', { env: { FAKE_LSP_READY_MS: '60000' } }), { readyTimeoutMs: 1_000 });
    const a = await timed(5_000, (o) => lsp.definition(POS, o));
    expect(a).toMatchObject({ ok: true });
    expect(a.wall).toBeGreaterThanOrEqual(900);
  });
});

describe('dispose', () => {
  it('stops the server and what it spawned', async () => {
    const lsp = start(fake('ok', { child: true }));
    expect((await lsp.definition(POS, { timeoutMs: 10_000 })).ok).toBe(true);
    const pids = pidsStarted();
    expect(pids).toHaveLength(2);
    expect(pids.every(isAlive)).toBe(true);
    expect(lsp.pids()).toEqual([pids[0]]);
    await lsp.dispose();
    expect(pids.filter(isAlive)).toEqual([]);
    expect(methodsSeen()).toEqual(expect.arrayContaining(['shutdown', 'exit']));
    // Safe to call twice; calls after dispose answer at once.
    await lsp.dispose();
    expect(await lsp.definition(POS, { timeoutMs: 1_000 })).toMatchObject({ ok: false, failure: 'unavailable' });
  });

  it('kills a server that ignores shutdown, exit and SIGTERM', async () => {
    const lsp = start(fake('ignore-term', { child: true }));
    expect((await lsp.definition(POS, { timeoutMs: 10_000 })).ok).toBe(true);
    const pids = pidsStarted();
    const t0 = Date.now();
    await lsp.dispose();
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(pids.filter(isAlive)).toEqual([]);
  });

  it('kills a server that hangs before initialize', async () => {
    const lsp = start(fake('hang-init', { child: true }));
    await lsp.definition(POS, { timeoutMs: 300 });
    await until(() => pidsStarted().length === 2);
    const pids = pidsStarted();
    await lsp.dispose();
    expect(pids.filter(isAlive)).toEqual([]);
  });
});

describe('the host process', () => {
  // A host that ends without dispose(): by process.exit(), or by running out of work (the
  // servers must not keep it alive). Either way nothing it started may survive it.
  it.each(['exit', 'drain'])('ends with no server left behind (%s)', async (mode) => {
    const script = path.join(dir, 'host.ts');
    writeFileSync(
      script,
      `import { createLanguageServers } from ${JSON.stringify(path.resolve(__dirname, '../../../src/node/lsp'))};
const [mode, fake, root] = process.argv.slice(2);
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const spec = { name: 'fake', languages: ['typescript'], command: process.execPath, args: [fake, 'ok', '--child'], env: { FAKE_LSP_PIDS: root + '/pids' } };
const lsp = createLanguageServers({ root, logger: quiet, servers: [spec] });
void lsp.definition({ path: 'main.ts', line: 5, col: 3 }, { timeoutMs: 20000 }).then((a) => {
  process.stdout.write(JSON.stringify(a) + '\\n');
  if (mode === 'exit') process.exit(0);
});
`,
    );
    await build({ entryPoints: [script], bundle: true, platform: 'node', format: 'cjs', outfile: path.join(dir, 'host.js'), logLevel: 'error' });
    const child = spawn(process.execPath, [path.join(dir, 'host.js'), mode, FAKE, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.on('close', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ ok: true });
    const pids = pidsStarted();
    expect(pids).toHaveLength(2);
    await until(() => pids.every((p) => !isAlive(p)), 2_000);
  });
});

describe('FramingWatchdog', () => {
  const frame = (body: string): string => `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

  it('accepts LSP framing split anywhere, bodies included', () => {
    const w = new FramingWatchdog();
    const stream = Buffer.from(frame('{"a":"\\r\\n\\r\\nnot a header"}') + `Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n${frame('{"é":1}')}`);
    for (let i = 0; i < stream.length; i += 3) expect(w.feed(stream.subarray(i, i + 3))).toBeUndefined();
  });

  it('flags text, JSON without headers, and headers without a length', () => {
    expect(new FramingWatchdog().feed(Buffer.from('hello world\n'))).toMatch(/not an LSP header/);
    expect(new FramingWatchdog().feed(Buffer.from('{"jsonrpc":"2.0"}'))).toMatch(/not an LSP header/);
    expect(new FramingWatchdog().feed(Buffer.from('X-Thing: 1\r\n\r\n'))).toMatch(/Content-Length/);
    expect(new FramingWatchdog().feed(Buffer.from('Content-Length: 2\n\n{}'))).toMatch(/not an LSP header/);
    const w = new FramingWatchdog();
    expect(w.feed(Buffer.from(frame('{}')))).toBeUndefined();
    expect(w.feed(Buffer.from('panic! at main.go:12\n'))).toMatch(/not an LSP header: "panic! at main/);
  });
});
