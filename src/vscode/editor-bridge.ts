/**
 * Answers the server's `vlt/editor.*` requests with the editor's live language servers
 * (`vscode.executeDefinitionProvider` and friends), naming the extension that serves the
 * language, so that every answer the server gives carries its real provenance.
 */
import * as vscode from 'vscode';
import type { BaseLanguageClient } from 'vscode-languageclient';
import {
  editorDefinitionRequest,
  editorDiagnosticsRequest,
  editorDocumentSymbolsRequest,
  editorHoverRequest,
  editorReferencesRequest,
  type EditorAnswer,
} from '../protocol/lsp';
import { errorMessage } from './errors';

type LspLocation = { uri: string; range: { start: { line: number; character: number }; end: { line: number; character: number } } };

/** vlt's language ids → VS Code's. */
export const VSCODE_LANGUAGE_IDS: Readonly<Record<string, string[]>> = {
  typescript: ['typescript'],
  tsx: ['typescriptreact'],
  javascript: ['javascript', 'javascriptreact'],
  python: ['python'],
  go: ['go'],
  rust: ['rust'],
  java: ['java'],
  c: ['c'],
  cpp: ['cpp'],
  csharp: ['csharp'],
  ruby: ['ruby'],
  php: ['php'],
  swift: ['swift'],
  kotlin: ['kotlin'],
};

/**
 * Which installed extension serves each language, judged by what activates it: an extension
 * that declares `onLanguage:<id>` and contributes something beyond grammars is taken to
 * provide navigation for it (the built-in TypeScript features, the Go and Python extensions).
 * Languages with none are the ones the server answers itself (the fallback languages).
 */
export function languageProviders(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [vlt, ids] of Object.entries(VSCODE_LANGUAGE_IDS)) {
    for (const ext of vscode.extensions.all) {
      if (ext.id === 'vlt-oracle.vlt-oracle') continue;
      const pkg = ext.packageJSON as { activationEvents?: string[]; displayName?: string; name?: string; main?: string; browser?: string };
      if (!pkg.main && !pkg.browser) continue;
      if (ids.some((id) => pkg.activationEvents?.includes(`onLanguage:${id}`))) {
        out[vlt] = localized(pkg.displayName, ext) ?? pkg.name ?? ext.id;
        break;
      }
    }
  }
  return out;
}

function localized(name: string | undefined, ext: vscode.Extension<unknown>): string | undefined {
  // Built-in extensions name themselves `%displayName%`, resolved from their package.nls.json.
  if (!name || !/^%.*%$/.test(name)) return name;
  return ext.id;
}

const toLsp = (l: vscode.Location | vscode.LocationLink): LspLocation => {
  const uri = 'targetUri' in l ? l.targetUri : l.uri;
  const range = 'targetUri' in l ? (l.targetSelectionRange ?? l.targetRange) : l.range;
  return { uri: uri.toString(), range: { start: { line: range.start.line, character: range.start.character }, end: { line: range.end.line, character: range.end.character } } };
};

export function registerEditorBridge(client: BaseLanguageClient, names: () => Record<string, string>): vscode.Disposable[] {
  const nameFor = (doc: vscode.TextDocument): string => {
    const entry = Object.entries(VSCODE_LANGUAGE_IDS).find(([, ids]) => ids.includes(doc.languageId));
    return (entry && names()[entry[0]]) ?? `the ${doc.languageId} language server`;
  };
  /** Opens the document (language servers answer only for documents the editor knows) and asks. */
  const ask = async <T>(uri: string, fn: (doc: vscode.TextDocument) => Thenable<T>, present: (v: T, doc: vscode.TextDocument) => EditorAnswer<unknown>): Promise<EditorAnswer<unknown>> => {
    try {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
      return present(await fn(doc), doc);
    } catch (e) {
      return { ok: false, reason: errorMessage(e) };
    }
  };
  const pos = (p: { line: number; character: number }) => new vscode.Position(p.line, p.character);
  return [
    client.onRequest(editorDefinitionRequest.method, (p: { uri: string; position: { line: number; character: number } }) =>
      ask(
        p.uri,
        (doc) => vscode.commands.executeCommand<Array<vscode.Location | vscode.LocationLink>>('vscode.executeDefinitionProvider', doc.uri, pos(p.position)),
        (v, doc) => ({ ok: true, value: (v ?? []).map(toLsp), server: nameFor(doc) }),
      ),
    ),
    client.onRequest(editorReferencesRequest.method, (p: { uri: string; position: { line: number; character: number }; includeDeclaration: boolean }) =>
      ask(
        p.uri,
        (doc) => vscode.commands.executeCommand<vscode.Location[]>('vscode.executeReferenceProvider', doc.uri, pos(p.position)),
        (v, doc) => {
          let locs = (v ?? []).map(toLsp);
          if (!p.includeDeclaration) {
            // executeReferenceProvider always includes the declaration; leave out the asked position's own range.
            locs = locs.filter((l) => !(l.uri === doc.uri.toString() && l.range.start.line === p.position.line && l.range.start.character <= p.position.character && p.position.character <= l.range.end.character));
          }
          return { ok: true, value: locs, server: nameFor(doc) };
        },
      ),
    ),
    client.onRequest(editorHoverRequest.method, (p: { uri: string; position: { line: number; character: number } }) =>
      ask(
        p.uri,
        (doc) => vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, pos(p.position)),
        (v, doc) => {
          const text = (v ?? []).flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n\n');
          return { ok: true, value: text || null, server: nameFor(doc) };
        },
      ),
    ),
    client.onRequest(editorDocumentSymbolsRequest.method, (p: { uri: string }) =>
      ask(
        p.uri,
        (doc) => vscode.commands.executeCommand<Array<vscode.DocumentSymbol | vscode.SymbolInformation>>('vscode.executeDocumentSymbolProvider', doc.uri),
        (v, doc) => ({
          ok: true,
          value: (v ?? []).map((s) => {
            const range = 'location' in s ? s.location.range : s.range;
            return { name: s.name, kind: s.kind, range: { start: { line: range.start.line, character: range.start.character }, end: { line: range.end.line, character: range.end.character } }, ...('containerName' in s && s.containerName ? { containerName: s.containerName } : {}) };
          }),
          server: nameFor(doc),
        }),
      ),
    ),
    client.onRequest(editorDiagnosticsRequest.method, async (p: { uri: string }) => {
      const uri = vscode.Uri.parse(p.uri);
      const doc = await vscode.workspace.openTextDocument(uri).then(
        (d) => d,
        () => undefined,
      );
      if (!doc) return { ok: false, reason: `cannot open ${uri.fsPath}` };
      const value = vscode.languages.getDiagnostics(uri).map((d) => ({
        range: { start: { line: d.range.start.line, character: d.range.start.character }, end: { line: d.range.end.line, character: d.range.end.character } },
        severity: d.severity + 1,
        message: d.message,
        ...(d.code !== undefined ? { code: String(typeof d.code === 'object' ? d.code.value : d.code) } : {}),
        ...(d.source ? { source: d.source } : {}),
      }));
      return { ok: true, value, server: nameFor(doc) } satisfies EditorAnswer<unknown>;
    }),
  ];
}
