/**
 * Memory benchmark: `thread push` latency (in process, and through the built CLI as a user runs
 * it) and `notes search` latency on a generated 1,000-note vault. Targets from the memory issue:
 * push p95 ≤ 50 ms, notes search p95 ≤ 30 ms (both in process; a CLI call also pays for Node's
 * start-up and the bundle's compilation, reported separately).
 *
 * Run: `npm run build && npx esbuild test/bench/memory-bench.ts --bundle --platform=node
 * --format=cjs --outfile=.bench/memory-bench.cjs && node .bench/memory-bench.cjs`
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { defaultConfig } from '../../src/core/config';
import { Memory } from '../../src/core/memory';
import { Vault } from '../../src/core/notes/vault';
import { silentLogger } from '../../src/core/ports';

const NOTES = 1000;
const FOLDERS = 20;
const PUSHES = 300;
const CLI_PUSHES = 20;
const SEARCHES = 300;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? 0) * 100) / 100;
}

/** A deterministic pseudo-random sequence, so that every run measures the same vault. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'qua', 'bri', 'dor', 'fen', 'gil', 'hux', 'jor'];

function vocabulary(n: number, rand: () => number): string[] {
  const words = new Set<string>();
  while (words.size < n) words.add(Array.from({ length: 2 + Math.floor(rand() * 3) }, () => SYLLABLES[Math.floor(rand() * SYLLABLES.length)]).join(''));
  return [...words];
}

/** Writes `NOTES` notes: frontmatter, ~250 words each, three links each. Returns the vocabulary. */
export function generateVault(root: string): string[] {
  const rand = rng(42);
  const words = vocabulary(3000, rand);
  const pick = () => words[Math.floor(Math.pow(rand(), 2) * words.length)]!; // skewed, like prose
  const name = (i: number) => `note-${String(i).padStart(4, '0')}`;
  for (let i = 0; i < NOTES; i++) {
    const folder = path.join(root, `topic-${i % FOLDERS}`);
    mkdirSync(folder, { recursive: true });
    const links = [1, 2, 3].map(() => `[[${name(Math.floor(rand() * NOTES))}]]`).join(', ');
    const paragraphs = Array.from({ length: 5 }, () => Array.from({ length: 50 }, pick).join(' ') + '.').join('\n\n');
    writeFileSync(
      path.join(folder, `${name(i)}.md`),
      `---\ntitle: ${pick()} ${pick()}\ntags: [${pick()}, topic${i % FOLDERS}]\nsummary: ${Array.from({ length: 12 }, pick).join(' ')}\n---\n# ${name(i)}\n\n${paragraphs}\n\nSee ${links}.\n`,
    );
  }
  return words;
}

export async function runMemoryBench(): Promise<Record<string, number>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'vlt-memory-bench-'));
  const result: Record<string, number> = {};
  try {
    const config = defaultConfig();
    config.vault.root = path.join(dir, 'notes');
    const words = generateVault(config.vault.root);
    const memory = await Memory.open(dir, { logger: silentLogger, config });

    // thread push, in process: the first push creates the file and warms sql.js up.
    await memory.threads.push('bench', 'warm-up');
    const push: number[] = [];
    for (let i = 0; i < PUSHES; i++) {
      const t0 = performance.now();
      await memory.threads.push('bench', `Entry ${i}: decided to look at ${words[i % words.length]} in src/module${i}.ts.`, { author: 'bench' });
      push.push(performance.now() - t0);
    }
    result.push_p50_ms = pct(push, 50);
    result.push_p95_ms = pct(push, 95);

    // notes search, in process: index built once, then queries of one to three words.
    let t0 = performance.now();
    const cpu0 = process.cpuUsage();
    await memory.vault.list();
    result.vault_index_build_ms = Math.round(performance.now() - t0);
    // CPU time as well: on a shared machine the wall time says more about the neighbours.
    result.vault_index_build_cpu_ms = Math.round(process.cpuUsage(cpu0).user / 1000);
    const rand = rng(7);
    const queries = Array.from({ length: SEARCHES }, () => Array.from({ length: 1 + Math.floor(rand() * 3) }, () => words[Math.floor(rand() * words.length)]).join(' '));
    const search: number[] = [];
    for (const q of queries) {
      t0 = performance.now();
      await memory.vault.search(q, { k: 10 });
      search.push(performance.now() - t0);
    }
    result.notes_search_p50_ms = pct(search, 50);
    result.notes_search_p95_ms = pct(search, 95);

    // The same, checking every file's mtime on every query (freshness window 0).
    const strict = new Vault(dir, { root: config.vault.root, staleAfterMs: 0 });
    await strict.list();
    const fresh: number[] = [];
    for (const q of queries.slice(0, 100)) {
      t0 = performance.now();
      await strict.search(q, { k: 10 });
      fresh.push(performance.now() - t0);
    }
    result.notes_search_rescan_p50_ms = pct(fresh, 50);
    result.notes_search_rescan_p95_ms = pct(fresh, 95);
    await memory.close();

    // thread push through the built CLI, as a user or an agent's shell runs it.
    const cli = path.resolve(__dirname, '../../dist/cli.js');
    const cliAlt = path.resolve(process.cwd(), 'dist/cli.js');
    const bin = existsSync(cli) ? cli : existsSync(cliAlt) ? cliAlt : undefined;
    if (bin) {
      const cliPush: number[] = [];
      for (let i = 0; i < CLI_PUSHES; i++) {
        t0 = performance.now();
        execFileSync(process.execPath, [bin, '-C', dir, 'thread', 'push', 'bench-cli', `cli entry ${i}`], { stdio: 'ignore' });
        cliPush.push(performance.now() - t0);
      }
      result.cli_push_p50_ms = pct(cliPush, 50);
      result.cli_push_p95_ms = pct(cliPush, 95);
      const version: number[] = [];
      for (let i = 0; i < 5; i++) {
        t0 = performance.now();
        execFileSync(process.execPath, [bin, '--version'], { stdio: 'ignore' });
        version.push(performance.now() - t0);
      }
      result.cli_version_p50_ms = pct(version, 50);
    }
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  runMemoryBench().then(
    (r) => console.log(JSON.stringify(r, null, 2)),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
