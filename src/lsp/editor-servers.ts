/**
 * The engine's LanguageServers port over the editor's live language servers: each call is a
 * `vlt/editor.*` request to the client, which asks its own providers (in VS Code,
 * `vscode.executeReferenceProvider` and friends) and says which extension answered. Like every
 * implementation of the port, a call never rejects and never outlives its timeout.
 *
 * Languages this server itself serves to the editor (the fallback languages) are not asked:
 * the editor would ask this server back, in a loop.
 */
import { CancellationTokenSource, type CancellationToken, type Location } from 'vscode-languageserver-protocol';
import type { Diagnostic, LanguageServerInfo, LanguageServers, LspAnswer, LspCallOptions, SourcePosition, SourceRange } from '../core/intel/lsp';
import type { LanguageId } from '../core/types';
import type { Coordinates } from './convert';
import { editorDefinitionRequest, editorDiagnosticsRequest, editorHoverRequest, editorReferencesRequest, type EditorAnswer } from '../protocol/lsp';
import { errorMessage } from '../core/errors';

export interface EditorServersOptions {
  /** Sends one request to the client (the connection's sendRequest). */
  connection: { sendRequest<R>(method: string, params: unknown, token?: CancellationToken): Promise<R> };
  coords: Coordinates;
  /** Languages not to ask the editor about (this server answers them itself). */
  fallback: ReadonlySet<string>;
  /** Per language: the name of the extension that serves it, for provenance. */
  names: Readonly<Record<string, string>>;
  /** Upper bound on one question to the editor, whatever the caller allows. */
  timeoutMs?: number;
}

const SEVERITIES: Diagnostic['severity'][] = ['error', 'error', 'warning', 'information', 'hint'];

export class EditorLanguageServers implements LanguageServers {
  private calls = 0;
  private failures = 0;

  constructor(private readonly opts: EditorServersOptions) {}

  serverFor(language: LanguageId): LanguageServerInfo | undefined {
    if (this.opts.fallback.has(language)) return undefined;
    return { name: this.nameOf(language), languages: [language], state: 'ready', detail: "the editor's language server, asked through the editor", restarts: 0 };
  }

  definition(pos: SourcePosition, opts: LspCallOptions): Promise<LspAnswer<SourceRange[]>> {
    return this.ask(pos.path, opts, (token) => this.opts.connection.sendRequest<EditorAnswer<Location[]>>(editorDefinitionRequest.method, this.params(pos), token), (v: Location[]) => v.map((l) => this.opts.coords.sourceRange(l)));
  }

  references(pos: SourcePosition, opts: LspCallOptions & { includeDeclaration: boolean }): Promise<LspAnswer<SourceRange[]>> {
    return this.ask(pos.path, opts, (token) => this.opts.connection.sendRequest<EditorAnswer<Location[]>>(editorReferencesRequest.method, { ...this.params(pos), includeDeclaration: opts.includeDeclaration }, token), (v: Location[]) => v.map((l) => this.opts.coords.sourceRange(l)));
  }

  hover(pos: SourcePosition, opts: LspCallOptions): Promise<LspAnswer<string | null>> {
    return this.ask(pos.path, opts, (token) => this.opts.connection.sendRequest<EditorAnswer<string | null>>(editorHoverRequest.method, this.params(pos), token), (v: string | null) => v);
  }

  diagnostics(filePath: string, opts: LspCallOptions): Promise<LspAnswer<Diagnostic[]>> {
    return this.ask(
      filePath,
      opts,
      (token) => this.opts.connection.sendRequest<EditorAnswer<Array<{ range: import('vscode-languageserver-protocol').Range; severity: number; message: string; code?: string; source?: string }>>>(editorDiagnosticsRequest.method, { uri: this.opts.coords.uri(filePath) }, token),
      (v) =>
        v.map((d) => ({
          range: this.opts.coords.sourceRange({ uri: this.opts.coords.uri(filePath), range: d.range }),
          severity: SEVERITIES[d.severity] ?? 'information',
          message: d.message,
          ...(d.code !== undefined ? { code: String(d.code) } : {}),
          ...(d.source !== undefined ? { source: d.source } : {}),
        })),
    );
  }

  status(): LanguageServerInfo[] {
    const names = [...new Set(Object.values(this.opts.names))];
    return names.map((name) => ({
      name,
      languages: Object.entries(this.opts.names)
        .filter(([, n]) => n === name)
        .map(([l]) => l as LanguageId),
      state: 'ready',
      detail: `in the editor; ${this.calls} calls, ${this.failures} without an answer`,
      restarts: 0,
    }));
  }

  async dispose(): Promise<void> {
    // The editor owns its servers.
  }

  private nameOf(language: string): string {
    return this.opts.names[language] ?? "the editor's language server";
  }

  private params(pos: SourcePosition) {
    return { uri: this.opts.coords.uri(pos.path), position: { line: pos.line - 1, character: pos.col - 1 } };
  }

  /** One request to the editor, bounded by the timeout and the caller's signal; every failure is an answer. */
  private async ask<W, T>(filePath: string, opts: LspCallOptions, send: (token: CancellationTokenSource['token']) => Promise<EditorAnswer<W>>, convert: (v: W) => T): Promise<LspAnswer<T>> {
    const t0 = performance.now();
    const ms = () => performance.now() - t0;
    this.calls++;
    const cancel = new CancellationTokenSource();
    const timeoutMs = Math.min(opts.timeoutMs, this.opts.timeoutMs ?? Infinity);
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => cancel.cancel();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const answer = await Promise.race([
        send(cancel.token).then((a) => ({ kind: 'answer' as const, a })),
        new Promise<{ kind: 'timeout' }>((resolve) => {
          timer = setTimeout(() => resolve({ kind: 'timeout' }), Math.max(0, timeoutMs));
        }),
      ]);
      if (answer.kind === 'timeout') {
        cancel.cancel();
        this.failures++;
        return { ok: false, failure: 'timeout', reason: `the editor did not answer within ${timeoutMs} ms`, ms: ms() };
      }
      const a = answer.a;
      if (!a.ok) {
        this.failures++;
        return { ok: false, failure: 'unavailable', reason: a.reason, ms: ms() };
      }
      return { ok: true, value: convert(a.value), server: a.server, ms: ms() };
    } catch (e) {
      this.failures++;
      return { ok: false, failure: opts.signal?.aborted ? 'timeout' : 'error', reason: `the editor failed to answer for ${filePath}: ${errorMessage(e)}`, ms: ms() };
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      cancel.dispose();
    }
  }
}
