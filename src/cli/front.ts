/**
 * The `vlt` program's entry: a thin front that loads neither the engine nor the grammars nor
 * the command definitions. It answers `--version` and `--help` itself (help texts are written
 * next to the bundle at build time), forwards a workspace's commands to that workspace's daemon
 * (src/daemon/client.ts), and runs everything else, or everything when no daemon can be had,
 * in this process through the full CLI (main.ts, bundled as cli-main.js).
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { loadMain } from './code-cache';
import { afterDirectWrites, writeDirect } from '../node/stdio';
import { version as VERSION } from '../../package.json';

/** Commands a daemon runs for its workspace: the ones that read or write the index and memory. */
const FORWARDED: Record<string, readonly string[] | 'all'> = {
  coderag: ['init', 'sync', 'status', 'search', 'locate', 'map', 'def', 'refs', 'diag'],
  oracle: 'all',
  ctx: 'all',
  why: 'all',
  routes: 'all',
  lint: 'all',
  thread: 'all',
  notes: 'all',
  session: 'all',
};
/** Commands with subcommands: the word after them names the subcommand. */
const GROUPS = new Set(['coderag', 'thread', 'notes', 'session', 'mcp', 'daemon']);

interface Scan {
  words: string[];
  workspace: string | undefined;
  help: boolean;
  version: boolean;
  noDaemon: boolean;
  verbose: boolean;
}

/** How many words name a command: `help coderag`, `coderag search`, `oracle`. */
function wordLimit(first: string | undefined): number {
  if (first === 'help') return 2;
  return first !== undefined && GROUPS.has(first) ? 2 : 1;
}

/** What the front needs to know of a command line: its command words and a few global options. */
export function scanArgs(argv: readonly string[]): Scan {
  const s: Scan = { words: [], workspace: undefined, help: false, version: false, noDaemon: false, verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (a === '-C' || a === '--workspace') s.workspace = argv[++i];
    else if (a.startsWith('--workspace=')) s.workspace = a.slice('--workspace='.length);
    else if (/^-C./.test(a)) s.workspace = a.slice(2);
    else if (a === '-h' || a === '--help') s.help = true;
    else if (a === '-V' || a === '--version') s.version ||= s.words.length === 0;
    else if (a === '--no-daemon') s.noDaemon = true;
    else if (a === '-v' || a === '--verbose') s.verbose = true;
    else if (!a.startsWith('-') && s.words.length < wordLimit(s.words[0])) s.words.push(a);
  }
  return s;
}

/**
 * `vlt serve`'s options when the daemon can take it: loopback only (`--host` and
 * `--allow-remote` serve from this process, as does anything the front does not know).
 */
function serveOptions(argv: readonly string[]): { port?: number; chat: boolean } | undefined {
  const out: { port?: number; chat: boolean } = { chat: true };
  const at = argv.indexOf('serve');
  for (let i = at + 1; i < argv.length; i++) {
    const a = argv[i]!;
    let port: string | undefined;
    if (a === '--mcp-port') port = argv[++i];
    else if (a.startsWith('--mcp-port=')) port = a.slice('--mcp-port='.length);
    else if (a === '--no-chat') out.chat = false;
    else if (a === '-C' || a === '--workspace') i++;
    else if (a.startsWith('--workspace=') || /^-C./.test(a) || ['-v', '--verbose', '-q', '--quiet'].includes(a)) continue;
    else return undefined;
    if (port !== undefined) {
      const n = Number(port);
      if (!Number.isInteger(n) || n < 0 || n > 65_535) return undefined;
      out.port = n;
    }
  }
  return out;
}

/** The root a command works on: `init PATH`'s path, else -C, else the current directory. */
function commandRoot(argv: readonly string[], s: Scan): string {
  if (s.words[0] === 'coderag' && s.words[1] === 'init') {
    const at = argv.indexOf('init');
    const p = argv.slice(at + 1).find((a) => !a.startsWith('-'));
    if (p !== undefined) return path.resolve(p);
  }
  return path.resolve(s.workspace ?? '.');
}

function forwarded(s: Scan): boolean {
  const [command, sub] = s.words;
  const subs = command !== undefined ? FORWARDED[command] : undefined;
  if (subs === undefined) return false;
  return subs === 'all' || (sub !== undefined && subs.includes(sub));
}

/**
 * Whether commands go to the workspace daemon: yes, unless `--no-daemon` or VLT_DAEMON=0; in CI
 * (CI=true) only with VLT_DAEMON=1, since a background process left behind can hold a CI job open.
 */
function daemonEnabled(s: Scan): boolean {
  if (s.noDaemon || process.platform === 'win32') return false;
  const v = (process.env.VLT_DAEMON ?? '').toLowerCase();
  if (['0', 'false', 'off', 'no'].includes(v)) return false;
  if (['1', 'true', 'on', 'yes'].includes(v)) return true;
  const ci = (process.env.CI ?? '').toLowerCase();
  return !(ci !== '' && ci !== '0' && ci !== 'false');
}

/** The build-time help text for the command words, when there is one. */
function helpText(s: Scan): string | undefined {
  let texts: Record<string, string>;
  try {
    texts = JSON.parse(fs.readFileSync(path.join(__dirname, 'help.json'), 'utf8')) as Record<string, string>;
  } catch {
    return undefined;
  }
  const words = s.words[0] === 'help' ? s.words.slice(1) : s.words;
  return texts[words.join(' ')];
}

/** Exits once output is flushed: what went through writeDirect, or `process.stdout` for a command that wrote to the stream. */
function exit(code: number, viaStream = false): void {
  if (viaStream) process.stdout.write('', () => process.exit(code));
  else afterDirectWrites(() => process.exit(code));
}

