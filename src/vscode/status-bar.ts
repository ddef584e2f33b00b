/**
 * The status bar item of the folder in focus: an index run's progress (files done, rate, time
 * left) · ready (partial) · queue N · error, with a tooltip that says what the index holds and
 * who answers navigation. A click shows the status, and offers Cancel while indexing.
 */
import * as vscode from 'vscode';
import { describeProgress, describeStatus } from './commands';
import type { FolderServer } from './server-client';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('vlt.status', vscode.StatusBarAlignment.Left, 10);

  constructor() {
    this.item.name = 'Vlt Oracle';
    this.item.command = 'vlt.status';
    this.item.text = '$(loading~spin) Oracle';
    this.item.tooltip = 'Vlt Oracle: starting';
    this.item.show();
  }

  /** Shows the state of `server` (the folder of the active editor). */
  render(server: FolderServer | undefined): void {
    const s = server?.status;
    if (!server || !s) {
      this.item.text = '$(loading~spin) Oracle';
      this.item.tooltip = 'Vlt Oracle: starting the server';
      this.item.backgroundColor = undefined;
      return;
    }
    const queued = (s.queue?.pending ?? 0) + (s.queue?.uncommittedFiles ?? 0);
    if (s.state === 'error' || s.queue?.error) {
      this.item.text = '$(error) Oracle: error';
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
    } else if (s.progress && s.progress.total > 0) {
      // The one progress display of an index run (a first build, a re-index, a catching up);
      // a click offers Cancel.
      this.item.text = `$(sync~spin) Oracle: ${describeProgress(s.progress)}`;
      this.item.backgroundColor = undefined;
    } else if (s.state === 'indexing' || s.state === 'starting') {
      this.item.text = '$(sync~spin) Oracle: indexing';
      this.item.backgroundColor = undefined;
    } else {
      const partial = s.partialFiles !== null ? ' · partial' : '';
      this.item.text = queued > 0 ? `$(check) Oracle: ready${partial} · queue ${queued}` : `$(check) Oracle: ready${partial}`;
      this.item.backgroundColor = undefined;
    }
    if (s.restricted) this.item.text += ' $(shield)';
    const md = new vscode.MarkdownString(describeStatus(s).split('\n').map((l) => `${l}  `).join('\n'));
    md.isTrusted = false;
    this.item.tooltip = md;
  }

  dispose(): void {
    this.item.dispose();
  }
}
