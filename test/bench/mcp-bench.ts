/**
 * Tool-call overhead of the MCP transports on an already indexed corpus: the same search_code
 * calls made four ways, interleaved query by query so that drift hits all four alike:
 *   - engine: `engine.search` in this process (the engine call itself);
 *   - tool:   the search_code handler in this process (engine call + freshness check + budget);
 *   - stdio:  a real MCP client talking to the built `vlt mcp`;
 *   - http:   a real MCP client talking Streamable HTTP to the built `vlt serve`.
 * The servers run with debug logs, which give each call's handler time as the server measured
 * it; a round trip minus that is the transport's own cost (SDK, JSON, pipe or socket), paired
 * call by call. Prints one JSON object on stdout.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Stream } from 'node:stream';
import * as path from 'node:path';
import { Engine } from '../../src/core/engine';
import { silentLogger } from '../../src/core/ports';
import { invokeTool, searchCodeTool, type ToolContext } from '../../src/core/tools/definitions';
import { nodeWorkspaceFs } from '../../src/node/fs';

const [, , dir, goldFile, cli] = process.argv;
if (!dir || !goldFile || !cli) throw new Error('usage: mcp-bench DIR GOLD.json CLI');
const gold = JSON.parse(readFileSync(goldFile, 'utf8')) as { queries: Array<{ query: string }>; extra_queries: string[] };
const queries = [...gold.queries.map((q) => q.query), ...gold.extra_queries];
const ROUNDS = Number(process.env.VLT_BENCH_ROUNDS ?? 5);
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', VLT_EMBEDDINGS: 'off' };

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? 0;
}

const summary = (xs: number[]) => ({ p50: pct(xs, 50), p95: pct(xs, 95), max: pct(xs, 100) });

/** Handler times ("mcp: search_code ok in 3.2 ms") in the order the server logged them. */
function handlerTimes(stream: Stream | null): number[] {
  const out: number[] = [];
  let buf = '';
  stream?.on('data', (d: Buffer) => {
    buf += d.toString('utf8');
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const m = /mcp: search_code \S+ in ([\d.]+) ms/.exec(buf.slice(0, nl));
      if (m) out.push(Number(m[1]));
      buf = buf.slice(nl + 1);
    }
  });
  return out;
}

async function startHttp(): Promise<{ url: string; token: string; handler: number[]; stop: () => void }> {
  const child = spawn(process.execPath, [path.resolve(cli!), '-v', 'serve', '--workspace', dir!, '--mcp-port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const handler = handlerTimes(child.stderr);
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    child.once('exit', (code) => reject(new Error(`vlt serve exited with ${code}`)));
  });
  const { url, token_file } = JSON.parse(line) as { url: string; token_file: string };
  return { url, token: readFileSync(token_file, 'utf8').trim(), handler, stop: () => child.kill('SIGTERM') };
}

async function main() {
  const engine = await Engine.open(dir!, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'read');
  const ctx: ToolContext = { fs: nodeWorkspaceFs, logger: silentLogger, getEngine: () => Promise.resolve(engine) };

  const stdioTransport = new StdioClientTransport({ command: process.execPath, args: [path.resolve(cli!), '-v', 'mcp', '--workspace', dir!], env, stderr: 'pipe' });
  const stdioHandler = handlerTimes(stdioTransport.stderr);
  const stdio = new Client({ name: 'vlt-bench', version: '0.0.0' });
  await stdio.connect(stdioTransport);

  const served = await startHttp();
  const http = new Client({ name: 'vlt-bench', version: '0.0.0' });
  await http.connect(new StreamableHTTPClientTransport(new URL(served.url), { requestInit: { headers: { Authorization: `Bearer ${served.token}` } } }));

  const viaClient = (c: Client) => async (q: string) => {
    const r = await c.callTool({ name: 'search_code', arguments: { query: q, limit: 10 } });
    if (r.isError) throw new Error(JSON.stringify(r.content));
  };
  const ways: Record<string, (q: string) => Promise<unknown>> = {
    engine: (q) => engine.search(q, { k: 10 }),
    tool: async (q) => {
      const o = await invokeTool(searchCodeTool, ctx, { query: q, limit: 10 });
      if (!o.ok) throw o.error;
    },
    stdio: viaClient(stdio),
    http: viaClient(http),
  };
  const ms: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
  const names = Object.keys(ways);
  // Warm-up: every path opens its engine and touches every query once.
  for (const q of queries) for (const n of names) await ways[n]!(q);
  // Lets the servers' last log lines arrive before counting them.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const stdioBase = stdioHandler.length;
  const httpBase = served.handler.length;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, q] of queries.entries()) {
      // Rotating the order keeps any one way from always running right after another.
      for (let j = 0; j < names.length; j++) {
        const n = names[(i + j + round) % names.length]!;
        const t = performance.now();
        await ways[n]!(q);
        ms[n]!.push(performance.now() - t);
      }
    }
  }
  await stdio.close();
  await http.close();
  served.stop();
  await engine.close();
  // The servers' handler times, in call order, pair with the round trips.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const paired = (rtt: number[], handler: number[]) => rtt.map((t, i) => t - (handler[i] ?? NaN)).filter((x) => Number.isFinite(x));
  const stdioTransportMs = paired(ms.stdio!, stdioHandler.slice(stdioBase));
  const httpTransportMs = paired(ms.http!, served.handler.slice(httpBase));
  const result = {
    n: ms.engine!.length,
    engine: summary(ms.engine!),
    tool: summary(ms.tool!),
    mcp: summary(ms.stdio!),
    http: summary(ms.http!),
    // As the README has reported it: the stdio round trip against the bare engine call.
    overhead: { p50: pct(ms.stdio!, 50) - pct(ms.engine!, 50), p95: pct(ms.stdio!, 95) - pct(ms.engine!, 95) },
    httpOverhead: { p50: pct(ms.http!, 50) - pct(ms.engine!, 50), p95: pct(ms.http!, 95) - pct(ms.engine!, 95) },
    // The tool's own work beyond the engine call (freshness re-hash, budgeting), in process.
    toolOverEngine: { p50: pct(ms.tool!, 50) - pct(ms.engine!, 50), p95: pct(ms.tool!, 95) - pct(ms.engine!, 95) },
    // Round trip minus the server's handler time, call by call: what the transport adds.
    stdioTransport: { n: stdioTransportMs.length, ...summary(stdioTransportMs) },
    httpTransport: { n: httpTransportMs.length, ...summary(httpTransportMs) },
  };
  process.stdout.write(JSON.stringify(result));
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
