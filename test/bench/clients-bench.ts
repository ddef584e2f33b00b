/**
 * Memory of one workspace's clients together, as a user has them open at once: an editor's
 * `vlt lsp --stdio`, an agent's `vlt mcp`, and a terminal's `vlt coderag search`, each having
 * answered one search. With the workspace daemon the three share one index (the daemon's
 * resident memory plus three thin fronts); without it each holds its own. Resident memory is
 * read from /proc while the editor and the agent are connected; the terminal's command is its
 * peak, since it has exited by then.
 *
 * Run: `npm run build && npx esbuild test/bench/clients-bench.ts --bundle --platform=node
 * --format=cjs --outfile=.bench/clients-bench.cjs && node .bench/clients-bench.cjs DIR CLI QUERY`
 * (DIR: an indexed corpus; CLI: dist/cli.js).
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createProtocolConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-languageserver-protocol/node';
import { searchRequest, statusRequest } from '../../src/protocol/lsp';

const [dirArg, cliArg, query] = process.argv.slice(2);
if (!dirArg || !cliArg || !query) {
  process.stderr.write('usage: clients-bench DIR CLI QUERY\n');
  process.exit(2);
}
const dir = path.resolve(dirArg);
const cli = path.resolve(cliArg);
const words: string = query;
const node = process.execPath;

/** Resident memory of a live process, from /proc. */
function rss(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

const rssProbe = path.join(tmpdir(), `vlt-clients-probe-${process.pid}.cjs`);
const rssOut = path.join(tmpdir(), `vlt-clients-rss-${process.pid}`);
writeFileSync(rssProbe, "process.on('exit', () => { require('fs').writeFileSync(process.env.VLT_RSS_OUT, String(process.resourceUsage().maxRSS * 1024)); });\n");

interface Together {
  editor_bytes: number;
  agent_bytes: number;
  terminal_peak_bytes: number;
  daemon_bytes: number;
  total_bytes: number;
  /** Whether the editor's server said it shares the daemon's index. */
  editor_shared: boolean;
}

async function together(daemon: boolean): Promise<Together> {
  const env = { ...process.env, VLT_EMBEDDINGS: 'off', VLT_DAEMON: daemon ? '1' : '0', VLT_RSS_OUT: rssOut };
  spawnSync(node, [cli, 'daemon', 'stop'], { cwd: dir, env, stdio: 'ignore' });
  // The editor.
  const lsp = spawn(node, [cli, 'lsp', '--stdio'], { cwd: dir, env, stdio: ['pipe', 'pipe', 'ignore'] });
  const conn = createProtocolConnection(new StreamMessageReader(lsp.stdout), new StreamMessageWriter(lsp.stdin));
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onRequest('client/registerCapability', () => null);
  conn.listen();
  const uri = pathToFileURL(dir).toString();
  await conn.sendRequest('initialize', { processId: process.pid, rootUri: uri, workspaceFolders: [{ uri, name: 'bench' }], capabilities: {}, initializationOptions: { trusted: true } });
  await conn.sendNotification('initialized', {});
  let status = await conn.sendRequest(statusRequest).catch(() => undefined);
  const until = Date.now() + 300_000;
  while (status?.state !== 'ready' && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 200));
    status = await conn.sendRequest(statusRequest).catch(() => undefined);
  }
  await conn.sendRequest(searchRequest, { query: words, k: 10 });
  // The agent.
  const transport = new StdioClientTransport({ command: node, args: [cli, 'mcp'], cwd: dir, env: env as Record<string, string>, stderr: 'ignore' });
  const agent = new Client({ name: 'vlt-clients-bench', version: '0.0.0' });
  await agent.connect(transport);
  await agent.callTool({ name: 'search_code', arguments: { query: words } });
  // The terminal.
  const term = spawnSync(node, ['--require', rssProbe, cli, 'coderag', 'search', words], { cwd: dir, env, stdio: 'ignore' });
  if (term.status !== 0) throw new Error(`vlt coderag search exited ${term.status}`);
  const terminal = Number(readFileSync(rssOut, 'utf8'));
  // Settled: what each holds while all are connected.
  await new Promise((r) => setTimeout(r, 500));
  const editorPid = lsp.pid;
  const agentPid = transport.pid ?? undefined;
  const daemonPid = daemon ? (JSON.parse(spawnSync(node, [cli, 'daemon', 'status', '--json'], { cwd: dir, env, encoding: 'utf8' }).stdout) as { daemon: { pid: number } | null }).daemon?.pid : undefined;
  const out: Together = {
    editor_bytes: rss(editorPid),
    agent_bytes: rss(agentPid),
    terminal_peak_bytes: terminal,
    daemon_bytes: rss(daemonPid),
    total_bytes: 0,
    editor_shared: status?.shared === true,
  };
  out.total_bytes = out.editor_bytes + out.agent_bytes + out.terminal_peak_bytes + out.daemon_bytes;
  await agent.close();
  await conn.sendRequest('shutdown').catch(() => undefined);
  await conn.sendNotification('exit').catch(() => undefined);
  await new Promise<void>((resolve) => {
    if (lsp.exitCode !== null) return resolve();
    const t = setTimeout(() => (lsp.kill('SIGKILL'), resolve()), 10_000);
    lsp.once('exit', () => (clearTimeout(t), resolve()));
  });
  conn.dispose();
  spawnSync(node, [cli, 'daemon', 'stop'], { cwd: dir, env, stdio: 'ignore' });
  return out;
}

void (async () => {
  process.stderr.write('[clients] editor + agent + terminal without the daemon…\n');
  const separate = await together(false);
  process.stderr.write('[clients] editor + agent + terminal through the daemon…\n');
  const shared = await together(true);
  process.stdout.write(`${JSON.stringify({ query: words, separate, shared })}\n`);
})().catch((e: unknown) => {
  process.stderr.write(`clients-bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