/** The status fast path (status-fast.js), when it is installed and takes the command; else undefined. */
async function fastStatus(argv: readonly string[]): Promise<number | undefined> {
  const file = path.join(__dirname, 'status-fast.js');
  if (!fs.existsSync(file)) return undefined;
  try {
    const mod = createRequire(__filename)(file) as { fastStatus(argv: readonly string[], cwd: string): Promise<number | undefined> };
    return await mod.fastStatus(argv, process.cwd());
  } catch {
    // Whatever went wrong, the full CLI runs the command and words it.
    return undefined;
  }
}

/** Commands that open the index to read it: the front reads index.db for them while the full CLI loads. */
const INDEX_READERS: Record<string, readonly string[] | 'all'> = {
  coderag: ['search', 'locate', 'map', 'def', 'refs'],
  oracle: 'all',
  ctx: 'all',
  why: 'all',
};

function inProcess(argv: readonly string[], s?: Scan): void {
  const indexRead = s && readsIndex(s) ? readAhead(path.join(path.resolve(s.workspace ?? '.'), '.vlt', 'index.db')) : undefined;
  loadMain(path.join(__dirname, 'cli-main.js')).runInProcess(argv, indexRead ? { indexRead } : {});
}

function readsIndex(s: Scan): boolean {
  const [command, sub] = s.words;
  const subs = command !== undefined ? INDEX_READERS[command] : undefined;
  return subs === 'all' || (subs !== undefined && sub !== undefined && subs.includes(sub)) ;
}

/**
 * Begins reading `file` whole as one request of the I/O thread pool, so that it runs while this
 * thread compiles the full CLI (about 100 ms; reading the Go standard library's 84 MB index.db
 * takes about 50). The store takes the read over (core/store/db-file.ts, offerEarlyRead); any
 * failure or a short read leaves it to read the file itself.
 */
function readAhead(file: string): { file: string; read: Promise<{ bytes: Uint8Array; stats: fs.Stats } | undefined> } | undefined {
  let fd: number;
  let stats: fs.Stats;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    stats = fs.fstatSync(fd);
  } catch {
    fs.closeSync(fd);
    return undefined;
  }
  let bytes: Buffer;
  try {
    // An index too large for one buffer is the store's to report.
    bytes = Buffer.allocUnsafe(stats.size);
  } catch {
    fs.closeSync(fd);
    return undefined;
  }
  const read = new Promise<{ bytes: Uint8Array; stats: fs.Stats }>((resolve, reject) => {
    fs.read(fd, bytes, 0, stats.size, 0, (err, n) => {
      fs.close(fd, () => undefined);
      if (err) reject(err);
      else if (n !== stats.size) reject(new Error(`read ${n} of ${stats.size} bytes`));
      else resolve({ bytes, stats });
    });
  });
  return { file, read };
}

async function front(argv: readonly string[]): Promise<void> {
  const s = scanArgs(argv);
  if (s.version && !s.help) {
    writeDirect(1, `${VERSION}\n`);
    return exit(0);
  }
  if (s.help || s.words[0] === 'help') {
    const text = helpText(s);
    if (text !== undefined) {
      writeDirect(1, text);
      return exit(0);
    }
    return inProcess(argv);
  }
  const mcp = s.words[0] === 'mcp' && s.words.length === 1;
  // Over stdio only (the daemon relays a byte stream); another transport runs here.
  const lsp = s.words[0] === 'lsp' && !argv.some((a) => /^--(node-ipc|socket|pipe)\b/.test(a));
  const serve = s.words[0] === 'serve' ? serveOptions(argv) : undefined;
  if (!(forwarded(s) || mcp || lsp || serve) || !daemonEnabled(s)) {
    // `coderag status` in this process: from the index's summary, without loading the full CLI.
    if (s.words[0] === 'coderag' && s.words[1] === 'status' && !s.help) {
      const code = await fastStatus(argv);
      if (code !== undefined) return exit(code, true);
    }
    return inProcess(argv, s);
  }
  let root: string;
  try {
    root = fs.realpathSync(commandRoot(argv, s));
  } catch {
    return inProcess(argv);
  }
  // A folder never indexed gets no daemon (nor a .vlt/) from a command that only reads.
  const starts = s.words[0] === 'coderag' && (s.words[1] === 'init' || s.words[1] === 'sync');
  if (!starts && !fs.existsSync(path.join(root, '.vlt'))) return inProcess(argv, s);
  // `vlt … | head`: when the reader leaves, writeDirect exits 0; the daemon sees the connection
  // close and stops the command.
  const { forward, forwardLsp, forwardMcp, forwardServe } = await import('../daemon/client');
  const opts = {
    root,
    argv: [...argv],
    bundleDir: __dirname,
    debug: (m: string) => {
      if (s.verbose) process.stderr.write(`debug: ${m}\n`);
    },
  };
  // `vlt mcp`: an agent's MCP server is a session of the workspace's daemon, sharing its index;
  // `vlt serve` on loopback: the daemon serves the HTTP endpoint while this process waits.
  // `vlt lsp`: the editor's server is a session of the same daemon, when the editor may share it.
  const code = mcp ? await forwardMcp(opts) : lsp ? await forwardLsp(opts) : serve ? await forwardServe(opts, serve) : await forward(opts);
  if (code === undefined) return inProcess(argv, s);
  exit(code, mcp || lsp || serve !== undefined);
}

if (require.main === module) {
  front(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`vlt: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
