/**
 * End-to-end tests of `vlt mcp`: a real MCP SDK client talks to the built binary over stdio,
 * as an agent would. They pin the tool contract (listing, search, budget, paging, freshness),
 * the error behaviour (every bad call is an `isError` result the model can read, and the
 * server keeps answering), stdout purity, and a fuzz run over one server process.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchCodeHit, SearchCodeResult, SearchCodeSignature } from '../../src/core/tools/definitions';
import { copyFixture } from '../helpers/cli';
import { alive, call, connectStdio as connect, ensureBuilt, floor, rssKb, textOf, writeBigGo, type StdioSession as Session } from '../helpers/mcp-client';
import { fuzzer } from '../helpers/mcp-fuzz';

function search(r: CallToolResult): SearchCodeResult {
  expect(r.isError, textOf(r)).toBeFalsy();
  return r.structuredContent as unknown as SearchCodeResult;
}

const hitKey = (h: { path: string; start_line: number }) => `${h.path}:${h.start_line}`;

/** The memory tools, in the order hosts list them. */
const MEMORY_TOOL_NAMES_EXPECTED = ['list_notes', 'read_note', 'write_note', 'delete_note', 'search_notes', 'get_backlinks', 'get_tags', 'move_note', 'create_index', 'thread_push', 'thread_read', 'thread_seek', 'thread_list'];

