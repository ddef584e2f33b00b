/**
 * Tool-call overhead over stdio: the same queries through a real MCP client talking to the
 * built `vlt mcp`, against engine.search in this process, on an already indexed corpus.
 * Prints one JSON object on stdout.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Engine } from '../../src/core/engine';
import { nodeWorkspaceFs } from '../../src/node/fs';

const [, , dir, goldFile, cli] = process.argv;
if (!dir || !goldFile || !cli) throw new Error('usage: mcp-bench DIR GOLD.json CLI');
const gold = JSON.parse(readFileSync(goldFile, 'utf8')) as { queries: Array<{ query: string }>; extra_queries: string[] };
const queries = [...gold.queries.map((q) => q.query), ...gold.extra_queries];

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? 0;
}

async function timeAll(fn: (q: string) => Promise<unknown>): Promise<number[]> {
  for (const q of queries) await fn(q);
  const ms: number[] = [];
  for (let round = 0; round < 3; round++) {
    for (const q of queries) {
      const t = performance.now();
      await fn(q);
      ms.push(performance.now() - t);
    }
  }
  return ms;
}

async function main() {
  const engine = await Engine.open(dir!, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'read');
  const direct = await timeAll((q) => engine.search(q, { k: 10 }));
  await engine.close();

  const transport = new StdioClientTransport({ command: process.execPath, args: [path.resolve(cli!), 'mcp', '--workspace', dir!, '--quiet'], env: { PATH: process.env.PATH ?? '', VLT_EMBEDDINGS: 'off' }, stderr: 'ignore' });
  const client = new Client({ name: 'vlt-bench', version: '0.0.0' });
  await client.connect(transport);
  const viaMcp = await timeAll(async (q) => {
    const r = await client.callTool({ name: 'search_code', arguments: { query: q, limit: 10 } });
    if (r.isError) throw new Error(JSON.stringify(r.content));
  });
  await client.close();
  process.stdout.write(
    JSON.stringify({
      direct: { p50: pct(direct, 50), p95: pct(direct, 95) },
      mcp: { p50: pct(viaMcp, 50), p95: pct(viaMcp, 95) },
      overhead: { p50: pct(viaMcp, 50) - pct(direct, 50), p95: pct(viaMcp, 95) - pct(direct, 95) },
    }),
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
