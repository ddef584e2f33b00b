/**
 * The chat view's state, kept by the extension in a file of its workspace storage as well as
 * in the webview's own state. A browser workbench (code-server, vscode.dev) may unload on a
 * window reload before it has flushed the webview's state; the extension host writes this file
 * itself, each save replacing the last one whole (a temporary file, then a rename).
 */
import * as vscode from 'vscode';
import { errorMessage } from './errors';

/**
 * The workspace-state key of the chat's session id, so that a window reload continues the
 * conversation, and the folder's server starts in that session.
 */
export const CHAT_SESSION_KEY = 'vlt.chat.session';

/** Most bytes of state kept: the view already bounds its transcript; this bounds a hostile one. */
const MAX_BYTES = 8 * 1024 * 1024;

export class ChatStateStore {
  private writing: Promise<void> = Promise.resolve();
  private readonly file: vscode.Uri | undefined;

  constructor(
    storage: vscode.Uri | undefined,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.file = storage && vscode.Uri.joinPath(storage, 'chat-state.json');
  }

  /** The last state saved, or undefined when there is none (or it cannot be read). */
  async load(): Promise<unknown> {
    await this.writing;
    if (!this.file) return undefined;
    try {
      const bytes = await vscode.workspace.fs.readFile(this.file);
      return bytes.byteLength > MAX_BYTES ? undefined : (JSON.parse(new TextDecoder().decode(bytes)) as unknown);
    } catch (e) {
      if (!(e instanceof vscode.FileSystemError && e.code === 'FileNotFound')) this.log.warn(`chat state: could not read ${this.file.fsPath}: ${errorMessage(e)}`);
      return undefined;
    }
  }

  /** Saves `state` after the saves before it, in order; a failure is logged, never thrown. */
  save(state: unknown): Promise<void> {
    const file = this.file;
    if (!file) return Promise.resolve();
    const text = JSON.stringify(state);
    if (text.length > MAX_BYTES) {
      this.log.warn(`chat state: not saved, ${text.length} bytes is over ${MAX_BYTES}`);
      return Promise.resolve();
    }
    this.writing = this.writing.then(async () => {
      const tmp = file.with({ path: `${file.path}.tmp` });
      try {
        await vscode.workspace.fs.createDirectory(vscode.Uri.joinPath(file, '..'));
        await vscode.workspace.fs.writeFile(tmp, new TextEncoder().encode(text));
        await vscode.workspace.fs.rename(tmp, file, { overwrite: true });
      } catch (e) {
        this.log.warn(`chat state: could not write ${file.fsPath}: ${errorMessage(e)}`);
      }
    });
    return this.writing;
  }
}
