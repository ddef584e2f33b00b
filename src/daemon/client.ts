/**
 * The front's side of the workspace daemon: find the daemon of a workspace (starting one when
 * none answers), hand it one command line, and relay its stdout, stderr, stdin, Ctrl-C and
 * exit code. Loaded by the thin front on every forwarded command, so it loads no engine code.
 *
 * A stale socket, a crashed daemon, a daemon of another build or protocol, or one started with
 * another environment is replaced, never waited on: the answer is `undefined` (run the command
 * in this process) only when no daemon can be had at all.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as net from 'node:net';
import * as path from 'node:path';
import { isatty } from 'node:tty';
import { processIo, writeDirect } from '../node/stdio';
import { alive, buildId, daemonPaths, ensureSocketDir, envFingerprint, onMessages, ownSocket, readRecord, send, type DaemonPaths } from './socket';
import { PROTOCOL, type ClientMessage, type DaemonMessage, type DaemonStatusInfo } from '../protocol/daemon';

export interface ForwardOptions {
  /** The workspace root, absolute and real. */
  root: string;
  argv: string[];
  /** The folder of the bundles (cli.js, cli-main.js). */
  bundleDir: string;
  /** Says on stderr why a command ran in this process (with -v). */
  debug: (message: string) => void;
}

/** How long a starting daemon may take to listen (it listens before it opens the index). */
const START_TIMEOUT_MS = 15_000;
/** How long a listening daemon may take to answer `hello` before it counts as hung. */
const HELLO_TIMEOUT_MS = 5_000;
/** After Ctrl-C, how long the daemon has to wind the command down before the front leaves. */
const CANCEL_GRACE_MS = 2_000;

type Outcome = { kind: 'exit'; code: number } | { kind: 'refused'; reason: string } | { kind: 'lost'; wrote: boolean } | { kind: 'hung' };

/** Runs `argv` in the workspace's daemon; its exit code, or undefined to run it in this process. */
export function forward(opts: ForwardOptions): Promise<number | undefined> {
  const hello: ClientMessage = {
    t: 'hello',
    protocol: PROTOCOL,
    build: buildId(opts.bundleDir),
    env: envFingerprint(process.env),
    kind: 'cli',
    argv: opts.argv,
    cwd: process.cwd(),
    // Asked of the descriptors: process.stdout would make a stream this process does not need.
    stdoutTTY: isatty(1),
    stderrTTY: isatty(2),
    ...(process.env.TERM !== undefined ? { term: process.env.TERM } : {}),
  };
  return session(opts, (socket) => run(socket, hello));
}

/**
 * `vlt mcp` through the workspace's daemon: this process's stdin and stdout become an MCP
 * session of the daemon's workspace server. Its exit code once the client or the daemon closed
 * the session, or undefined to serve MCP in this process.
 */
export function forwardMcp(opts: ForwardOptions): Promise<number | undefined> {
  const hello: ClientMessage = { t: 'hello', protocol: PROTOCOL, build: buildId(opts.bundleDir), env: envFingerprint(process.env), kind: 'mcp' };
  return session(opts, (socket) => relayStream(socket, hello, 'MCP'));
}

/**
 * `vlt lsp --stdio` through the workspace's daemon: the editor's LSP session is served there,
 * sharing the index with the terminal's commands and the agents' MCP sessions. Its exit code
 * once either side closed the session, or undefined to serve the editor in this process.
 */
export function forwardLsp(opts: ForwardOptions): Promise<number | undefined> {
  const hello: ClientMessage = { t: 'hello', protocol: PROTOCOL, build: buildId(opts.bundleDir), env: envFingerprint(process.env), kind: 'lsp' };
  return session(opts, (socket) => relayStream(socket, hello, 'editor'));
}

/**
 * `vlt serve` (on loopback) through the workspace's daemon: prints the endpoint's JSON line as
 * `vlt serve` does, then holds the endpoint open until SIGINT, SIGTERM or SIGHUP.
 */
export function forwardServe(opts: ForwardOptions, serve: { port?: number; chat: boolean }): Promise<number | undefined> {
  const hello: ClientMessage = { t: 'hello', protocol: PROTOCOL, build: buildId(opts.bundleDir), env: envFingerprint(process.env), kind: 'serve', ...(serve.port !== undefined ? { port: serve.port } : {}), chat: serve.chat };
  return session(opts, (socket) => relayServe(socket, hello));
}

