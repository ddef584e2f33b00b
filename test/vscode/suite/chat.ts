/**
 * The extension-host half of the chat's end-to-end test (test/e2e/chat.test.ts drives the
 * page): it waits for the folder's server, shows the chat view, then reports what the editor
 * shows (which file, which line, in which column) into VLT_E2E_ARTIFACTS/editors.json until
 * the page's driver writes `drive-done` there. It also offers a language model in the editor
 * (VS Code's Language Model API, as Copilot does), which the chat's picker must list. It runs
 * again after a window reload, as the runner extension runs it on every start.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

interface Api {
  statuses(): Array<{ state: string; files: number }>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** VS Code 1.100's proposed provider API (`chatProvider`), which the runner may use. */
interface ProposedLm {
  registerChatModelProvider?(
    id: string,
    provider: {
      provideLanguageModelResponse(messages: vscode.LanguageModelChatMessage[], options: unknown, extensionId: string, progress: vscode.Progress<{ index: number; part: vscode.LanguageModelTextPart }>, token: vscode.CancellationToken): Promise<void>;
      provideTokenCount(text: string | vscode.LanguageModelChatMessage, token: vscode.CancellationToken): Promise<number>;
    },
    metadata: { vendor: string; name: string; family: string; version: string; maxInputTokens: number; maxOutputTokens: number; isUserSelectable?: boolean },
  ): vscode.Disposable;
}

export const EDITOR_MODEL_ANSWER = 'The editor model says: `add` returns the sum of its two arguments [math.ts:1-4].';

/**
 * A language model in the editor, as Copilot would be: it streams a cited answer and records
 * who asked and what it was sent into VLT_E2E_ARTIFACTS/lm-requests.json.
 */
function registerEditorModel(artifacts: string): vscode.Disposable | undefined {
  const lm = vscode.lm as unknown as ProposedLm;
  if (typeof lm.registerChatModelProvider !== 'function') return undefined;
  const requests: Array<{ extensionId: string; text: string }> = [];
  return lm.registerChatModelProvider(
    'vlt-e2e-model',
    {
      async provideLanguageModelResponse(messages, _options, extensionId, progress, token) {
        const text = messages.map((m) => m.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('')).join('\n');
        requests.push({ extensionId, text: text.slice(0, 20_000) });
        fs.writeFileSync(path.join(artifacts, 'lm-requests.json'), JSON.stringify(requests));
        // A follow-up is first rewritten into a standalone query: this model keeps the question.
        const rewrite = /Latest question: (.*)$/s.exec(text);
        const reply = rewrite ? rewrite[1]!.trim() : EDITOR_MODEL_ANSWER;
        for (const word of reply.split(/(?<= )/)) {
          if (token.isCancellationRequested) return;
          progress.report({ index: 0, part: new vscode.LanguageModelTextPart(word) });
          await sleep(30);
        }
      },
      async provideTokenCount(text) {
        const s = typeof text === 'string' ? text : text.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
        return Math.ceil(s.length / 4);
      },
    },
    { vendor: 'vlt-e2e', name: 'Vlt E2E Model', family: 'e2e', version: '1', maxInputTokens: 100_000, maxOutputTokens: 4000, isUserSelectable: true },
  );
}

export async function run(): Promise<void> {
  const artifacts = process.env.VLT_E2E_ARTIFACTS;
  if (!artifacts) throw new Error('VLT_E2E_ARTIFACTS is not set');
  const model = registerEditorModel(artifacts);
  console.log(`chat suite: ${model ? 'registered the editor model "Vlt E2E Model"' : 'this VS Code cannot register a language model'}`);
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
  model?.dispose();
}