describe('vlt mcp over stdio', () => {
  let ws: { dir: string; cleanup: () => void };
  let defLines: Map<string, number>;
  let s: Session;

  beforeAll(async () => {
    ensureBuilt();
    ws = copyFixture('test/fixtures/lang');
    defLines = writeBigGo(ws.dir);
    s = await connect(['mcp', '--workspace', ws.dir]);
  }, 120_000);

  afterAll(async () => {
    await s?.client.close();
    ws?.cleanup();
  });

  it('lists every tool with titles, descriptions, annotations and described input schemas', async () => {
    const { tools } = await s.client.listTools();
    const code = ['ask_oracle', 'find_definition', 'find_references', 'get_context', 'get_diagnostics', 'get_graph', 'get_repo_map', 'impact_analysis', 'index_status', 'list_routes', 'locate_files', 'read_file_range', 'search_code', 'search_graph', 'delegate_librarian'];
    expect(tools.map((t) => t.name).sort()).toEqual([...code, ...MEMORY_TOOL_NAMES_EXPECTED].sort());
    // ask_oracle logs each question and answer to the dated oracle thread.
    const writers = new Set(['write_note', 'delete_note', 'move_note', 'create_index', 'thread_push', 'ask_oracle', 'delegate_librarian']);
    for (const t of tools) {
      expect(t.title).toBeTruthy();
      expect(t.description!.length).toBeGreaterThan(60);
      if (writers.has(t.name)) expect(t.annotations, t.name).toMatchObject({ readOnlyHint: false, openWorldHint: false });
      else expect(t.annotations, t.name).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
      if (t.name === 'delete_note' || t.name === 'delegate_librarian') expect(t.annotations?.destructiveHint).toBe(true);
      expect(t.inputSchema.type).toBe('object');
      expect(t.inputSchema.additionalProperties).toBe(false);
      for (const [name, prop] of Object.entries(t.inputSchema.properties ?? {})) {
        expect((prop as { description?: string }).description, `${t.name}.${name}`).toBeTruthy();
      }
    }
    const sc = tools.find((t) => t.name === 'search_code')!;
    expect(Object.keys(sc.inputSchema.properties ?? {}).sort()).toEqual(['cursor', 'kind', 'language', 'limit', 'max_tokens', 'path', 'query', 'signatures_only']);
    expect(sc.inputSchema.required).toEqual(['query']);
  });

  it('search_code narrows to kinds, and refuses an unknown one as an isError result', async () => {
    const only = search(await call(s, 'search_code', { query: 'search a repository', kind: ['doc'] }));
    expect(only.hits.length).toBeGreaterThan(0);
    expect(only.hits.every((h) => h.path.endsWith('.md'))).toBe(true);
    const bad = await call(s, 'search_code', { query: 'area', kind: ['widget'] });
    expect(bad.isError).toBe(true);
  });

  it('search_code finds a definition: right file, a line range containing the definition line', async () => {
    const r = await call(s, 'search_code', { query: 'VerifyPacket' });
    const res = search(r);
    // The first call built the index; the logs of that went to stderr.
    expect(s.stderr()).toMatch(/building it first/);
    const top = res.hits[0] as SearchCodeHit;
    expect(top.path).toBe('go/big.go');
    const def = defLines.get('VerifyPacket')!;
    expect(top.start_line).toBeLessThanOrEqual(def);
    expect(top.end_line).toBeGreaterThanOrEqual(def);
    // The big file is split into chunks: the hit is a part of it, not the whole file.
    expect(top.end_line - top.start_line).toBeLessThan(defLines.size * 12);
    expect(top.content_hash).toMatch(/^[0-9a-f]{40}$/);
    expect(top.stale_index).toBeUndefined();
    expect(typeof top.snippet).toBe('string');
    // The text block is the same JSON as the structured content.
    expect(JSON.parse(textOf(r))).toEqual(res);

    const go = search(await call(s, 'search_code', { query: 'Describe', language: 'go', path: 'go/**' }));
    const sample = go.hits.find((h) => h.path === 'go/sample.go')!;
    const describeLine = readFileSync(path.join(ws.dir, 'go/sample.go'), 'utf8').split('\n').findIndex((l) => l.startsWith('func Describe')) + 1;
    expect(sample.start_line).toBeLessThanOrEqual(describeLine);
    expect(sample.end_line).toBeGreaterThanOrEqual(describeLine);
    expect(go.hits.every((h) => h.path.startsWith('go/'))).toBe(true);
  });

  it('signatures_only drops snippets and keeps path, lines, symbol, kind and the first line', async () => {
    const res = search(await call(s, 'search_code', { query: 'Ledger', signatures_only: true, limit: 8 }));
    expect(res.hits.length).toBeGreaterThan(1);
    for (const h of res.hits as SearchCodeSignature[]) {
      expect(h).not.toHaveProperty('snippet');
      expect(Object.keys(h).sort()).toEqual(['end_line', 'first_line', 'kind', 'path', 'snippet_line', 'start_line', 'symbol']);
      expect(typeof h.first_line).toBe('string');
    }
  });

  it('keeps every answer within max_tokens and pages with next_cursor, without repeats', async () => {
    const args = { query: 'Ledger Invoice Packet', limit: 12 };
    const whole = search(await call(s, 'search_code', { ...args, max_tokens: 20_000 }));
    expect(whole.next_cursor).toBeUndefined();
    expect(whole.truncated).toBe(false);
    expect(whole.hits.length).toBeGreaterThan(3);

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await call(s, 'search_code', { ...args, max_tokens: 150, ...(cursor ? { cursor } : {}) });
      const page = search(r);
      expect(Math.ceil(textOf(r).length / 4)).toBeLessThanOrEqual(150);
      expect(page.hits.length).toBeGreaterThan(0);
      seen.push(...page.hits.map(hitKey));
      cursor = page.next_cursor;
      if (cursor) expect(page.truncated).toBe(true);
      pages++;
    } while (cursor && pages < 50);
    expect(pages).toBeGreaterThan(1);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(whole.hits.map(hitKey));

    // The default budget holds too, for a query that matches a lot.
    const r = await call(s, 'search_code', { query: 'return in nil append byte', limit: 50 });
    expect(Math.ceil(textOf(r).length / 4)).toBeLessThanOrEqual(4000);
  });

  it('rejects a cursor of another query, and a forged one, as isError', async () => {
    const first = search(await call(s, 'search_code', { query: 'Ledger Invoice Packet', limit: 12, max_tokens: 150 }));
    expect(first.next_cursor).toBeTruthy();
    const other = await call(s, 'search_code', { query: 'Token Header', limit: 12, max_tokens: 150, cursor: first.next_cursor });
    expect(other.isError).toBe(true);
    expect(textOf(other)).toMatch(/^USAGE: cursor belongs to a different search/);
    const otherLimit = await call(s, 'search_code', { query: 'Ledger Invoice Packet', limit: 11, cursor: first.next_cursor });
    expect(otherLimit.isError).toBe(true);
    const forged = await call(s, 'search_code', { query: 'Ledger Invoice Packet', limit: 12, cursor: 'bm90IGEgY3Vyc29y' });
    expect(forged.isError).toBe(true);
    expect(textOf(forged)).toMatch(/^USAGE: cursor is not a valid cursor/);
  });

  it('rejects path globs that leave the workspace, or that would take exponential time to match', async () => {
    for (const p of ['../../etc/**', '/etc/**', 'src/../../x']) {
      const r = await call(s, 'search_code', { query: 'total', path: p });
      expect(r.isError, p).toBe(true);
      expect(textOf(r)).toMatch(/^PATH_OUTSIDE_WORKSPACE: /);
    }
    const t0 = performance.now();
    for (const p of [`${'*a'.repeat(12)}b`, `${'?*'.repeat(8)}b`, '*a/*b/*c/*d']) {
      const r = await call(s, 'search_code', { query: 'total', path: p });
      expect(r.isError, p).toBe(true);
      expect(textOf(r)).toMatch(/^USAGE: path .* wildcards; at most 3/);
    }
    expect(performance.now() - t0).toBeLessThan(2000);
    // Ordinary globs with globstars and a few wildcards still work.
    const ok = search(await call(s, 'search_code', { query: 'Ledger', path: '**/go/**/*i*.go' }));
    expect(ok.hits.map((h) => h.path)).toContain('go/big.go');
  });

  it('answers schema-invalid arguments with readable isError results and keeps serving', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{}, /query/],
      [{ query: 42 }, /expected string.*query/],
      [{ query: 'x', limit: '10' }, /limit/],
      [{ query: 'x', limit: 0 }, /limit/],
      [{ query: 'x', limit: 1001 }, /limit/],
      [{ query: 'x', limit: 2.5 }, /limit/],
      [{ query: 'x', signatures_only: 'yes' }, /signatures_only/],
      [{ query: 'x', language: 'cobol' }, /language/],
      [{ query: 'x'.repeat(30_000) }, /query/],
      [{ query: 'x', max_tokens: 50 }, /max_tokens/],
      [{ query: 'x', lang: 'go' }, /unknown argument "lang"/],
      [{ query: null }, /query/],
      [{ query: '   ' }, /^USAGE: query is blank/],
    ];
    for (const [args, message] of cases) {
      const r = await call(s, 'search_code', args);
      expect(r.isError, JSON.stringify(args).slice(0, 80)).toBe(true);
      expect(textOf(r)).toMatch(message);
      // The message never echoes a huge argument back into the model's context.
      expect(textOf(r).length).toBeLessThan(1200);
    }
    const extra = await call(s, 'index_status', { verbose: true });
    expect(extra.isError).toBe(true);
    const unknown = await call(s, 'no_such_tool', {});
    expect(unknown.isError).toBe(true);
    expect(search(await call(s, 'search_code', { query: 'VerifyPacket' })).hits.length).toBeGreaterThan(0);
  });

  it('index_status returns the index counts', async () => {
    const r = await call(s, 'index_status', {});
    expect(r.isError).toBeFalsy();
    const st = r.structuredContent as { files: number; chunks: number; symbols: number; languages: Record<string, number>; workspace: string };
    expect(st.files).toBeGreaterThanOrEqual(16);
    expect(st.chunks).toBeGreaterThan(st.files);
    expect(st.symbols).toBeGreaterThan(30);
    expect(st.languages.go).toBe(2);
    expect(st.workspace).toBe(ws.dir);
  });

  it('never returns stale code silently: changed, deleted and escaped files are re-read or flagged', async () => {
    const before = search(await call(s, 'search_code', { query: 'VerifyPacket' })).hits[0] as SearchCodeHit;
    // Lines shift and the body changes; the index is not refreshed.
    const file = path.join(ws.dir, 'go/big.go');
    const edited = `// edited 1\n// edited 2\n// edited 3\n${readFileSync(file, 'utf8').replace(/byte\(3\)/g, 'byte(33)')}`;
    writeFileSync(file, edited);
    const after = search(await call(s, 'search_code', { query: 'VerifyPacket' })).hits[0] as SearchCodeHit;
    expect(hitKey(after)).toBe(hitKey(before));
    expect(after.stale_index).toBe(true);
    expect(after.note).toMatch(/changed since it was indexed/);
    // The indexed snippet's lines, read again: they may have shifted.
    expect(after.snippet_line).toBe(before.snippet_line);
    const live = edited.split('\n').slice(after.snippet_line! - 1, Math.min(after.end_line, after.snippet_line! + 11)).join('\n');
    expect(after.snippet).toBe(live);
    expect(after.snippet).not.toBe(before.snippet);
    const sig = search(await call(s, 'search_code', { query: 'VerifyPacket', signatures_only: true })).hits[0] as SearchCodeSignature;
    expect(sig.stale_index).toBe(true);
    expect(sig.first_line).toBe(live.split('\n')[0]!.trim());

    unlinkSync(path.join(ws.dir, 'go/sample.go'));
    const gone = search(await call(s, 'search_code', { query: 'Describe', path: 'go/**' })).hits.find((h) => h.path === 'go/sample.go') as SearchCodeHit;
    expect(gone.stale_index).toBe(true);
    expect(gone.snippet).toBe('');
    expect(gone.note).toMatch(/deleted or moved/);

    // An indexed file replaced by a link to a file outside the workspace is not read.
    const outside = mkdtempSync(path.join(tmpdir(), 'vlt-outside-'));
    try {
      writeFileSync(path.join(outside, 'secret.py'), 'TOP_SECRET = "do not leak"\n');
      unlinkSync(path.join(ws.dir, 'python/sample.py'));
      symlinkSync(path.join(outside, 'secret.py'), path.join(ws.dir, 'python/sample.py'));
      const r = await call(s, 'search_code', { query: 'total', path: 'python/**' });
      expect(textOf(r)).not.toMatch(/TOP_SECRET/);
      const link = search(r).hits.find((h) => h.path === 'python/sample.py') as SearchCodeHit;
      expect(link.stale_index).toBe(true);
      expect(link.snippet).toBe('');
      expect(link.note).toMatch(/outside the workspace/);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('also takes the workspace from the global -C option, and exits as soon as the client disconnects', async () => {
    const other = await connect(['-C', ws.dir, 'mcp']);
    const r = await call(other, 'index_status', {});
    expect((r.structuredContent as { workspace: string }).workspace).toBe(ws.dir);
    const t0 = performance.now();
    await other.client.close();
    // The transport ends stdin and waits up to 2 s before it sends SIGTERM: a server that
    // exits on its own when stdin ends is much faster. (This server found the index built and
    // never started parse workers; see the report on the exit delay after a first build.)
    expect(performance.now() - t0).toBeLessThan(1500);
    expect(alive(other.pid)).toBe(false);
    expect(other.errors).toEqual([]);
  });

  it('kept stdout to the protocol and logged to stderr', () => {
    // A line on stdout that is not a JSON-RPC message would have reached the client as an error.
    expect(s.errors).toEqual([]);
    expect(s.stderr()).toMatch(/no index in .* yet; building it first/);
    expect(s.stderr()).toMatch(/indexed \d+ files/);
  });
});

// ---------------------------------------------------------------------------------------
// Fuzz
// ---------------------------------------------------------------------------------------

describe('vlt mcp under fuzzed calls', () => {
  let ws: { dir: string; cleanup: () => void };
  let s: Session;

  beforeAll(async () => {
    ensureBuilt();
    ws = copyFixture('test/fixtures/lang');
    writeBigGo(ws.dir);
    s = await connect(['mcp', '--workspace', ws.dir]);
  }, 120_000);

  afterAll(async () => {
    await s?.client.close();
    ws?.cleanup();
  });

  it('answers 1,200 generated calls with results or isError, stays alive and does not leak', async () => {
    const seed = Number(process.env.VLT_FUZZ_SEED ?? 20_240_601);
    // Warm up with heavy searches and a fuzz run of another seed, so that the baseline is taken
    // at a steady state: the heap and sql.js's WebAssembly memory grow to a working size and
    // stay there, which is not a leak. A leak keeps growing with the number of calls.
    for (let i = 0; i < 30; i++) await call(s, 'search_code', { query: 'Ledger total area', limit: 50 });
    const warm = fuzzer(seed + 1);
    for (let i = 0; i < 400; i++) {
      const { name, args } = warm();
      await call(s, name, args);
    }
    const next = fuzzer(seed);
    // RSS saws up and down by tens of MB with garbage collection alone, so single readings
    // compare poorly. The floor of the saw (the lowest reading over the first 300 calls, against
    // the lowest over the last 300) is what a leak raises: it grows with the number of calls.
    const rss: Array<number | undefined> = [];
    // VLT_FUZZ_CALLS=20000 turns this into a soak run; VLT_FUZZ_SEED replays a failing run.
    const N = Number(process.env.VLT_FUZZ_CALLS ?? 1200);
    let ok = 0;
    let errors = 0;
    const failures: string[] = [];
    let i = 0;
    const worker = async () => {
      while (i < N) {
        const { name, args } = next();
        if (i % 10 === 0) rss.push(rssKb(s.pid));
        i++;
        let r: CallToolResult;
        try {
          r = await call(s, name, args);
        } catch (e) {
          failures.push(`${name} ${JSON.stringify(args).slice(0, 200)} threw ${(e as Error).message.slice(0, 200)}`);
          continue;
        }
        const text = textOf(r);
        if (r.isError) {
          errors++;
          if (!text || text.length > 2000) failures.push(`${name}: unreadable error of ${text.length} chars`);
          continue;
        }
        ok++;
        if (name === 'search_code') {
          const res = r.structuredContent as unknown as SearchCodeResult;
          const budget = typeof args.max_tokens === 'number' ? args.max_tokens : 4000;
          if (!Array.isArray(res?.hits) || typeof res.truncated !== 'boolean') failures.push(`malformed result for ${JSON.stringify(args).slice(0, 200)}`);
          else if (Math.ceil(text.length / 4) > budget) failures.push(`over budget: ${text.length} chars for max_tokens ${budget}`);
        }
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 4 }, worker));
    const ms = performance.now() - t0;
    expect(failures, `seed ${seed}`).toEqual([]);
    expect(ok + errors).toBe(N);
    expect(ok).toBeGreaterThan(50);
    expect(errors).toBeGreaterThan(50);

    expect(alive(s.pid)).toBe(true);
    expect(search(await call(s, 'search_code', { query: 'VerifyPacket' })).hits[0]?.path).toBe('go/big.go');
    rss.push(rssKb(s.pid));
    const rssBefore = floor(rss.slice(0, 30));
    const rssAfter = floor(rss.slice(-30));
    if (rssBefore !== undefined && rssAfter !== undefined) expect(rssAfter - rssBefore, `RSS ${rssBefore} kB → ${rssAfter} kB`).toBeLessThan(50 * 1024);
    expect(s.errors).toEqual([]);
    console.log(`fuzz: ${N} calls in ${ms.toFixed(0)} ms (${ok} results, ${errors} isError), RSS ${rssBefore} → ${rssAfter} kB`);
  }, 120_000);
});