function relayServe(socket: net.Socket, hello: ClientMessage): Promise<Outcome> {
  return new Promise((resolve) => {
    let greeted = false;
    let serving = false;
    let stopping = false;
    let settled = false;
    const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
    const finish = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(helloTimer);
      for (const s of signals) process.removeListener(s, onSignal);
      socket.destroy();
      resolve(o);
    };
    const onSignal = () => {
      // The endpoint closes with the connection.
      stopping = true;
      finish({ kind: 'exit', code: 0 });
    };
    for (const s of signals) process.on(s, onSignal);
    const helloTimer = setTimeout(() => finish({ kind: 'hung' }), HELLO_TIMEOUT_MS);
    onMessages<DaemonMessage>(socket, (m) => {
      if (m.t === 'ok') {
        greeted = true;
        clearTimeout(helloTimer);
      } else if (m.t === 'refused') finish({ kind: 'refused', reason: `${m.reason}: ${m.detail}` });
      else if (m.t === 'serving') {
        serving = true;
        const l = m.listening;
        process.stdout.write(`${JSON.stringify({ url: l.url, token_file: l.token_file, pid: l.pid, ...(l.chat_url ? { chat_url: l.chat_url } : {}) })}\n`);
        if (l.chat_url) process.stderr.write(`chat: open ${l.chat_url} in a browser (a one-time link; the session cookie it sets keeps you in)\n`);
        process.stderr.write(`serving through the workspace daemon (pid ${l.pid}); Ctrl-C stops serving\n`);
      } else if (m.t === 'err') process.stderr.write(m.data);
      else if (m.t === 'exit') finish({ kind: 'exit', code: m.code });
    });
    socket.on('error', () => undefined);
    socket.once('close', () => {
      if (!greeted) return finish({ kind: 'lost', wrote: false });
      if (serving && !stopping) {
        process.stderr.write('vlt: the workspace daemon stopped serving (run `vlt serve` again)\n');
        return finish({ kind: 'exit', code: 1 });
      }
      finish({ kind: 'exit', code: 0 });
    });
    send(socket, hello);
  });
}

/** Finds or starts the daemon and runs one connection's exchange, replacing a daemon that will not do. */
async function session(opts: ForwardOptions, exchange: (socket: net.Socket) => Promise<Outcome>): Promise<number | undefined> {
  const paths = daemonPaths(opts.root);
  for (let attempt = 0; attempt < 3; attempt++) {
    let socket = await connect(paths.socket);
    if (!socket) {
      if (!(await start(paths, opts))) return undefined;
      socket = await connect(paths.socket);
      if (!socket) return undefined;
    }
    const outcome = await exchange(socket);
    if (outcome.kind === 'exit') return outcome.code;
    if (outcome.kind === 'lost') {
      if (outcome.wrote) {
        writeDirect(2, 'vlt: the workspace daemon stopped while answering; run the command again (a new one starts)\n');
        return 1;
      }
      opts.debug('daemon: the connection closed before an answer; starting another');
      continue;
    }
    if (outcome.kind === 'hung') {
      opts.debug('daemon: no answer to hello; replacing it');
      replaceHung(paths);
      continue;
    }
    // Refused (another build, protocol or environment): it has closed its socket and stops
    // after its requests in flight; the next round starts a daemon for this command.
    opts.debug(`daemon: replaced (${outcome.reason})`);
  }
  return undefined;
}

/** Asks the workspace's daemon to stop; false when none answered. */
export async function stopRemote(root: string, bundleDir: string): Promise<{ stopped: boolean; pid?: number }> {
  const paths = daemonPaths(root);
  const socket = await connect(paths.socket);
  if (!socket) return { stopped: false };
  const m = await request(socket, { t: 'hello', protocol: PROTOCOL, build: buildId(bundleDir), env: envFingerprint(process.env), kind: 'stop' });
  const pid = m?.t === 'ok' ? m.pid : readRecord(paths.record)?.pid;
  if (pid !== undefined) {
    // Stopping commits queued edits first: wait for the process to go, within reason.
    const until = Date.now() + 10_000;
    while (alive(pid) && Date.now() < until) await sleep(50);
  }
  return { stopped: true, ...(pid !== undefined ? { pid } : {}) };
}

