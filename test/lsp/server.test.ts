/**
 * `vlt lsp --stdio` driven as an editor drives it: the built CLI as a child process, a real
 * JSON-RPC connection from vscode-languageserver-protocol, the initialize handshake, standard
 * and custom requests, the server asking the client for the editor's language servers, file
 * events into the delta queue, a commit from another process, Restricted Mode and the
 * embedded MCP endpoint.
 */
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cancelIndexingRequest,
  editorDefinitionRequest,
  editorReferencesRequest,
  isUserMistake,
  searchRequest,
  statusRequest,
  syncRequest,
  whereDefinedRequest,
  whereUsedRequest,
} from '../../src/protocol/lsp';
import { tempDir, vlt } from '../helpers/cli';
import { closeSessions, start, type Session } from '../helpers/lsp-session';

afterEach(closeSessions);

const uri = (s: Session, rel: string) => pathToFileURL(path.join(s.dir, rel)).toString();

describe('vlt lsp over stdio', () => {
  it('indexes on start, answers workspace symbols and vlt/search, and pushes its status', async () => {
    const s = await start('test/fixtures/lsp/ts-project', { fallbackLanguages: [] });
    const ready = await s.waitStatus((st) => st.state === 'ready' && st.files > 0);
    expect(ready.files).toBe(4);
    expect(s.statuses.some((st) => st.state === 'indexing')).toBe(true);
    const symbols = await s.conn.sendRequest('workspace/symbol', { query: 'add' });
    expect(symbols).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'add', location: expect.objectContaining({ uri: uri(s, 'math.ts') }) })]));
    const found = await s.conn.sendRequest(searchRequest, { query: 'shift', k: 5 });
    expect(found.hits[0]?.path).toBe('geometry.ts');
    expect(found.hits[0]?.uri).toBe(uri(s, 'geometry.ts'));
    // Where the snippet starts: inside the hit's range, so the view can open the hit itself.
    const first = found.hits[0]!;
    expect(first.snippetLine).toBeGreaterThanOrEqual(first.range.start.line);
    expect(first.snippetLine).toBeLessThanOrEqual(first.range.end.line);
  });

  it('answers where used through the editor first, with its provenance, and falls back when the editor has nothing', async () => {
    const asked: string[] = [];
    const s = await start('test/fixtures/lsp/ts-project', { editorBridge: true, editorServers: { typescript: 'TypeScript Language Features' } }, (c) => {
      c.onRequest(editorDefinitionRequest, (p) => ({ ok: true, value: [{ uri: p.uri, range: { start: p.position, end: p.position } }], server: 'TypeScript Language Features' }));
      c.onRequest(editorReferencesRequest, (p) => {
        asked.push(p.uri);
        // The scripted editor knows one use of `add`, nothing else.
        if (!p.uri.endsWith('math.ts')) return { ok: true, value: [], server: 'TypeScript Language Features' };
        return { ok: true, value: [{ uri: p.uri.replace('math.ts', 'main.ts'), range: { start: { line: 3, character: 14 }, end: { line: 3, character: 17 } } }], server: 'TypeScript Language Features' };
      });
    });
    await s.waitStatus((st) => st.state === 'ready');
    const used = await s.conn.sendRequest(whereUsedRequest, { target: { textDocument: { uri: uri(s, 'math.ts') }, position: { line: 1, character: 17 } } });
    expect(asked.length, JSON.stringify(used)).toBeGreaterThan(0);
    expect(used.locations).toEqual([expect.objectContaining({ path: 'main.ts', line: 4, provenance: 'lsp', exact: true })]);
    expect(used.providers[0]).toEqual(expect.objectContaining({ provider: 'lsp', status: 'answered', reason: 'TypeScript Language Features' }));
    // `shift` gets nothing from the scripted editor: the index answers and says so.
    const shift = await s.conn.sendRequest(whereUsedRequest, { target: { symbol: 'shift' } });
    expect(shift.locations.map((l) => `${l.path}:${l.line}`)).toContain('main.ts:5');
    expect(shift.locations.every((l) => l.provenance !== 'lsp')).toBe(true);
    const def = await s.conn.sendRequest(whereDefinedRequest, { target: { symbol: 'Point' } });
    expect(def.locations[0]).toEqual(expect.objectContaining({ path: 'math.ts', line: 6 }));
  });

  it('a bad position is a clear error, not a crash', async () => {
    const s = await start('test/fixtures/lsp/ts-project', {});
    await s.waitStatus((st) => st.state === 'ready');
    await expect(s.conn.sendRequest(whereUsedRequest, { target: { textDocument: { uri: 'file:///etc/passwd' }, position: { line: 0, character: 0 } } })).rejects.toThrow(/PATH_OUTSIDE_WORKSPACE/);
    await expect(s.conn.sendRequest(whereUsedRequest, { target: { textDocument: { uri: uri(s, 'math.ts') }, position: { line: 999, character: 0 } } })).rejects.toThrow(/USAGE: line 1000 is outside/);
    // The editor shows these as the user's to correct (a warning, logged at info), not as failures.
    const message = await s.conn.sendRequest(whereUsedRequest, { target: { textDocument: { uri: uri(s, 'math.ts') }, position: { line: 999, character: 0 } } }).then(
      () => '',
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    expect(isUserMistake(message)).toBe(true);
    expect(isUserMistake('INDEX_CORRUPT: the index file is corrupt')).toBe(false);
    expect(isUserMistake('INTERNAL: boom')).toBe(false);
    expect((await s.conn.sendRequest(statusRequest)).state).toBe('ready');
  });

  it('file events go to the delta queue: searchable at once, committed in one batch at the threshold', async () => {
    const s = await start('test/fixtures/lsp/ts-project', { queue: { files: 3, timeoutSeconds: 600 } });
    const ready = await s.waitStatus((st) => st.state === 'ready');
    const gen0 = ready.generation;
    const edit = async (file: string, word: string) => {
      appendFileSync(path.join(s.dir, file), `\nexport function ${word}(): number { return 1; }\n`);
      await s.conn.sendNotification('workspace/didChangeWatchedFiles', { changes: [{ uri: uri(s, file), type: 2 }] });
    };
    await edit('math.ts', 'zebraQuokka');
    // Just in time: the search right after the event sees the new function, before any commit.
    expect((await s.conn.sendRequest(searchRequest, { query: 'zebraQuokka' })).hits[0]?.symbol).toBe('zebraQuokka');
    const one = await s.conn.sendRequest(statusRequest);
    expect(one.generation).toBe(gen0);
    expect(one.queue?.uncommittedFiles).toBe(1);
    await edit('geometry.ts', 'yakWombat');
    await edit('main.ts', 'xerusNumbat');
    const committed = await s.waitStatus((st) => st.generation === gen0 + 1 && st.queue?.uncommittedFiles === 0);
    expect(committed.queue?.commits).toBe(1);
    // Another process sees the commit.
    const r = await vlt(['coderag', 'search', 'xerusNumbat', '--json'], { cwd: s.dir });
    expect(JSON.parse(r.stdout)[0].symbol).toBe('xerusNumbat');
  });

  it('gives the writer lock back between commits, and loads what another process committed', async () => {
    const s = await start('test/fixtures/lsp/ts-project', {});
    const ready = await s.waitStatus((st) => st.state === 'ready');
    writeFileSync(path.join(s.dir, 'extra.ts'), 'export function outsideEdit(): string { return "x"; }\n');
    const sync = await vlt(['coderag', 'sync'], { cwd: s.dir });
    expect(sync.code, sync.stderr).toBe(0);
    const hits = (await s.conn.sendRequest(searchRequest, { query: 'outsideEdit' })).hits;
    expect(hits[0]?.path).toBe('extra.ts');
    expect((await s.conn.sendRequest(statusRequest)).generation).toBeGreaterThan(ready.generation);
    // And Sync Index Now with nothing queued is a no-op that answers the status.
    expect((await s.conn.sendRequest(syncRequest)).queue?.pending).toBe(0);
  });

  it('starts the MCP endpoint with the token; an agent call through it lands in the shared session', async () => {
    const s = await start('test/fixtures/lsp/ts-project', { mcp: { enabled: true, port: 0 } });
    const st = await s.waitStatus((x) => x.state === 'ready' && x.mcp !== null);
    const client = new Client({ name: 'test-agent', version: '2.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(st.mcp!.url), { requestInit: { headers: { Authorization: `Bearer ${st.mcp!.token}` } } }));
    try {
      const res = await client.callTool({ name: 'find_references', arguments: { symbol: 'add' } });
      expect(res.isError).toBeFalsy();
      expect(JSON.stringify(res.structuredContent)).toContain('main.ts:4');
      // The editor's own question goes into the same session.
      await s.conn.sendRequest(whereUsedRequest, { target: { symbol: 'shift' } });
      const session = await client.callTool({ name: 'index_status', arguments: {} });
      expect(session.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    await s.close();
    const shown = await vlt(['session', 'show', '--json'], { cwd: s.dir });
    expect(shown.stdout).toContain('test-agent@2.0');
    expect(shown.stdout).toContain('node-test-client@1.0');
  });

  it('Restricted Mode: navigation and search work, no MCP endpoint starts', async () => {
    const s = await start('test/fixtures/lsp/ts-project', { restricted: true, mcp: { enabled: true, port: 0 } });
    const st = await s.waitStatus((x) => x.state === 'ready');
    expect(st.restricted).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    const after = await s.conn.sendRequest(statusRequest);
    expect(after.mcp).toBeNull();
    expect(after.mcpState).toBe('restricted');
    const used = await s.conn.sendRequest(whereUsedRequest, { target: { symbol: 'add' } });
    expect(used.locations.map((l) => `${l.path}:${l.line}`)).toContain('main.ts:4');
  });

  it('reports an index run as one progress with rate and time left; Cancel keeps what it built, searchable and marked partial, and a sync finishes it', async () => {
    // Enough files that the build is still parsing a second in (when it first reports a rate)
    // on a fast machine: about four seconds of parsing at 3,000 files/s.
    const FILES = 12_000;
    const gen = tempDir('vlt-many-');
    for (let i = 0; i < FILES; i++) {
      const dir = path.join(gen, `pkg${i % 60}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, `mod${i}.ts`), `export function handler${i}(input: string): string {\n  return input.split(',').join('-') + 'record${i}';\n}\n`);
    }
    try {
      const s = await start(gen, { mcp: { enabled: true, port: 0 } });
      // MCP starts once the index is open: until then the status says so, rather than "off".
      const running = await s.waitStatus((st) => st.progress?.phase === 'parse' && st.progress.rate !== undefined && st.progress.done < st.progress.total * 0.8, 120_000);
      expect(running.progress!.secondsLeft).toBeGreaterThan(0);
      expect(running.mcpState).toBe('starting');
      expect(await s.conn.sendRequest(cancelIndexingRequest)).toEqual({ cancelled: true });
      const paused = await s.waitStatus((st) => st.state === 'ready' && st.partialFiles !== null);
      expect(paused.partialFiles!).toBeGreaterThan(0);
      expect(paused.partialFiles!).toBeLessThan(FILES);
      expect(paused.progress).toBeNull();
      // Answers come from the part saved, and the build is not resumed behind the user's back.
      const found = await s.conn.sendRequest(searchRequest, { query: 'handler1', k: 3 });
      expect(found.hits.length).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 1000));
      expect((await s.conn.sendRequest(statusRequest)).partialFiles).toBe(paused.partialFiles);
      expect(await s.conn.sendRequest(cancelIndexingRequest)).toEqual({ cancelled: false });
      // A sync finishes the build.
      const done = await s.conn.sendRequest(syncRequest);
      expect(done.files).toBe(FILES);
      expect(done.partialFiles).toBeNull();
      expect((await s.waitStatus((st) => st.mcp !== null)).mcpState).toBe('on');
    } finally {
      rmSync(gen, { recursive: true, force: true });
    }
  }, 240_000);
});
