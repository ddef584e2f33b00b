/**
 * The chat's entry point, the same bundle in the VS Code view and the browser page: it picks
 * the bridge its host offers (`acquireVsCodeApi` exists only in a webview), then starts the UI.
 */
import DOMPurify from 'dompurify';
import type { Bridge } from './bridge';
import { httpBridge, sessionKey, signOut } from './http-bridge';
import { createMarkdownRenderer } from './markdown';
import { ChatView } from './view';
import { vscodeBridge } from './vscode-bridge';

declare const acquireVsCodeApi: undefined | (() => { postMessage(msg: unknown): void; getState(): unknown; setState(s: unknown): void });

const inEditor = typeof acquireVsCodeApi === 'function';
const bridge: Bridge = inEditor ? vscodeBridge(acquireVsCodeApi()) : httpBridge(`vlt-chat:${location.host}`);

if (!inEditor) {
  // Take the login page's key before anything else runs, so that it leaves the document at once.
  sessionKey();
  const button = document.getElementById('signout');
  button?.addEventListener('click', () => {
    signOut()
      .catch((e: unknown) => bridge.log('warn', `signing out: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => {
        document.body.textContent = 'Signed out. `vlt mcp info --chat-link` prints a new link to use the chat again.';
      });
  });
}

// Whatever the sanitizer missed, the Content-Security-Policy blocks; each block is counted
// (tests read the count) and logged, since it means something tried to run or load.
let violations = 0;
document.addEventListener('securitypolicyviolation', (e) => {
  violations++;
  document.body.dataset.cspViolations = String(violations);
  bridge.log('warn', `blocked by the Content-Security-Policy: ${e.violatedDirective} ${e.blockedURI}`);
});

const root = document.getElementById('app');
if (root) {
  new ChatView(bridge, createMarkdownRenderer(DOMPurify), root).start().catch((e: unknown) => {
    bridge.log('error', `the chat did not start: ${e instanceof Error ? e.message : String(e)}`);
    root.textContent = 'The chat did not start; see the Vlt Oracle log.';
  });
}
