/**
 * The extension's integration suite. It runs inside a real VS Code extension host, with the
 * built .vsix installed and the fixture workspace of test/e2e/extension.test.ts open (in
 * code-server here, in desktop VS Code through `npm run test:vscode` where VS Code can be
 * downloaded). Nothing is mocked: the server is the bundled `vlt lsp`, the TypeScript answers
 * come from VS Code's built-in TypeScript server.
 *
 * A trusted run checks indexing, "Where Is This Used?" through the editor's server and through
 * the fallback, the delta queue, the MCP endpoint and a commit from outside; an untrusted run
 * (Restricted Mode) checks that navigation works and that no MCP endpoint is open.
 */
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as vscode from 'vscode';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { NavResult, RepoMapResult, SearchResultItem, ServerStatus } from '../../../src/protocol/lsp';

interface Api {
  statuses(): ServerStatus[];
  request<R>(method: string, params?: unknown): Promise<R>;
}

const log = (m: string) => console.log(`[suite] ${m}`);

async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000, everyMs = 250): Promise<T> {
  const t0 = Date.now();
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

function folder(): vscode.WorkspaceFolder {
  const f = vscode.workspace.workspaceFolders?.[0];
  assert.ok(f, 'a workspace folder is open');
  return f;
}

async function cursorOn(rel: string, needle: string, offset = 1): Promise<vscode.TextEditor> {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder().uri, rel));
  const editor = await vscode.window.showTextDocument(doc);
  const at = doc.getText().indexOf(needle);
  assert.ok(at >= 0, `${needle} in ${rel}`);
  const pos = doc.positionAt(at + offset);
  editor.selection = new vscode.Selection(pos, pos);
  return editor;
}

/** A terminal's `vlt` command, in a process of its own (no workspace daemon left behind in the test's folder). */
function cli(args: string[], cwd: string, ext: vscode.Extension<unknown>): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [path.join(ext.extensionPath, 'dist', 'cli.js'), ...args], { cwd, env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', VLT_DAEMON: '0' } });
}

