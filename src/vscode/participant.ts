/**
 * `@oracle` in VS Code's own chat: the same pipeline as the chat view (`vlt/ask` on the
 * folder's server, in the shared session), answering with streamed markdown, progress steps,
 * and anchors for the cited locations, written by the model picked in VS Code's chat (through
 * the server's `vlt/editor.chat`). `/where` asks where a symbol is used, `/why` why code
 * changed, `/map` shows the repository map. Cancelling the chat request cancels the question on
 * the server.
 */
import * as vscode from 'vscode';
import { askRequest, repoMapRequest, type AskEvent } from '../protocol/lsp';
import type { FolderServer } from './server-client';
import { errorMessage } from './errors';

export const PARTICIPANT_ID = 'vlt.oracle';

/** What the participant sends as the question for a command (the prompt as written otherwise). */
export function questionFor(command: string | undefined, prompt: string): string {
  const p = prompt.trim();
  if (command === 'where') return /\?$/.test(p) || /\bwhere\b/i.test(p) ? p : `Where is ${p} used?`;
  if (command === 'why') return /\?$/.test(p) || /\bwhy\b/i.test(p) ? p : `Why did ${p} change?`;
  return p;
}

function progressLabel(e: AskEvent): string | undefined {
  if (e.type === 'step' && e.state === 'running') return e.family === 'code' ? (e.name === 'navigation' ? 'Asking the language servers…' : 'Searching code…') : e.family === 'notes' ? 'Reading notes…' : e.family === 'threads' ? 'Reading threads…' : 'Reading git history…';
  if (e.type === 'phase' && (e.phase === 'synthesize' || e.phase === 'agent')) return 'Writing the answer…';
  if (e.type === 'tool') return `Calling ${e.name}…`;
  return undefined;
}

export function registerChatParticipant(extensionUri: vscode.Uri, serverFor: (uri?: vscode.Uri) => FolderServer, log: vscode.LogOutputChannel): vscode.Disposable[] {
  // Older hosts (and hosts without a chat) have no participant API: the view still works.
  if (typeof vscode.chat?.createChatParticipant !== 'function') {
    log.info('@oracle: this VS Code has no chat participant API');
    return [];
  }
  let seq = 0;
  const handler: vscode.ChatRequestHandler = async (request, _context, stream, token) => {
    const server = serverFor(vscode.window.activeTextEditor?.document.uri);
    if (request.command === 'map') {
      stream.progress('Ranking the repository…');
      const map = await server.client.sendRequest(repoMapRequest, { tokens: 1500 }, token);
      stream.markdown(`\`\`\`text\n${map.text}\n\`\`\``);
      return {};
    }
    const question = questionFor(request.command, request.prompt);
    if (!question) {
      stream.markdown('Ask a question about this codebase, for example `@oracle how does authentication work?` or `@oracle /where UserService`.');
      return {};
    }
    const askId = `participant-${Date.now()}-${++seq}`;
    let streamed = '';
    const sub = server.onAskEvent(askId, (e) => {
      if (e.type === 'text') {
        streamed += e.text;
        stream.markdown(e.text);
      } else {
        const label = progressLabel(e);
        if (label) stream.progress(label);
      }
    });
    try {
      // The model picked in VS Code's chat writes the answer (a restricted server uses none).
      const model = request.model && !server.status?.restricted ? { model: `editor:${request.model.id}` } : {};
      const ans = await server.client.sendRequest(askRequest, { question, askId, ...model, ...(request.command === 'why' ? { sources: ['git', 'threads', 'notes', 'code'] } : {}) }, token);
      // The model's text was streamed; the evidence brief (no model, or a degraded answer) comes whole.
      if (ans.answer !== streamed) stream.markdown(streamed ? `\n\n---\n${ans.degraded ? `*${ans.degraded}*\n\n` : ''}${ans.answer}` : ans.answer);
      // The cited locations: inline anchors (ChatResponseAnchorPart) under the answer, and the
      // response's reference list.
      const code = ans.citations.filter((c) => c.source === 'code' || c.source === 'test' || c.source === 'lsp').slice(0, 20);
      if (code.length) stream.markdown('\n\nSources: ');
      for (const [i, c] of code.entries()) {
        const uri = vscode.Uri.joinPath(server.folder.uri, c.path);
        const location = new vscode.Location(uri, new vscode.Position(Math.max(0, (c.line ?? 1) - 1), 0));
        if (i > 0) stream.markdown(' · ');
        stream.anchor(location, c.citation);
        stream.reference(location);
      }
      return { metadata: { session: ans.session, mode: ans.mode } };
    } catch (e) {
      const message = errorMessage(e);
      if (token.isCancellationRequested) return {};
      log.error(`@oracle: ${message}`);
      return { errorDetails: { message: message.replace(/^[A-Z_]+: /, '') } };
    } finally {
      sub.dispose();
    }
  };
  const participant = vscode.chat.createChatParticipant(PARTICIPANT_ID, handler);
  participant.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'icon.svg');
  log.info('@oracle: registered in VS Code chat');
  return [participant];
}
