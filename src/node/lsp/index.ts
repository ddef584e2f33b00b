/**
 * The language-server port (`src/core/intel/lsp.ts`) for headless hosts: language servers
 * spawned over stdio, one per server spec, each started on first use. This file converts
 * between the engine's positions (workspace-relative POSIX paths, 1-based lines and UTF-16
 * columns) and LSP's (URIs, 0-based), and picks the server for a file's language.
 */
import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import type {
  Diagnostic,
  LanguageServerInfo,
  LanguageServers,
  LspAnswer,
  LspCallOptions,
  SourcePosition,
  SourceRange,
} from '../../core/intel/lsp';
import { languageForPath } from '../../core/parse/languages';
import type { Logger } from '../../core/ports';
import type { LanguageId } from '../../core/types';
import { LspClient, uriToPath, type LspClientOptions } from './client';
import type { LspDiagnostic, LspLocation, LspPosition } from './shapes';
import { defaultServerSpecs, type ServerSpec } from './servers';

export { defaultServerSpecs, findExecutable, lspLanguageId, type ServerSpec } from './servers';

export interface LanguageServersOptions {
  /** The workspace root (absolute, or resolved against the current directory). */
  root: string;
  logger: Logger;
  /** The servers to use, in order of preference; defaults to {@link defaultServerSpecs}. */
  servers?: ServerSpec[];
  /** Bound on a server's start-up (initialize and its first burst of progress). Default 30 s. */
  readyTimeoutMs?: number;
  /** The user trusts the workspace: its own TypeScript and server programs may run (see servers.ts). */
  trusted?: boolean;
  /** Tuning for tests; see {@link LspClientOptions}. */
  client?: Pick<LspClientOptions, 'settleMs' | 'diagnosticsSettleMs' | 'maxOpenFiles' | 'restartLimit' | 'graceMs'>;
}

/** Language servers over stdio for a workspace. Nothing is spawned until a call needs it. */
export function createLanguageServers(opts: LanguageServersOptions): LanguageServers & { pids(): number[] } {
  return new StdioLanguageServers(opts);
}

class StdioLanguageServers implements LanguageServers {
  private readonly root: string;
  /** The root as the file system resolves it: servers often report real paths. */
  private readonly realRoot: string;
  private readonly clients: LspClient[];

  constructor(opts: LanguageServersOptions) {
    this.root = path.resolve(opts.root);
    this.realRoot = safeRealpath(this.root);
    const specs = opts.servers ?? defaultServerSpecs({ root: this.root, trusted: opts.trusted === true });
    this.clients = specs.map(
      (spec) => new LspClient({ ...opts.client, spec, root: this.root, logger: opts.logger, readyTimeoutMs: opts.readyTimeoutMs ?? 30_000 }),
    );
  }

  serverFor(language: LanguageId): LanguageServerInfo | undefined {
    return this.clientFor(language)?.info();
  }

  async definition(pos: SourcePosition, opts: LspCallOptions): Promise<LspAnswer<SourceRange[]>> {
    const target = this.target(pos);
    if ('failure' in target) return target.failure;
    const answer = await target.client.definition(target.file, target.position, opts);
    return mapAnswer(answer, (locations) => this.ranges(locations, false));
  }

  async references(pos: SourcePosition, opts: LspCallOptions & { includeDeclaration: boolean }): Promise<LspAnswer<SourceRange[]>> {
    const target = this.target(pos);
    if ('failure' in target) return target.failure;
    const answer = await target.client.references(target.file, target.position, opts.includeDeclaration, opts);
    return mapAnswer(answer, (locations) => this.ranges(locations, true));
  }

  async hover(pos: SourcePosition, opts: LspCallOptions): Promise<LspAnswer<string | null>> {
    const target = this.target(pos);
    if ('failure' in target) return target.failure;
    return target.client.hover(target.file, target.position, opts);
  }

  async diagnostics(file: string, opts: LspCallOptions): Promise<LspAnswer<Diagnostic[]>> {
    const target = this.target({ path: file, line: 1, col: 1 });
    if ('failure' in target) return target.failure;
    const answer = await target.client.diagnostics(target.file, opts);
    const rel = this.toWorkspacePath(target.file);
    return mapAnswer(answer, (items) => items.map((d) => toDiagnostic(d, rel)));
  }