export async function run(): Promise<void> {
  const ext = vscode.extensions.getExtension<Api>('vlt-oracle.vlt-oracle');
  assert.ok(ext, 'the Vlt Oracle extension is installed');
  const tActivate = Date.now();
  const api = await ext.activate();
  const trusted = vscode.workspace.isTrusted;
  log(`activated in ${Date.now() - tActivate} ms; trusted: ${trusted}`);

  // The index builds in the server and the status says ready.
  const ready = await until('the server to be ready', () => api.statuses().find((s) => s.state === 'ready' && s.files > 0), 90_000);
  log(`ready: ${ready.files} files, generation ${ready.generation}, fallback languages ${ready.fallbackLanguages.join(',')}`);
  assert.equal(ready.restricted, !trusted);
  assert.ok(ready.fallbackLanguages.includes('python'), 'python has no server in this VS Code, so the index answers it');
  assert.ok(!ready.fallbackLanguages.includes('typescript'), 'typescript is served by the built-in TypeScript extension');
  // The status lists the language servers of this workspace's languages only (VS Code's built-in
  // PHP extension is installed, but there is no PHP here), and says MCP starts rather than "off".
  const listed = (st: ServerStatus) => st.languageServers.flatMap((l) => l.languages);
  assert.ok(!listed(ready).includes('php'), `language servers listed: ${JSON.stringify(ready.languageServers)}`);
  assert.ok(api.statuses().filter((s) => s.state !== 'ready').every((s) => s.mcpState !== 'off'), 'MCP is never "off" while it is enabled and starting');
  // Nothing to cancel once ready: the command says so and changes nothing.
  await vscode.commands.executeCommand('vlt.cancelIndexing');
  assert.equal((await api.request<ServerStatus>('vlt/status')).partialFiles, null);

  // "Where Is This Used?" on `add`: the built-in TypeScript server answers (it needs a few
  // seconds after the first document opens), and says so.
  await cursorOn('math.ts', 'function add', 'function '.length + 1);
  const used = await until(
    'the TypeScript server to answer references',
    async () => {
      const r = await vscode.commands.executeCommand<NavResult>('vlt.whereUsed');
      // Right after the project loads the server may answer references with nothing; the index
      // answers meanwhile. Wait for the language server's own list.
      return r && r.locations.length > 0 && r.locations.every((l) => l.provenance === 'lsp') ? r : undefined;
    },
    60_000,
    1000,
  );
  const where = used.locations.map((l) => `${l.path}:${l.line}`);
  log(`where used add: ${where.join(' ')} via ${used.providers.map((p) => `${p.provider}:${p.status}:${p.reason ?? ''}`).join(' | ')}`);
  assert.ok(where.includes('main.ts:4') && where.includes('geometry.ts:4'), `references of add: ${where.join(', ')}`);
  assert.ok(used.locations.every((l) => l.provenance === 'lsp' && l.exact));
  assert.match(used.providers.filter((p) => p.provider === 'lsp' && p.status === 'answered').at(-1)?.reason ?? '', /typescript/i);

  // In Python no extension serves the language: the fallback answers and says so.
  await cursorOn('tools/helpers.py', 'def slugify', 'def '.length + 1);
  const py = await vscode.commands.executeCommand<NavResult>('vlt.whereUsed');
  assert.ok(py, 'an answer for python');
  const pyWhere = py.locations.map((l) => `${l.path}:${l.line}`);
  log(`where used slugify: ${pyWhere.join(' ')}`);
  assert.ok(pyWhere.includes('tools/report.py:5'), `references of slugify: ${pyWhere.join(', ')}`);
  assert.ok(py.locations.every((l) => l.provenance !== 'lsp'));
  assert.ok(py.providers.some((p) => p.provider === 'lsp' && p.status === 'skipped'), 'the answer says no language server served python');
  // Go to Definition through VS Code itself reaches the server for python (the fallback provider).
  const defs = await vscode.commands.executeCommand<vscode.Location[]>('vscode.executeDefinitionProvider', vscode.Uri.joinPath(folder().uri, 'tools/report.py'), new vscode.Position(4, 12));
  assert.ok(defs.some((d) => d.uri.path.endsWith('tools/helpers.py')), `python definition through the editor: ${JSON.stringify(defs)}`);

  // After the editor's TypeScript server answered, the status lists it, and still no PHP.
  const afterNav = await api.request<ServerStatus>('vlt/status');
  log(`language servers listed: ${JSON.stringify(afterNav.languageServers.map((l) => `${l.name}: ${l.languages.join(',')}`))}`);
  assert.ok(!listed(afterNav).includes('php'), `language servers listed: ${JSON.stringify(afterNav.languageServers)}`);

  // Show Repo Map: a tree around the active file, which leads, its definitions with their lines;
  // no document is opened.
  await cursorOn('math.ts', 'function add', 0);
  const editorsBefore = vscode.window.visibleTextEditors.length;
  const map = await vscode.commands.executeCommand<RepoMapResult>('vlt.repoMap');
  assert.ok(map, 'the repository map answered');
  assert.equal(map.focus, 'math.ts');
  assert.equal(map.files[0]?.path, 'math.ts', `files: ${map.files.map((f) => f.path).join(', ')}`);
  assert.ok(map.files[0]?.symbols.some((sym) => sym.name === 'add' && sym.line <= 2), JSON.stringify(map.files[0]));
  assert.ok(map.files.some((f) => f.path === 'main.ts'), 'main.ts, which calls add, is in its neighbourhood');
  assert.equal(vscode.window.visibleTextEditors.length, editorsBefore);
  assert.ok(!vscode.window.visibleTextEditors.some((e) => e.document.uri.scheme !== 'file'), 'no repository map document was opened');
  log(`repo map around math.ts: ${map.files.map((f) => `${f.path}(${f.symbols.length})`).join(' ')}`);
  // Its toolbar opens the same map as text, as agents get it.
  await vscode.commands.executeCommand('vlt.repoMapAsText');
  const mapDoc = vscode.window.activeTextEditor?.document;
  assert.equal(mapDoc?.languageId, 'markdown', 'the map as text is a markdown document');
  assert.match(mapDoc.getText(), /math\.ts/);
  assert.match(mapDoc.getText(), /L\d+ .*add/);

  // Every core tool is a language-model tool; a call runs in the server, on the shared engine.
  const lmTools = vscode.lm.tools.filter((t) => t.name.startsWith('vlt_')).map((t) => t.name);
  assert.ok(lmTools.includes('vlt_find_references') && lmTools.includes('vlt_ask_oracle'), `language-model tools: ${lmTools.join(', ')}`);
  const lmResult = await vscode.lm.invokeTool('vlt_find_references', { input: { symbol: 'shift' }, toolInvocationToken: undefined });
  const lmText = lmResult.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
  assert.match(lmText, /main\.ts:5/, `vlt_find_references answered: ${lmText.slice(0, 300)}`);
  log(`language-model tools: ${lmTools.length}, vlt_find_references answered`);

  if (!trusted) {
    const s = await api.request<ServerStatus>('vlt/status');
    assert.equal(s.mcp, null, 'no MCP endpoint in Restricted Mode');
    assert.equal(s.mcpState, 'restricted');
    assert.equal(s.restricted, true);
    log('restricted: navigation works, no MCP endpoint');
    return;
  }

  // Five saved edits: each searchable right after its save, committed in one batch.
  const before = await api.request<ServerStatus>('vlt/status');
  const words = ['alphaQuokka', 'betaNumbat', 'gammaWombat', 'deltaBilby', 'epsilonDibbler'];
  const files = ['math.ts', 'geometry.ts', 'main.ts', 'broken.ts', 'tools/helpers.py'];
  for (let i = 0; i < words.length; i++) {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder().uri, files[i]!));
    const edit = new vscode.WorkspaceEdit();
    const text = files[i]!.endsWith('.py') ? `\n\ndef ${words[i]}():\n    return 1\n` : `\nexport function ${words[i]}(): number {\n  return 1;\n}\n`;
    edit.insert(doc.uri, doc.lineAt(doc.lineCount - 1).range.end, text);
    assert.ok(await vscode.workspace.applyEdit(edit));
    const tSave = Date.now();
    assert.ok(await doc.save());
    const hit = await until(`${words[i]} to be searchable`, async () => (await api.request<{ hits: SearchResultItem[] }>('vlt/search', { query: words[i] })).hits.find((h) => h.symbol === words[i]), 10_000, 20);
    log(`save → searchable: ${words[i]} in ${Date.now() - tSave} ms (${hit.path})`);
  }
  const after = await until('one batched commit', async () => {
    const s = await api.request<ServerStatus>('vlt/status');
    return s.queue && s.queue.commits >= 1 && s.queue.uncommittedFiles === 0 ? s : undefined;
  }, 20_000);
  assert.equal(after.queue?.commits, 1, 'five saves, one commit');
  assert.equal(after.generation, before.generation + 1);

  // An agent connects to the MCP endpoint with the token; its call lands in the shared session.
  assert.ok(after.mcp, 'the MCP endpoint runs');
  const client = new Client({ name: 'e2e-agent', version: '1.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(after.mcp.url), { requestInit: { headers: { Authorization: `Bearer ${after.mcp.token}` } } }));
  try {
    const res = await client.callTool({ name: 'find_references', arguments: { symbol: 'shift' } });
    assert.ok(!res.isError, JSON.stringify(res.content));
    assert.match(JSON.stringify(res.structuredContent), /main\.ts:5/);
  } finally {
    await client.close();
  }
  const unauthorized = await fetch(after.mcp.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(unauthorized.status, 401, 'no token, no answer');
  await until('the agent call in the shared session', async () => {
    const { stdout } = await cli(['session', 'show', '--json'], folder().uri.fsPath, ext);
    return stdout.includes('e2e-agent@1.0') && stdout.includes('find_references') ? stdout : undefined;
  }, 20_000, 500);

  // A commit from outside (a terminal's `vlt coderag sync`) is seen without a reload.
  const outside = path.join(folder().uri.fsPath, 'outside.ts');
  writeFileSync(outside, 'export function zetaCommittedOutside(): number {\n  return 7;\n}\n');
  await cli(['coderag', 'sync'], folder().uri.fsPath, ext).catch(async (e: unknown) => {
    // The editor's file watcher saw the file first: its queue holds the writer lock until it
    // writes. "Sync Index Now" writes it; then the terminal's sync goes through.
    log(`first sync attempt: ${String(e).split('\n')[1] ?? String(e)}; syncing the editor's queue first`);
    await api.request('vlt/sync');
    await cli(['coderag', 'sync'], folder().uri.fsPath, ext);
  });
  const seen = await until('the outside commit', async () => (await api.request<{ hits: SearchResultItem[] }>('vlt/search', { query: 'zetaCommittedOutside' })).hits.find((h) => h.path === 'outside.ts'), 15_000);
  log(`outside commit seen: ${seen.path}`);
}