/** What the workspace's daemon says about itself; undefined when none answers. */
export async function remoteStatus(root: string, bundleDir: string): Promise<DaemonStatusInfo | undefined> {
  const socket = await connect(daemonPaths(root).socket);
  if (!socket) return undefined;
  const m = await request(socket, { t: 'hello', protocol: PROTOCOL, build: buildId(bundleDir), env: envFingerprint(process.env), kind: 'status' });
  return m?.t === 'status' ? m.status : undefined;
}

function request(socket: net.Socket, hello: ClientMessage): Promise<DaemonMessage | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(undefined), HELLO_TIMEOUT_MS);
    const done = (m: DaemonMessage | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(m);
    };
    onMessages<DaemonMessage>(socket, (m) => done(m));
    socket.once('close', () => done(undefined));
    send(socket, hello);
  });
}

/** A connection to the daemon's socket, when one of this user's listens there. */
function connect(socketPath: string): Promise<net.Socket | undefined> {
  if (!ownSocket(socketPath)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const s = net.connect(socketPath);
    s.once('connect', () => {
      s.removeAllListeners('error');
      resolve(s);
    });
    s.once('error', () => {
      s.destroy();
      resolve(undefined);
    });
  });
}

/**
 * Starts a daemon for the workspace in the background and waits until its socket accepts a
 * connection. Two fronts starting one at once both spawn; the daemon's start lock lets one serve.
 */
async function start(paths: DaemonPaths, opts: ForwardOptions): Promise<boolean> {
  try {
    // Private to this user; the daemon tightens a folder an older version left open.
    fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    if (!ensureSocketDir(paths.socket)) {
      opts.debug(`daemon: ${path.dirname(paths.socket)} belongs to someone else; running here`);
      return false;
    }
    // The log starts afresh when it has grown; it holds the daemon's own messages only.
    const size = fs.statSync(paths.log, { throwIfNoEntry: false })?.size ?? 0;
    const log = fs.openSync(paths.log, size > 1 << 20 ? 'w' : 'a', 0o600);
    // Loaded only here: most commands find a daemon running, and every millisecond of the
    // front is paid on each of them.
    const { spawn } = createRequire(__filename)('node:child_process') as typeof import('node:child_process');
    const child = spawn(process.execPath, [path.join(opts.bundleDir, 'cli.js'), '-C', opts.root, 'daemon', 'run'], {
      cwd: opts.root,
      detached: true,
      stdio: ['ignore', log, log],
      env: process.env,
      windowsHide: true,
    });
    fs.closeSync(log);
    let exited = false;
    child.once('exit', () => (exited = true));
    child.once('error', () => (exited = true));
    child.unref();
    const until = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < until) {
      const s = await connect(paths.socket);
      if (s) {
        s.destroy();
        return true;
      }
      // Ours exited: another front's daemon may have won the start; give it a moment.
      if (exited && !fs.existsSync(paths.startLock) && !ownSocket(paths.socket)) {
        await sleep(100);
        if (!ownSocket(paths.socket)) break;
      }
      await sleep(20);
    }
    opts.debug(`daemon: did not start (see ${paths.log}); running here`);
    return false;
  } catch (e) {
    opts.debug(`daemon: could not start: ${e instanceof Error ? e.message : String(e)}; running here`);
    return false;
  }
}

/** Relays one command over `socket` until its exit code. */
function run(socket: net.Socket, hello: ClientMessage): Promise<Outcome> {
  return new Promise((resolve) => {
    let greeted = false;
    let wrote = false;
    let settled = false;
    let cancelled = false;
    const finish = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(helloTimer);
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
      socket.destroy();
      resolve(o);
    };
    const helloTimer = setTimeout(() => finish({ kind: 'hung' }), HELLO_TIMEOUT_MS);
    const onSignal = () => {
      // Ctrl-C: the daemon cancels the command; a second one, or a daemon slow to stop, leaves at once.
      if (cancelled || !greeted) return finish({ kind: 'exit', code: 130 });
      cancelled = true;
      send(socket, { t: 'cancel' });
      setTimeout(() => {
        writeDirect(2, 'vlt: the daemon did not stop the command in time; it goes on in the background\n');
        finish({ kind: 'exit', code: 130 });
      }, CANCEL_GRACE_MS).unref();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    onMessages<DaemonMessage>(socket, (m) => {
      switch (m.t) {
        case 'ok':
          greeted = true;
          clearTimeout(helloTimer);
          return;
        case 'refused':
          return finish({ kind: 'refused', reason: `${m.reason}: ${m.detail}` });
        case 'out':
          wrote = true;
          writeDirect(1, m.data);
          return;
        case 'err':
          wrote = true;
          writeDirect(2, m.data);
          return;
        case 'stdin?':
          void processIo()
            .readStdin()
            .then((data) => send(socket, { t: 'stdin', data: data ?? null }));
          return;
        case 'exit':
          // After Ctrl-C: 130 when the command stopped, its own code when it finished first.
          return finish({ kind: 'exit', code: m.code });
        default:
          return;
      }
    });
    socket.on('error', () => undefined);
    socket.once('close', () => finish({ kind: 'lost', wrote }));
    send(socket, hello);
  });
}

