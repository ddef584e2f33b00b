/**
 * Smoke suite: proves the harness runs code inside a real extension host with a working API.
 * Runs under test/e2e/harness.ts (code-server) and test/vscode/run-electron.mjs (desktop VS Code).
 *
 * Expects a workspace holding a.ts (defines `greet`) and b.ts (calls it), and the environment:
 *   VLT_E2E_WORKSPACE        the folder that must be open
 *   VLT_E2E_EXPECT_TRUSTED   "true" or "false": the expected vscode.workspace.isTrusted
 *   VLT_E2E_EXPECT_VSCODE    prefix of vscode.version (default "1.100", code-server 4.100.3)
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';

const SYMBOL = 'greet';

export async function run(): Promise<void> {
  console.log(`VS Code ${vscode.version}, ${vscode.env.appName}, host ${vscode.env.appHost}`);
  const expectVersion = process.env.VLT_E2E_EXPECT_VSCODE || '1.100';
  assert.ok(vscode.version.startsWith(expectVersion), `VS Code ${vscode.version}, expected ${expectVersion}.x`);

  const folders = vscode.workspace.workspaceFolders ?? [];
  assert.equal(folders.length, 1, 'exactly one workspace folder');
  const folder = folders[0]!;
  const expected = process.env.VLT_E2E_WORKSPACE;
  assert.ok(expected, 'VLT_E2E_WORKSPACE is not set in the extension host');
  assert.equal(fs.realpathSync(folder.uri.fsPath), fs.realpathSync(expected), 'workspace folder');

  const expectTrusted = process.env.VLT_E2E_EXPECT_TRUSTED;
  assert.ok(expectTrusted === 'true' || expectTrusted === 'false', 'VLT_E2E_EXPECT_TRUSTED must be true or false');
  assert.equal(vscode.workspace.isTrusted, expectTrusted === 'true', 'vscode.workspace.isTrusted');
  console.log(`isTrusted = ${vscode.workspace.isTrusted}`);

  const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder.uri, 'a.ts'));
  await vscode.window.showTextDocument(doc);
  const offset = doc.getText().indexOf(SYMBOL);
  assert.ok(offset >= 0, `a.ts does not contain ${SYMBOL}`);
  const position = doc.positionAt(offset + 1);

  // The built-in TypeScript server starts when the document opens and needs a few seconds before
  // it answers; until then the provider returns nothing (or only the declaration).
  const started = Date.now();
  let refs: vscode.Location[] = [];
  while (Date.now() - started < 30_000) {
    refs =
      (await vscode.commands.executeCommand<vscode.Location[] | undefined>('vscode.executeReferenceProvider', doc.uri, position)) ??
      [];
    if (refs.length >= 2) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  console.log(`${refs.length} references to ${SYMBOL} after ${Date.now() - started} ms`);
  assert.ok(refs.length >= 2, `expected ≥ 2 references to ${SYMBOL}, got ${refs.length}`);
  const files = new Set(refs.map((r) => r.uri.path.split('/').pop()));
  assert.ok(files.has('b.ts'), `no reference in b.ts: ${[...files].join(', ')}`);
}