  status(): LanguageServerInfo[] {
    return this.clients.map((c) => c.info());
  }

  /** Process ids of the servers running now (for leak checks in tests). */
  pids(): number[] {
    return this.clients.map((c) => c.pid).filter((p): p is number => p !== undefined);
  }

  async dispose(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.dispose()));
  }

  // -------------------------------------------------------------------------------------------

  /** The client and LSP position for an engine position, or the answer that says why not. */
  private target(pos: SourcePosition): { client: LspClient; file: string; position: LspPosition } | { failure: LspAnswer<never> } {
    const fail = (failure: 'unavailable' | 'error', reason: string, server?: string): { failure: LspAnswer<never> } => ({
      failure: { ok: false, failure, reason, ms: 0, ...(server ? { server } : {}) },
    });
    if (typeof pos.path !== 'string' || pos.path === '') return fail('error', 'no file given');
    if (!isPositiveInt(pos.line) || !isPositiveInt(pos.col)) {
      return fail('error', `invalid position ${pos.path}:${String(pos.line)}:${String(pos.col)} (lines and columns start at 1)`);
    }
    const language = languageForPath(pos.path);
    if (!language) return fail('unavailable', `no language is known for ${pos.path}`);
    const client = this.clientFor(language);
    if (!client) return fail('unavailable', `no language server is known for ${language}`);
    return {
      client,
      file: path.resolve(this.root, pos.path),
      position: { line: pos.line - 1, character: pos.col - 1 },
    };
  }

  /** The first server for the language that can run here, else the first one at all. */
  private clientFor(language: LanguageId): LspClient | undefined {
    const candidates = this.clients.filter((c) => c.languages.includes(language));
    return candidates.find((c) => c.info().state !== 'not-installed') ?? candidates[0];
  }

  /** Engine ranges, without duplicates; references sorted by file and position. */
  private ranges(locations: LspLocation[], sort: boolean): SourceRange[] {
    const seen = new Set<string>();
    const out: SourceRange[] = [];
    for (const l of locations) {
      const r = toRange(this.uriToWorkspacePath(l.uri), l.range);
      const key = `${r.path}\0${r.startLine}:${r.startCol}-${r.endLine}:${r.endCol}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(r);
    }
    if (sort) out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.startLine - b.startLine || a.startCol - b.startCol));
    return out;
  }

  private uriToWorkspacePath(uri: string): string {
    const file = uriToPath(uri);
    // Other schemes (a server's virtual documents) are kept as URIs: there is no file to read.
    return file ? this.toWorkspacePath(file) : uri;
  }

  /** Workspace-relative POSIX path when inside the root (as given or as resolved), else absolute. */
  private toWorkspacePath(file: string): string {
    for (const base of [this.root, this.realRoot]) {
      const rel = path.relative(base, file);
      if (rel === '') return '.';
      const outside = rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel);
      if (!outside) return rel.split(path.sep).join('/');
    }
    return file;
  }
}

function mapAnswer<A, B>(answer: LspAnswer<A>, f: (a: A) => B): LspAnswer<B> {
  return answer.ok ? { ...answer, value: f(answer.value) } : answer;
}

function toRange(file: string, r: LspLocation['range']): SourceRange {
  return { path: file, startLine: r.start.line + 1, startCol: r.start.character + 1, endLine: r.end.line + 1, endCol: r.end.character + 1 };
}

const SEVERITIES = ['error', 'warning', 'information', 'hint'] as const;

function toDiagnostic(d: LspDiagnostic, file: string): Diagnostic {
  return {
    range: toRange(file, d.range),
    // LSP leaves a missing severity to the client; editors show it as an error.
    severity: SEVERITIES[(d.severity ?? 1) - 1] ?? 'error',
    message: d.message,
    ...(d.code !== undefined && d.code !== null ? { code: String(d.code) } : {}),
    ...(d.source ? { source: d.source } : {}),
  };
}

function isPositiveInt(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1;
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
