/**
 * First reference search in a freshly started long-lived host: opens the workspace server as
 * `vlt mcp`, `vlt serve` and `vlt lsp` do, waits for the engine, optionally idles (the time a
 * client takes to send its first request), then times `find_references` calls through the
 * server's tool path. One process per measurement, so that nothing is warm from a previous one.
 *
 *   npx esbuild test/bench/refs-probe.ts --bundle --platform=node --format=cjs \
 *     --outfile=/tmp/refs-probe.js --log-level=warning
 *   node /tmp/refs-probe.js DIR IDLE_MS QUERY [QUERY...]
 *
 * A QUERY is a symbol name or FILE:LINE:COL (or `search:WORDS`, a search_code call); the language servers are skipped (`no_lsp`), as
 * the fallback is what this measures. Prints one JSON line: the engine's open time and each
 * call's wall and CPU time (this process, all threads) in milliseconds, in order. The machine
 * may be shared: CPU time is the steadier of the two.
 */
import { silentLogger, type Logger } from '../../src/core/ports';
import { WorkspaceServer } from '../../src/server/workspace';

/** VLT_PROBE_LOG=1: the server's debug lines (the warm-up's report among them) on stderr. */
const logger: Logger = process.env.VLT_PROBE_LOG ? { ...silentLogger, debug: (m) => process.stderr.write(`${m}\n`), info: (m) => process.stderr.write(`${m}\n`) } : silentLogger;

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

async function main(): Promise<void> {
  const [, , dir, idle, ...queries] = process.argv;
  if (!dir || idle === undefined || queries.length === 0) throw new Error('usage: refs-probe DIR IDLE_MS QUERY [QUERY...]');
  const t0 = performance.now();
  const host = await WorkspaceServer.open({ workspace: dir, logger, headlessLanguageServers: false });
  await host.getEngine();
  const open = performance.now() - t0;
  if (Number(idle) > 0) await new Promise((r) => setTimeout(r, Number(idle)));
  const calls: Array<{ query: string; ms: number; cpu: number; total: number | undefined; listed: number }> = [];
  for (const q of queries) {
    const m = /^(.+):(\d+):(\d+)$/.exec(q);
    const input = m ? { file: m[1], line: Number(m[2]), col: Number(m[3]), no_lsp: true } : { symbol: q, no_lsp: true };
    const t = performance.now();
    const c = process.cpuUsage();
    if (q.startsWith('search:')) {
      const a = await host.call('search_code', { query: q.slice('search:'.length) }, { author: 'probe', record: false });
      calls.push({ query: q, ms: Math.round(performance.now() - t), cpu: Math.round(cpuMs(process.cpuUsage(c))), total: undefined, listed: a.hits.length });
      continue;
    }
    const a = await host.call('find_references', input, { author: 'probe', record: false });
    calls.push({ query: q, ms: Math.round(performance.now() - t), cpu: Math.round(cpuMs(process.cpuUsage(c))), total: a.total, listed: a.locations.length });
  }
  await host.close();
  process.stdout.write(`${JSON.stringify({ open: Math.round(open), idle: Number(idle), calls })}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
