/**
 * A soak: many mixed tool calls (search, definitions, references, the oracle without a model,
 * the repository map) from a real MCP client to the workspace daemon (`vlt mcp` forwarded to it,
 * as an agent runs it), while files of the workspace change under it (the daemon's watcher picks
 * the edits up and commits them). What it checks: no call fails, the daemon's resident memory
 * stays flat after warm-up (the slope of a least-squares line over the second half, in MiB per
 * thousand calls), and latency stays steady (p50 / p95 per thousand calls).
 *
 * Usage: soak-bench DIR CLI [CALLS]. DIR is a copy of a repository the bench may edit (it puts
 * every file back as it was at the end). Prints one JSON object on stdout.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

const [, , dir, cli, callsArg] = process.argv;
if (!dir || !cli) throw new Error('usage: soak-bench DIR CLI [CALLS]');
const CALLS = Number(callsArg ?? 10_000);
/** A file is edited every this many calls, and put back as it was the next time. */
const EDIT_EVERY = 100;
/** Memory is sampled every this many calls. */
const SAMPLE_EVERY = 250;
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', VLT_EMBEDDINGS: 'off' };

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0;
}

/** Least-squares slope of ys over xs. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  const num = xs.reduce((s, x, i) => s + (x - mx) * (ys[i]! - my), 0);
  const den = xs.reduce((s, x) => s + (x - mx) ** 2, 0);
  return den > 0 ? num / den : 0;
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** Source files of the tree, for the edits and for the names the calls ask about. */
function sourceFiles(root: string, ext: string, limit: number): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (out.length >= limit) return;
      if (e.name.startsWith('.') || e.name === 'testdata' || e.name === 'vendor') continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(ext) && !e.name.endsWith(`_test${ext}`)) out.push(p);
    }
  };
  walk(root);
  return out;
}

async function main(): Promise<void> {
  const files = sourceFiles(dir!, '.go', 4000);
  // Names the calls ask about: exported functions of the tree.
  const names = [...new Set(files.slice(0, 400).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/^func ([A-Z]\w+)\(/gm)].map((m) => m[1]!)))].slice(0, 300);
  const questions = ['how are HTTP requests routed to handlers', 'parse a duration string', 'where is the TLS handshake done', 'how does the scheduler pick a goroutine', 'encode a value as JSON', 'read a gzip stream', 'compare two byte slices'];
  if (names.length < 10) throw new Error(`too few names in ${dir}`);

  const transport = new StdioClientTransport({ command: process.execPath, args: [path.resolve(cli!), '-C', dir!, 'mcp'], env, stderr: 'ignore' });
  const client = new Client({ name: 'vlt-soak', version: '1.0.0' });
  await client.connect(transport);
  const status = JSON.parse(execFileSync(process.execPath, [path.resolve(cli!), '-C', dir!, 'daemon', 'status', '--json'], { env, encoding: 'utf8' })) as { daemon: { pid: number } | null };
  const pid = status.daemon?.pid;
  if (!pid) throw new Error('no workspace daemon answered (is VLT_DAEMON=0 set?)');

  const edited = new Map<string, string>();
  let editCount = 0;
  const latencies: number[] = [];
  const byTool = new Map<string, number[]>();
  /** The call numbers of each tool's calls. */
  const toolAt = new Map<string, number[]>();
  const errors: string[] = [];
  const rss: Array<{ call: number; bytes: number }> = [];
  const t0 = performance.now();
  try {
    for (let i = 0; i < CALLS; i++) {
      if (i % EDIT_EVERY === 0 && i > 0) {
        // Alternately change a file and put it back: the index follows both.
        // Edits 1 and 2 change and restore the first file, 3 and 4 the second, and so on.
        const file = files[Math.floor((i / EDIT_EVERY - 1) / 2) % files.length]!;
        const before = edited.get(file);
        if (before === undefined) {
          const text = readFileSync(file, 'utf8');
          edited.set(file, text);
          writeFileSync(file, `${text}\n// soak edit ${i}\nfunc soakProbe${i}() int { return ${i} }\n`);
        } else {
          writeFileSync(file, before);
          edited.delete(file);
        }
        editCount++;
      }
      const name = names[i % names.length]!;
      const call =
        i % 10 < 4
          ? { name: 'search_code', arguments: { query: i % 2 ? name : questions[i % questions.length]!, limit: 10 } }
          : i % 10 < 6
            ? { name: 'find_definition', arguments: { symbol: name } }
            : i % 10 < 8
              ? { name: 'find_references', arguments: { symbol: name, limit: 50 } }
              : i % 10 < 9
                ? { name: 'ask_oracle', arguments: { question: questions[i % questions.length]! } }
                : { name: 'get_repo_map', arguments: { max_tokens: 1000 } };
      const s = performance.now();
      try {
        const r = await client.callTool(call);
        if (r.isError) errors.push(`${call.name}: ${JSON.stringify(r.content).slice(0, 200)}`);
      } catch (e) {
        errors.push(`${call.name}: ${e instanceof Error ? e.message : String(e)}`);
      }
      const ms = performance.now() - s;
      latencies.push(ms);
      if (!byTool.has(call.name)) byTool.set(call.name, []);
      byTool.get(call.name)!.push(ms);
      if (!toolAt.has(call.name)) toolAt.set(call.name, []);
      toolAt.get(call.name)!.push(i);
      if (i % SAMPLE_EVERY === 0 || i === CALLS - 1) rss.push({ call: i, bytes: rssOf(pid) });
    }
  } finally {
    for (const [file, text] of edited) writeFileSync(file, text);
    await client.close();
  }
  const windows: Array<{ from: number; p50: number; p95: number; tools: Record<string, number> }> = [];
  for (let w = 0; w < latencies.length; w += 1000) {
    const part = latencies.slice(w, w + 1000);
    const tools: Record<string, number> = {};
    for (const [tool, at] of toolAt) tools[tool] = pct(at.filter((i) => i >= w && i < w + 1000).map((i) => latencies[i]!), 95);
    windows.push({ from: w, p50: pct(part, 50), p95: pct(part, 95), tools });
  }
  const warm = rss.filter((r) => r.call >= CALLS / 2);
  const mib = (b: number) => b / 2 ** 20;
  console.log(
    JSON.stringify({
      calls: CALLS,
      edits: editCount,
      seconds: (performance.now() - t0) / 1000,
      errors: errors.length,
      firstErrors: errors.slice(0, 5),
      p50: pct(latencies, 50),
      p95: pct(latencies, 95),
      max: pct(latencies, 100),
      tools: Object.fromEntries([...byTool].map(([k, v]) => [k, { calls: v.length, p50: pct(v, 50), p95: pct(v, 95) }])),
      windows,
      rssMiB: { first: mib(rss[0]?.bytes ?? 0), peak: mib(Math.max(...rss.map((r) => r.bytes))), last: mib(rss[rss.length - 1]?.bytes ?? 0) },
      rssSlopeMiBPerThousandCalls: slope(
        warm.map((r) => r.call / 1000),
        warm.map((r) => mib(r.bytes)),
      ),
    }),
  );
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
