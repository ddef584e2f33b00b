/**
 * The code-intelligence and memory tools through the built `vlt mcp`, driven by the SDK's
 * Client over stdio on a small TypeScript project: each answer is checked for the right file,
 * line and citation, and every call lands in the shared session context under the client's
 * name, where a later CLI call (another host) finds it.
 */
import { cpSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NavToolResult } from '../../src/core/tools/nav-tools';
import { tempDir, vlt } from '../helpers/cli';
import { call, connectStdio, ensureBuilt, textOf, type StdioSession } from '../helpers/mcp-client';

const FIXTURE = path.resolve(__dirname, '../fixtures/intel/ts');

function structured<T>(r: Awaited<ReturnType<typeof call>>): T {
  expect(r.isError, textOf(r)).toBeFalsy();
  return r.structuredContent as T;
}

describe('code intelligence and memory tools over MCP', () => {
  let ws: string;
  let s: StdioSession;
  beforeAll(async () => {
    ensureBuilt();
    ws = tempDir();
    cpSync(FIXTURE, ws, { recursive: true });
    s = await connectStdio(['mcp', '--workspace', ws]);
  }, 120_000);
  afterAll(async () => {
    await s?.client.close();
  });

  it('find_definition follows an aliased import through a barrel, with citation and provenance', async () => {
    const r = structured<NavToolResult>(await call(s, 'find_definition', { file: 'src/service.ts', line: 11, col: 20, no_lsp: true }));
    expect(r.symbol).toBe('double');
    expect(r.locations[0]).toMatchObject({ citation: 'src/lib/util.ts:1', provenance: 'graph', exact: false, confidence: 'high' });
    expect(r.locations[0]?.text).toBe('export function helper(value: number): number {');
    expect(r.providers.map((p) => p.provider)).toEqual(['lsp', 'graph', 'ctags']);
  }, 60_000);

  it('find_definition with the language server allowed answers the same place, exact or with a note', async () => {
    const r = structured<NavToolResult>(await call(s, 'find_definition', { file: 'src/service.ts', line: 13, col: 17 }));
    expect(r.locations[0]?.citation).toBe('src/lib/util.ts:14');
    const top = r.locations[0]!;
    // A loaded machine may not get typescript-language-server ready in time; then the index
    // answers, and the answer says that the server did not.
    if (top.provenance === 'lsp') expect(top.exact).toBe(true);
    else expect(r.notes.join(' ')).toMatch(/language server/);
  }, 90_000);

  it('find_references lists the re-export, the aliased import and the call', async () => {
    const r = structured<NavToolResult>(await call(s, 'find_references', { symbol: 'helper', no_lsp: true }));
    expect(r.definition?.citation).toBe('src/lib/util.ts:1');
    expect(r.locations.map((l) => l.citation).sort()).toEqual(['src/lib/index.ts:1', 'src/service.ts:1', 'src/service.ts:1', 'src/service.ts:11']);
    expect(r.locations.find((l) => l.citation === 'src/service.ts:11')?.text).toContain('double(input)');
  });

  it('answers unknown, ambiguous and invalid navigation requests with suggestions, candidates or isError', async () => {
    const unknown = structured<NavToolResult>(await call(s, 'find_definition', { symbol: 'helpr', no_lsp: true }));
    expect(unknown.locations).toEqual([]);
    expect(unknown.suggestions).toContain('helper');
    const amb = structured<NavToolResult>(await call(s, 'find_definition', { symbol: 'run', no_lsp: true }));
    expect(amb.ambiguous).toBe(true);
    expect(amb.locations.map((l) => l.citation).sort()).toEqual(['src/lib/util.ts:19', 'src/service.ts:17']);
    const both = await call(s, 'find_definition', { symbol: 'run', file: 'src/service.ts', line: 1, col: 1 });
    expect(both.isError).toBe(true);
    expect(textOf(both)).toMatch(/either symbol, or file\+line\+col/);
    const outside = await call(s, 'find_references', { file: '../../../etc/passwd', line: 1, col: 1 });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toMatch(/PATH_OUTSIDE_WORKSPACE/);
    const past = await call(s, 'find_definition', { file: 'src/service.ts', line: 400, col: 1 });
    expect(textOf(past)).toMatch(/USAGE: line 400 is outside src\/service\.ts/);
  });

  it('get_repo_map ranks the files and shows signatures with line numbers', async () => {
    const r = structured<{ map: string; tokens: number }>(await call(s, 'get_repo_map', { max_tokens: 400 }));
    expect(r.map).toMatch(/^src\/lib\/util\.ts:$/m);
    expect(r.map).toMatch(/^\s+L1 export function helper\(value: number\): number$/m);
    expect(r.tokens).toBeLessThanOrEqual(400);
  });

  it('locate_files ranks the files a stack trace names, with reasons and the line to read, and refuses a schema-invalid call', async () => {
    const r = structured<{ files: Array<{ path: string; line?: number; reasons: string[] }> }>(
      await call(s, 'locate_files', { report: 'TypeError: greet got undefined\n    at Base.greet (/app/src/lib/util.ts:14:12)\n    at compute (/app/src/service.ts:11:20)', limit: 3 }),
    );
    expect(r.files[0]).toMatchObject({ path: 'src/lib/util.ts', line: 14 });
    expect(r.files[0]?.reasons[0]).toBe('frame 1 of the traceback (`Base.greet`, line 14)');
    expect(r.files.map((f) => f.path)).toContain('src/service.ts');
    const bad = await call(s, 'locate_files', { report: 'x', limit: 0 });
    expect(bad.isError).toBe(true);
  });

  it('get_context, impact_analysis and list_routes answer over MCP, and an unknown ref comes back as an error with suggestions', async () => {
    const b = structured<{ version: number; focus: { ref_id: string; kind: string }; graph: { edges: Array<{ src: string; kind: string; dst: string }> } }>(await call(s, 'get_context', { ref_ids: ['src/service.ts'], depth: 1 }));
    expect(b.version).toBe(2);
    expect(b.focus).toMatchObject({ ref_id: 'src/service.ts', kind: 'file' });
    expect(b.graph.edges).toContainEqual({ src: 'src/service.ts', kind: 'part_of', dst: 'src' });
    const why = structured<{ node: { ref_id: string }; impact: { downstream_direct: number } }>(await call(s, 'impact_analysis', { ref_id: 'src/lib/util.ts' }));
    expect(why.node.ref_id).toBe('src/lib/util.ts');
    expect(why.impact.downstream_direct).toBeGreaterThan(0);
    expect(structured<{ total: number }>(await call(s, 'list_routes', {})).total).toBe(0);
    const unknown = await call(s, 'get_context', { ref_ids: ['src/servic'] });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/did you mean src\/service\.ts/);
    expect((await call(s, 'get_context', { ref_ids: [] })).isError).toBe(true);
  });

  it('keeps notes and threads, and records every call in the shared session under the client name', async () => {
    structured(await call(s, 'write_note', { path: 'decisions.md', content: '---\ntags: [arch]\n---\n# Decisions\nWe chose sql.js for the memory store. See [[Setup]].\n' }));
    const found = structured<{ hits: Array<{ path: string }> }>(await call(s, 'search_notes', { query: 'sql.js memory store' }));
    expect(found.hits[0]?.path).toBe('decisions.md');
    structured(await call(s, 'thread_push', { thread: 'design', text: 'Service.compute doubles through helper' }));
    const thread = structured<{ entries: Array<{ text: string; author: string }> }>(await call(s, 'thread_read', { thread: 'design' }));
    expect(thread.entries.at(-1)).toMatchObject({ text: 'Service.compute doubles through helper', author: 'vlt-test@0.0.0' });

    // Another host (the CLI) sees what this client did, attributed to it.
    const shown = await vlt(['session', 'show', '--json'], { cwd: ws });
    expect(shown.code, shown.stderr).toBe(0);
    const events = (JSON.parse(shown.stdout) as { events: Array<{ kind: string; tool?: string; author: string; text: string }> }).events;
    const refCall = events.find((e) => e.kind === 'tool_call' && e.tool === 'find_references');
    expect(refCall?.author).toBe('vlt-test@0.0.0');
    expect(refCall?.text).toContain('helper');
    expect(events.some((e) => e.kind === 'tool_result' && e.tool === 'find_references' && e.text.includes('src/service.ts:11'))).toBe(true);
  }, 60_000);

  it('records a call as one journal append, and folds the journal into the store once idle', async () => {
    const journal = path.join(ws, '.vlt', 'memory-journal.jsonl');
    const store = path.join(ws, '.vlt', 'memory.db');
    await call(s, 'index_status', {});
    // The append lands right after the answer; the store is not rewritten for it.
    let appended = false;
    for (let i = 0; i < 50 && !appended; i++) {
      appended = statSync(journal, { throwIfNoEntry: false })?.size !== undefined && statSync(journal).size > 0;
      if (!appended) await new Promise((r) => setTimeout(r, 10));
    }
    expect(appended).toBe(true);
    const before = statSync(store, { throwIfNoEntry: false })?.mtimeMs;
    // 1.5 s without a call: the server folds.
    let folded = false;
    for (let i = 0; i < 60 && !folded; i++) {
      await new Promise((r) => setTimeout(r, 100));
      folded = statSync(journal).size === 0;
    }
    expect(folded).toBe(true);
    expect(statSync(store).mtimeMs).not.toBe(before);
  }, 30_000);
  it('declares an output schema for every tool, and every answer holds to it (the SDK client checks each structuredContent against it)', async () => {
    // Listing caches the declared schemas in the client: from here on, an answer that does not
    // match its tool's schema makes callTool throw.
    const { tools } = await s.client.listTools();
    for (const t of tools) {
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(Object.keys(t.outputSchema?.properties ?? {}).length, t.name).toBeGreaterThan(0);
    }
    const calls: Array<[string, Record<string, unknown>]> = [
      ['search_code', { query: 'helper' }],
      ['search_code', { query: 'helper', signatures_only: true }],
      ['index_status', {}],
      ['locate_files', { report: 'double() returns the wrong value for negative input' }],
      ['find_definition', { symbol: 'helper', no_lsp: true }],
      ['find_references', { symbol: 'helper', no_lsp: true, limit: 1 }],
      ['find_definition', { symbol: 'nothingLikeThis', no_lsp: true }],
      ['get_repo_map', { max_tokens: 300 }],
      ['read_file_range', { path: 'src/service.ts', start_line: 1, end_line: 5 }],
      ['get_context', { ref_ids: ['src/service.ts'], depth: 1 }],
      ['impact_analysis', { ref_id: 'src/lib/util.ts' }],
      ['list_routes', {}],
      ['get_graph', { ref_ids: ['src/service.ts'], format: 'mermaid' }],
      ['search_graph', { query: 'service' }],
      ['ask_oracle', { question: 'what does helper do?', no_llm: true }],
      ['read_file_range', { path: 'src/service.ts', start_line: 1, max_tokens: 100 }],
      ['write_note', { path: 'contract/a.md', content: '---\ntags: [x]\n---\n# A\n\nSee [[b]].\n' }],
      ['write_note', { path: 'contract/b.md', content: '# B\n\nBack to [[a]].\n' }],
      ['list_notes', {}],
      ['read_note', { path: 'contract/a.md' }],
      ['search_notes', { query: 'back' }],
      ['get_backlinks', { path: 'contract/a.md' }],
      ['get_tags', {}],
      ['move_note', { from: 'contract/b.md', to: 'contract/c.md' }],
      ['create_index', { folder: 'contract' }],
      ['delete_note', { path: 'contract/c.md' }],
      ['thread_push', { thread: 'contract', text: 'the output schemas hold' }],
      ['thread_read', { thread: 'contract' }],
      ['thread_seek', { query: 'schemas' }],
      ['thread_list', {}],
    ];
    for (const [name, args] of calls) {
      const r = await call(s, name, args);
      expect(r.isError, `${name}: ${textOf(r)}`).toBeFalsy();
      expect(r.structuredContent, name).toBeTruthy();
    }
    // Every tool but get_diagnostics (it needs a language server) and delegate_librarian (a
    // language model) was answered above; without a model the Librarian says so as an error.
    expect(new Set(calls.map(([n]) => n))).toEqual(new Set(tools.map((t) => t.name).filter((n) => n !== 'get_diagnostics' && n !== 'delegate_librarian')));
    const librarian = await call(s, 'delegate_librarian', { task: 'Index the contract folder.' });
    expect(librarian.isError).toBe(true);
    expect(textOf(librarian)).toMatch(/^LLM_NOT_CONFIGURED: /);
  }, 120_000);
});
