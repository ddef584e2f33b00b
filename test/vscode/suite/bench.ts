/**
 * The extension's benchmark, run inside a real VS Code extension host by
 * test/bench/vscode-bench.ts. One scenario per run (VLT_BENCH_SCENARIO):
 * - `first`: a workspace with no index; activation → ready, the extension host's event-loop
 *   delay while the server indexes, the server's RSS (peak, and after the index), save →
 *   searchable over 20 saves, and "Where Is This Used?" answered by the index;
 * - `reopen`: the same workspace, indexed: activation → ready;
 * - `lsp`: a TypeScript repository; "Where Is This Used?" once VS Code's TypeScript server is
 *   ready, beside the same positions asked of `vscode.executeReferenceProvider` directly.
 * Results are written as JSON to VLT_BENCH_OUT.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import * as vscode from 'vscode';
import type { NavResult, SearchResultItem, ServerStatus } from '../../../src/protocol/lsp';

interface Api {
  statuses(): ServerStatus[];
  request<R>(method: string, params?: unknown): Promise<R>;
  startup(): { activatedAt: number; readyAt: Record<string, number> };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0;
};
const summary = (xs: number[]) => ({ n: xs.length, p50: pct(xs, 50), p95: pct(xs, 95), max: Math.max(0, ...xs) });

function rssOf(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return undefined;
  }
}

async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs: number, everyMs = 50): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await Promise.resolve(fn()).catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

async function cursorAt(rel: string, needle: string, offset: number): Promise<vscode.TextEditor> {
  const folder = vscode.workspace.workspaceFolders![0]!;
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder.uri, rel));
  const editor = await vscode.window.showTextDocument(doc);
  const at = doc.getText().indexOf(needle);
  if (at < 0) throw new Error(`${needle} not in ${rel}`);
  const pos = doc.positionAt(at + offset);
  editor.selection = new vscode.Selection(pos, pos);
  return editor;
}

export async function run(): Promise<void> {
  const scenario = process.env.VLT_BENCH_SCENARIO ?? 'first';
  const out = process.env.VLT_BENCH_OUT;
  if (!out) throw new Error('VLT_BENCH_OUT is not set');
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const ext = vscode.extensions.getExtension<Api>('vlt-oracle.vlt-oracle');
  if (!ext) throw new Error('the extension is not installed');
  const api = await ext.activate();
  const result: Record<string, unknown> = { scenario };

  // Server memory, sampled while it starts and indexes.
  let peakRss = 0;
  const sampler = setInterval(() => {
    const pid = api.statuses()[0]?.pid;
    const m = pid ? rssOf(pid) : undefined;
    if (m) peakRss = Math.max(peakRss, m.rss, m.hwm);
  }, 100);
  const ready = await until('ready', () => api.statuses().find((s) => s.state === 'ready' && s.files > 0), 300_000, 20);
  loop.disable();
  const start = api.startup();
  const readyAt = Object.values(start.readyAt)[0] ?? Date.now();
  result.files = ready.files;
  result.chunks = ready.chunks;
  result.activationToReadyMs = readyAt - start.activatedAt;
  // The first answer after activation: on an indexed workspace it waits for the catch-up of
  // what changed while no writer ran.
  await api.request('vlt/search', { query: 'open file', k: 5 });
  result.activationToFirstSearchMs = Date.now() - start.activatedAt;
  result.extHostLoopDelayMs = { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6, samples: loop.count };

  if (scenario === 'first') {
    await sleep(10_000);
    clearInterval(sampler);
    const m = rssOf(ready.pid);
    result.serverRss = { peak: Math.max(peakRss, m?.hwm ?? 0), afterIndex: m?.rss ?? 0 };

    // Save → searchable, 20 saves of one file, each adding a new function.
    const file = process.env.VLT_BENCH_EDIT_FILE ?? 'strings/strings.go';
    const folder = vscode.workspace.workspaceFolders![0]!;
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder.uri, file));
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const word = `benchSavedFunction${i}x${Date.now() % 100000}`;
      const edit = new vscode.WorkspaceEdit();
      edit.insert(doc.uri, doc.lineAt(doc.lineCount - 1).range.end, `\nfunc ${word}() int {\n\treturn ${i}\n}\n`);
      await vscode.workspace.applyEdit(edit);
      const t0 = performance.now();
      await doc.save();
      await until(`${word} searchable`, async () => ((await api.request<{ hits: SearchResultItem[] }>('vlt/search', { query: word, k: 3 })).hits.some((h) => h.symbol === word) ? true : undefined), 30_000, 5);
      times.push(performance.now() - t0);
    }
    result.saveToSearchableMs = summary(times);
    const after = await api.request<ServerStatus>('vlt/status');
    result.queueAfterSaves = after.queue;

    // "Where Is This Used?" answered by the index (no Go server in this VS Code).
    const where: Array<{ symbol: string; ms: number; locations: number; provenance: string[]; notes: string[] }> = [];
    for (const [rel, needle, offset] of [
      ['strings/strings.go', 'func TrimSpace', 'func '.length + 1],
      ['strings/builder.go', 'func (b *Builder) WriteString', 'func (b *Builder) '.length + 1],
      ['fmt/print.go', 'func Sprintf', 'func '.length + 1],
      ['net/http/server.go', 'func (srv *Server) Serve(', 'func (srv *Server) '.length + 1],
    ] as const) {
      await cursorAt(rel, needle, offset);
      const t0 = performance.now();
      const r = await vscode.commands.executeCommand<NavResult>('vlt.whereUsed');
      where.push({ symbol: `${rel}:${needle}`, ms: performance.now() - t0, locations: r?.locations.length ?? 0, provenance: [...new Set(r?.locations.map((l) => l.provenance) ?? [])], notes: r?.notes ?? [] });
      await vscode.commands.executeCommand('closeReferenceSearch');
    }
    result.whereUsedIndex = where;
  } else if (scenario === 'lsp') {
    clearInterval(sampler);
    const targets = JSON.parse(process.env.VLT_BENCH_TARGETS ?? '[]') as Array<[string, string, number]>;
    // Ready: the TypeScript server answers references for the first target.
    const [f0, n0, o0] = targets[0]!;
    const tWait = performance.now();
    await until(
      'the TypeScript server',
      async () => {
        const e = await cursorAt(f0, n0, o0);
        const locs = await vscode.commands.executeCommand<vscode.Location[]>('vscode.executeReferenceProvider', e.document.uri, e.selection.active);
        return locs && locs.length > 1 ? true : undefined;
      },
      120_000,
      500,
    );
    result.languageServerReadyMs = performance.now() - tWait;
    const ours: number[] = [];
    const direct: number[] = [];
    const rows: Array<{ target: string; ms: number; directMs: number; locations: number; directLocations: number; provenance: string[] }> = [];
    for (const [rel, needle, offset] of targets) {
      const e = await cursorAt(rel, needle, offset);
      const t1 = performance.now();
      const locs = await vscode.commands.executeCommand<vscode.Location[]>('vscode.executeReferenceProvider', e.document.uri, e.selection.active);
      const directMs = performance.now() - t1;
      const t0 = performance.now();
      const r = await vscode.commands.executeCommand<NavResult>('vlt.whereUsed');
      const ms = performance.now() - t0;
      await vscode.commands.executeCommand('closeReferenceSearch');
      ours.push(ms);
      direct.push(directMs);
      rows.push({ target: `${rel}:${needle}`, ms, directMs, locations: r?.locations.length ?? 0, directLocations: locs?.length ?? 0, provenance: [...new Set(r?.locations.map((l) => l.provenance) ?? [])] });
    }
    result.whereUsedLsp = { ours: summary(ours), direct: summary(direct), rows };
  } else {
    clearInterval(sampler);
  }
  writeFileSync(out, JSON.stringify(result, null, 2));
}