/** Relays an MCP or LSP stdio session: once the daemon said ok, bytes flow both ways until either side closes. */
function relayStream(socket: net.Socket, hello: ClientMessage, what: 'MCP' | 'editor'): Promise<Outcome> {
  return new Promise((resolve) => {
    let greeted = false;
    let settled = false;
    const finish = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(helloTimer);
      resolve(o);
    };
    const helloTimer = setTimeout(() => {
      socket.destroy();
      finish({ kind: 'hung' });
    }, HELLO_TIMEOUT_MS);
    const reader = onMessages<DaemonMessage>(socket, (m) => {
      if (greeted) return;
      if (m.t === 'refused') {
        socket.destroy();
        return finish({ kind: 'refused', reason: `${m.reason}: ${m.detail}` });
      }
      if (m.t !== 'ok') return;
      greeted = true;
      clearTimeout(helloTimer);
      const rest = reader.detach();
      if (rest.length) process.stdout.write(rest);
      socket.pipe(process.stdout);
      socket.resume();
      // The client closing our stdin ends the session; the daemon then closes the connection.
      process.stdin.once('end', () => (stdinEnded = true));
      // An editor ends its session with an LSP `exit` notification, and may keep our stdin open.
      if (what === 'editor') process.stdin.on('data', exitWatch(() => (stdinEnded = true)));
      process.stdin.pipe(socket);
    });
    let stdinEnded = false;
    socket.on('error', () => undefined);
    socket.once('close', () => {
      process.stdin.unpipe(socket);
      if (!greeted) return finish({ kind: 'lost', wrote: false });
      process.stdin.destroy();
      if (!stdinEnded) process.stderr.write(`vlt: the workspace daemon ended the ${what} session (the client may start the server again)\n`);
      finish({ kind: 'exit', code: stdinEnded ? 0 : 1 });
    });
    send(socket, hello);
  });
}

/**
 * Follows the LSP messages (Content-Length framed) a client sends, and calls `onExit` at its
 * `exit` notification. Only small bodies are parsed: an `exit` is one short line.
 */
export function exitWatch(onExit: () => void): (chunk: Buffer) => void {
  let buf = Buffer.alloc(0);
  let skip = 0;
  return (chunk) => {
    if (skip >= chunk.length) return void (skip -= chunk.length);
    buf = Buffer.concat([buf, chunk.subarray(skip)]);
    skip = 0;
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length:\s*(\d+)/i.exec(buf.subarray(0, end).toString('latin1'))?.[1] ?? NaN);
      if (!Number.isFinite(length)) return void (buf = Buffer.alloc(0));
      const body = end + 4;
      if (buf.length < body + length) {
        // A large message (a document's text): pass over it without holding it.
        if (length > 512) {
          skip = body + length - buf.length;
          buf = Buffer.alloc(0);
        }
        return;
      }
      if (length <= 512) {
        try {
          if ((JSON.parse(buf.subarray(body, body + length).toString('utf8')) as { method?: unknown }).method === 'exit') onExit();
        } catch {
          // Not ours to judge: the daemon answers a bad message.
        }
      }
      buf = buf.subarray(body + length);
    }
  };
}

/** A daemon that accepts connections but does not answer: stop it by its recorded pid when that is one of ours. */
function replaceHung(paths: DaemonPaths): void {
  const rec = readRecord(paths.record);
  if (rec && isDaemonProcess(rec.pid)) {
    try {
      process.kill(rec.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  fs.rmSync(paths.socket, { force: true });
}

/** Only a process whose command line is a `vlt daemon run` is ever signalled (the record could be stale, or planted). */
function isDaemonProcess(pid: number): boolean {
  try {
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return cmd.includes('daemon') && cmd.includes('run') && fs.statSync(`/proc/${pid}`).uid === process.getuid?.();
  } catch {
    return false;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
