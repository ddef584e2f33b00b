/**
 * The extension-host half of the chat's end-to-end test (test/e2e/chat.test.ts drives the
 * page): it waits for the folder's server, shows the chat view, then reports what the editor
 * shows (which file, which line, in which column) into VLT_E2E_ARTIFACTS/editors.json until
 * the page's driver writes `drive-done` there. It runs again after a window reload, as the
 * runner extension runs it on every start.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

interface Api {
  statuses(): Array<{ state: string; files: number }>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function run(): Promise<void> {
  const artifacts = process.env.VLT_E2E_ARTIFACTS;
  if (!artifacts) throw new Error('VLT_E2E_ARTIFACTS is not set');
  const ext = vscode.extensions.getExtension<Api>('vlt-oracle.vlt-oracle');
  if (!ext) throw new Error('the extension is not installed');
  const api = await ext.activate();
  const deadline = Date.now() + 150_000;
  while (!api.statuses().some((s) => s.state === 'ready' && s.files > 0)) {
    if (Date.now() > deadline) throw new Error(`the server never became ready: ${JSON.stringify(api.statuses())}`);
    await sleep(200);
  }
  await vscode.commands.executeCommand('vlt.chatView.focus');
  fs.writeFileSync(path.join(artifacts, 'suite-ready'), String(Date.now()));
  console.log('chat suite: server ready, chat view shown');
  while (!fs.existsSync(path.join(artifacts, 'drive-done'))) {
    if (Date.now() > deadline) throw new Error('the page driver did not finish');
    const editors = vscode.window.visibleTextEditors.map((e) => ({ path: vscode.workspace.asRelativePath(e.document.uri), scheme: e.document.uri.scheme, line: e.selection.start.line + 1, column: e.viewColumn ?? 0, text: e.document.uri.scheme === 'file' ? '' : e.document.getText().slice(0, 400) }));
    fs.writeFileSync(path.join(artifacts, 'editors.json.tmp'), JSON.stringify(editors));
    fs.renameSync(path.join(artifacts, 'editors.json.tmp'), path.join(artifacts, 'editors.json'));
    await sleep(200);
  }
  console.log('chat suite: the driver is done');
}
