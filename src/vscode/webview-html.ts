/**
 * The one way this extension fills a webview: scripts only from its own bundle with a fresh
 * nonce, styles only from `media/`, nothing remote (`default-src 'none'`, no connections, no
 * forms), and resources limited to `media/` and `dist/`. Views hand in their script, their
 * stylesheet and the static body their script starts from.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

export interface WebviewPage {
  title: string;
  /** A file of dist/ (the view's bundle). */
  script: string;
  /** A file of media/. */
  style: string;
  /** Static markup the script starts from; never model or repository text. */
  body: string;
}

export function fillWebview(webview: vscode.Webview, extensionUri: vscode.Uri, page: WebviewPage): void {
  webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media'), vscode.Uri.joinPath(extensionUri, 'dist')] };
  const nonce = randomBytes(16).toString('base64');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', page.script));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', page.style));
  // No remote loads of any kind: an answer is model output over repository text, and an image
  // or stylesheet URL in it would be a way to send what the model read elsewhere.
  const csp = `default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}'; img-src ${webview.cspSource}; font-src ${webview.cspSource}; connect-src 'none'; form-action 'none'; base-uri 'none';`;
  webview.html = `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}"><title>${page.title}</title></head>
<body>${page.body}<script nonce="${nonce}" src="${script}"></script></body></html>`;
}
