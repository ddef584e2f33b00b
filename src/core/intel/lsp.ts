/**
 * The language-server port: what the code-intelligence chain needs from a language server,
 * and nothing about how one is reached. The Node hosts implement it by spawning servers over
 * stdio (`src/node/lsp`); the VS Code host implements it over the editor's live servers.
 *
 * Positions here are the engine's: workspace-relative POSIX paths, 1-based lines and 1-based
 * columns counted in UTF-16 code units (what LSP counts, plus one). Implementations convert.
 */
import type { LanguageId } from '../types';

export interface SourcePosition {
  /** Workspace-relative POSIX path. */
  path: string;
  line: number;
  col: number;
}

export interface SourceRange {
  /** Workspace-relative POSIX path; a location outside the workspace keeps its absolute path. */
  path: string;
  startLine: number;
  startCol: number;
  endLine: number;
  endCol: number;
}

export interface Diagnostic {
  range: SourceRange;
  severity: 'error' | 'warning' | 'information' | 'hint';
  message: string;
  /** The server's code for the diagnostic (e.g. `2322` for tsserver), as a string. */
  code?: string;
  /** Who produced it, as the server says (`typescript`, `Pyright`). */
  source?: string;
}

/**
 * Why an answer did not come from the server. `not-ready`: the server is still starting or
 * indexing and did not answer within the bound; `unavailable`: no server for the language on
 * this machine, or it failed to start; `timeout`: it accepted the request but did not answer
 * in time; `crashed`: it exited during the request (it is restarted for the next one);
 * `error`: it answered with an error or with something that is not a valid answer.
 */
export type LspFailure = 'not-ready' | 'unavailable' | 'timeout' | 'crashed' | 'error';

export type LspAnswer<T> =
  | { ok: true; value: T; server: string; ms: number }
  | { ok: false; failure: LspFailure; reason: string; server?: string; ms: number };

export interface LspCallOptions {
  /** Upper bound for the whole call, readiness wait included. Never exceeded. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface LanguageServerInfo {
  /** e.g. `typescript-language-server`, `pyright`, `gopls`, `clangd`. */
  name: string;
  languages: LanguageId[];
  state: 'not-installed' | 'stopped' | 'starting' | 'ready' | 'crashed';
  /** The command that runs it, or why it cannot run. */
  detail: string;
  restarts: number;
  /**
   * Whether the server has answered a references request since it (re)started. The first one
   * loads (type-checks) every package that could hold a use, which on a large workspace takes
   * longer than a timeout (gopls on the Go standard library); false until then. Undefined when
   * the source cannot tell (the editor's servers, usually long running).
   */
  warm?: boolean;
}

/**
 * Language servers, one per language family, started lazily on first use. Every method
 * resolves (never rejects, never hangs past `timeoutMs`): a failure is an answer with
 * `ok: false` and a reason the caller reports as provenance.
 */
export interface LanguageServers {
  /** The server that would answer for a language, or undefined when none is known. */
  serverFor(language: LanguageId): LanguageServerInfo | undefined;
  definition(pos: SourcePosition, opts: LspCallOptions): Promise<LspAnswer<SourceRange[]>>;
  references(pos: SourcePosition, opts: LspCallOptions & { includeDeclaration: boolean }): Promise<LspAnswer<SourceRange[]>>;
  /** Markdown or plain text the server shows on hover; null when it has nothing. */
  hover(pos: SourcePosition, opts: LspCallOptions): Promise<LspAnswer<string | null>>;
  /** Diagnostics for one file, after the server has checked it. */
  diagnostics(path: string, opts: LspCallOptions): Promise<LspAnswer<Diagnostic[]>>;
  /** Every server's state, for `--explain` and status. */
  status(): LanguageServerInfo[];
  /** Stops every server started; safe to call twice. */
  dispose(): Promise<void>;
}

/**
 * Several sources of language servers as one, tried in order: the editor's live servers first,
 * then the ones a host spawns itself. A call goes to the first source that knows a server for
 * the file's language; when it fails or answers nothing, the next one is asked, within what is
 * left of the same timeout. The answer names the server that gave it.
 */
export function chainLanguageServers(from: readonly LanguageServers[] | (() => readonly LanguageServers[]), languageOf: (path: string) => LanguageId | undefined): LanguageServers {
  // A function: the sources are read at each call (editors attach to a shared server and leave).
  const list = typeof from === 'function' ? from : () => from;
  const usable = (language: LanguageId | undefined) =>
    language === undefined ? [] : list().filter((s) => {
      const info = s.serverFor(language);
      return info !== undefined && info.state !== 'not-installed';
    });
  async function first<T>(path: string, opts: LspCallOptions, call: (s: LanguageServers, o: LspCallOptions) => Promise<LspAnswer<T>>, empty: (v: T) => boolean): Promise<LspAnswer<T>> {
    const t0 = Date.now();
    let last: LspAnswer<T> | undefined;
    for (const s of usable(languageOf(path))) {
      const left = opts.timeoutMs - (Date.now() - t0);
      if (left <= 0) break;
      const a = await call(s, { ...opts, timeoutMs: left });
      if (a.ok && !empty(a.value)) return { ...a, ms: Date.now() - t0 };
      last = a;
    }
    return last ? { ...last, ms: Date.now() - t0 } : { ok: false, failure: 'unavailable', reason: 'no language server for this file', ms: Date.now() - t0 };
  }
  return {
    serverFor(language) {
      const infos = usable(language).map((s) => s.serverFor(language)!);
      if (infos.length === 0) return list().map((s) => s.serverFor(language)).find((i) => i !== undefined);
      return infos.length === 1 ? infos[0] : { ...infos[0]!, name: infos.map((i) => i.name).join(', then ') };
    },
    definition: (pos, opts) => first(pos.path, opts, (s, o) => s.definition(pos, o), (v) => v.length === 0),
    references: (pos, opts) => first(pos.path, opts, (s, o) => s.references(pos, { ...o, includeDeclaration: opts.includeDeclaration }), (v) => v.length === 0),
    hover: (pos, opts) => first(pos.path, opts, (s, o) => s.hover(pos, o), (v) => v === null),
    diagnostics: (path, opts) => first(path, opts, (s, o) => s.diagnostics(path, o), () => false),
    status: () => list().flatMap((s) => s.status()),
    dispose: async () => {
      await Promise.all(list().map((s) => s.dispose()));
    },
  };
}
