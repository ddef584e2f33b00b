/**
 * The `diagnostics` path: for a question about what fails in a file ("why does service.ts not
 * compile?", "what's wrong with src/auth/tokens.ts?"), the diagnostics the file's language server
 * reports, each as exact evidence at its line: the severity, the message and the server's code,
 * then the lines it points at. The type checker has already answered such a question; search
 * would only find the words.
 */
import type { Engine } from '../engine';
import type { Diagnostic, LanguageServers } from '../intel/lsp';
import { codeCitation } from './retrievers';
import type { AnalyzedQuestion, RetrievalRequest, RetrievalResult, Retriever } from './types';

/** Words that ask what fails or is wrong. */
const FAILURE_WORDS = /\b(?:fail(?:s|ed|ing|ure)?|errors?|wrong|broken|breaks?|compil(?:e|es|ing|ation)|type[- ]?check(?:s|ing)?|warnings?|does(?:n'?t| not) (?:work|build|compile)|won'?t (?:build|compile)|red squiggl\w*)\b/i;
/** Files a question may name that are checked, and diagnostics kept per file. */
const FILES = 3;
const PER_FILE = 10;
/** Upper bound for one file's diagnostics, the server's start-up included. */
const TIMEOUT_MS = 5000;
/** Lines of code shown around a diagnostic's first line. */
const CONTEXT_LINES = 3;
const SEVERITY_SCORE: Record<Diagnostic['severity'], number> = { error: 2, warning: 1.5, information: 0.8, hint: 0.5 };

export class DiagnosticsRetriever implements Retriever {
  readonly name = 'diagnostics';
  readonly family = 'code';
  constructor(
    private readonly engine: Engine,
    private readonly lsp: LanguageServers | undefined,
  ) {}

  applies(q: AnalyzedQuestion): true | string {
    if (q.paths.length === 0) return 'the question names no file';
    if (!FAILURE_WORDS.test(q.text)) return 'only for questions about what fails or is wrong in a file';
    if (!this.lsp) return 'no language server can run here';
    return true;
  }

  async retrieve(req: RetrievalRequest): Promise<RetrievalResult[]> {
    const lsp = this.lsp;
    if (!lsp) return [];
    const out: RetrievalResult[] = [];
    for (const file of this.indexedFiles(req.question).slice(0, FILES)) {
      if (req.signal.aborted) break;
      const d = await lsp.diagnostics(file, { timeoutMs: TIMEOUT_MS, signal: req.signal });
      if (!d.ok) continue;
      const ranked = [...d.value].sort((a, b) => SEVERITY_SCORE[b.severity] - SEVERITY_SCORE[a.severity] || a.range.startLine - b.range.startLine);
      ranked.slice(0, PER_FILE).forEach((x, i) => out.push(this.evidence(file, x, d.server, i)));
    }
    return out;
  }

  /** The indexed files the question names, as workspace paths (a name may be a path's tail). */
  private indexedFiles(q: AnalyzedQuestion): string[] {
    const out: string[] = [];
    let all: string[] | undefined;
    for (const { path } of q.paths) {
      if (this.engine.store.getFile(path)) {
        out.push(path);
        continue;
      }
      all ??= this.engine.store.listFiles().map((f) => f.path);
      const matches = all.filter((p) => p.endsWith(`/${path}`));
      if (matches.length === 1) out.push(matches[0]!);
    }
    return [...new Set(out)];
  }

  private evidence(file: string, x: Diagnostic, server: string, rank: number): RetrievalResult {
    const line = x.range.startLine;
    const chunk = this.engine.chunkAround(file, line);
    const start = Math.max(chunk?.startLine ?? line, line - CONTEXT_LINES);
    const end = Math.min(chunk?.endLine ?? line, Math.max(line, x.range.endLine) + CONTEXT_LINES);
    const code = chunk ? chunk.text.split('\n').slice(start - chunk.startLine, end - chunk.startLine + 1).join('\n') : '';
    const head = `${x.severity}${x.code ? ` ${x.code}` : ''} (${x.source ?? server}) at line ${line}: ${x.message.split('\n')[0] ?? ''}`;
    return {
      key: `lsp:${file}:${line}:${rank}`,
      source: 'lsp',
      path: file,
      startLine: start,
      endLine: end,
      content: code ? `${head}\n${code}` : head,
      score: SEVERITY_SCORE[x.severity] / (1 + rank * 0.1),
      method: 'diagnostics',
      citation: codeCitation(file, line),
      metadata: { diagnostic: true, severity: x.severity, ...(x.code ? { code: x.code } : {}), line, exact: true, why: head },
    };
  }
}
