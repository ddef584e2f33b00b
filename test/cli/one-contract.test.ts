/**
 * One contract on every surface: a CLI command that has a tool runs the tool, so its `--json`
 * is the tool's answer over MCP and over the editor's `vlt/tool` request, with the same paging
 * and the same errors. One workspace, three clients: the built CLI, a real MCP SDK client over
 * stdio, and an LSP connection to `vlt lsp` as an editor makes it.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchRequest, toolRequest } from '../../src/protocol/lsp';
import { vlt } from '../helpers/cli';
import { start, type Session } from '../helpers/lsp-session';
import { call, connectStdio, ensureBuilt, textOf, type StdioSession } from '../helpers/mcp-client';

/** Timings differ from run to run; everything else must not. */
function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'ms' && k !== 'timings').map(([k, x]) => [k, stable(x)]));
  return v;
}

describe('the CLI, MCP and the editor answer a tool the same', () => {
  let lsp: Session;
  let mcp: StdioSession;

  beforeAll(async () => {
    ensureBuilt();
    lsp = await start('test/fixtures/intel/ts', { fallbackLanguages: [] });
    await lsp.waitStatus((s) => s.state === 'ready' && s.files > 0);
    mcp = await connectStdio(['mcp', '--workspace', lsp.dir]);
  }, 120_000);

  afterAll(async () => {
    await mcp?.client.close();
    await lsp?.close();
    lsp?.cleanup();
  });

  /** The three answers of one tool call: CLI `--json` (in its own process), MCP, `vlt/tool`. */
  async function three(cli: string[], tool: string, input: Record<string, unknown>): Promise<unknown[]> {
    const c = await vlt(['-C', lsp.dir, ...cli, '--json']);
    expect(c.code, c.stderr).toBe(0);
    const m: CallToolResult = await call(mcp, tool, input);
    expect(m.isError, textOf(m)).toBeFalsy();
    const e = await lsp.conn.sendRequest(toolRequest, { name: tool, input });
    return [JSON.parse(c.stdout), m.structuredContent, e].map(stable);
  }

  const cases: Array<[string, string[], string, Record<string, unknown>]> = [
    ['def', ['coderag', 'def', 'helper', '--no-lsp'], 'find_definition', { symbol: 'helper', no_lsp: true }],
    ['def at a position', ['coderag', 'def', 'src/service.ts:11:20', '--no-lsp'], 'find_definition', { file: 'src/service.ts', line: 11, col: 20, no_lsp: true }],
    ['refs', ['coderag', 'refs', 'helper', '--no-lsp'], 'find_references', { symbol: 'helper', no_lsp: true, limit: 200, max_tokens: 20_000 }],
    ['ctx', ['ctx', 'src/service.ts'], 'get_context', { ref_ids: ['src/service.ts'] }],
    ['why', ['why', 'src/lib/util.ts'], 'impact_analysis', { ref_id: 'src/lib/util.ts' }],
    ['routes', ['routes'], 'list_routes', { limit: 1000 }],
    ['locate', ['coderag', 'locate', 'helper returns the wrong double'], 'locate_files', { report: 'helper returns the wrong double', limit: 10 }],
    ['graph', ['graph', 'src/service.ts'], 'get_graph', { ref_ids: ['src/service.ts'], depth: 1, max_nodes: 40, format: 'mermaid' }],
    ['nodes', ['nodes', 'service'], 'search_graph', { query: 'service', limit: 20 }],
    ['notes list', ['notes', 'list'], 'list_notes', { limit: 200 }],
    ['notes search', ['notes', 'search', 'service'], 'search_notes', { query: 'service', limit: 10 }],
    ['notes tags', ['notes', 'tags'], 'get_tags', {}],
    ['thread list', ['thread', 'list'], 'thread_list', {}],
    ['locate --explain', ['coderag', 'locate', '--explain', 'helper returns the wrong double'], 'locate_files', { report: 'helper returns the wrong double', limit: 10, explain: true }],
  ];
  it.each(cases)('%s', async (_name, cli, tool, input) => {
    const [fromCli, fromMcp, fromEditor] = await three(cli, tool, input);
    expect(fromCli).toEqual(fromMcp);
    expect(fromEditor).toEqual(fromMcp);
  }, 60_000);

  it("answers the editor's search view with search_code: the same hits in the same order, with the same snippets", async () => {
    const viaEditor = await lsp.conn.sendRequest(searchRequest, { query: 'helper double', k: 5 });
    const m = await call(mcp, 'search_code', { query: 'helper double', limit: 5, max_tokens: 20_000 });
    const viaMcp = m.structuredContent as { hits: Array<{ path: string; start_line: number; snippet: string }> };
    expect(viaEditor.hits.length).toBeGreaterThan(0);
    expect(viaEditor.hits.map((h) => `${h.path}:${h.range.start.line + 1}`)).toEqual(viaMcp.hits.map((h) => `${h.path}:${h.start_line}`));
    expect(viaEditor.hits.map((h) => h.snippet)).toEqual(viaMcp.hits.map((h) => h.snippet));
    // A language the tool does not know is the tool's usage error, not an empty list.
    await expect(lsp.conn.sendRequest(searchRequest, { query: 'helper', language: 'klingon' })).rejects.toThrow(/^USAGE: /);
  }, 60_000);

  it("prints search_code's hits as the search --json array, every page of them", async () => {
    const c = await vlt(['-C', lsp.dir, 'coderag', 'search', 'helper double', '-k', '5', '--json']);
    expect(c.code, c.stderr).toBe(0);
    const m = await call(mcp, 'search_code', { query: 'helper double', limit: 5, max_tokens: 20_000 });
    const viaMcp = m.structuredContent as { hits: unknown[]; next_cursor?: string };
    expect(viaMcp.hits.length).toBeGreaterThan(1);
    expect(JSON.parse(c.stdout)).toEqual(viaMcp.hits);
    // Small pages joined give the one-page answer: the CLI has no context window to spare.
    const pages: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = (await call(mcp, 'search_code', { query: 'helper double', limit: 5, max_tokens: 200, ...(cursor ? { cursor } : {}) })).structuredContent as { hits: unknown[]; next_cursor?: string };
      pages.push(...page.hits);
      cursor = page.next_cursor;
    } while (cursor);
    expect(pages.map((h) => (h as { path: string }).path)).toEqual(viaMcp.hits.map((h) => (h as { path: string }).path));
    // The same usage error on both: a limit over the tool's.
    const over = await vlt(['-C', lsp.dir, 'coderag', 'search', 'helper', '-k', '1001']);
    expect(over.code).toBe(2);
  }, 60_000);

  it('pages the same: a page of the CLI continues with the cursor MCP gave, and the reverse', async () => {
    const first = await call(mcp, 'find_references', { symbol: 'helper', no_lsp: true, max_tokens: 100 });
    const page1 = first.structuredContent as { locations: unknown[]; next_cursor?: string; total?: number };
    expect(page1.locations).toHaveLength(1);
    expect(page1.next_cursor).toEqual(expect.any(String));
    const c = await vlt(['-C', lsp.dir, 'coderag', 'refs', 'helper', '--no-lsp', '--max-tokens', '100', '--cursor', page1.next_cursor!, '--json']);
    expect(c.code, c.stderr).toBe(0);
    const page2 = JSON.parse(c.stdout) as { locations: Array<{ citation: string }>; next_cursor?: string };
    const viaMcp = (await call(mcp, 'find_references', { symbol: 'helper', no_lsp: true, max_tokens: 100, cursor: page1.next_cursor })).structuredContent as typeof page2;
    expect(stable(page2)).toEqual(stable(viaMcp));
    // A cursor of another request is refused the same way everywhere: a usage error.
    const wrong = await vlt(['-C', lsp.dir, 'coderag', 'refs', 'double', '--no-lsp', '--max-tokens', '100', '--cursor', page1.next_cursor!]);
    expect(wrong.code).toBe(2);
    const wrongMcp = await call(mcp, 'find_references', { symbol: 'double', no_lsp: true, max_tokens: 100, cursor: page1.next_cursor });
    expect(wrongMcp.isError).toBe(true);
    const message = textOf(wrongMcp).replace(/^USAGE: /, '');
    expect(wrong.stderr.trim()).toBe(`vlt: ${message}`);
    await expect(lsp.conn.sendRequest(toolRequest, { name: 'find_references', input: { symbol: 'double', no_lsp: true, max_tokens: 100, cursor: page1.next_cursor } })).rejects.toThrow(`USAGE: ${message}`);
  }, 60_000);
});
