/**
 * The `locate` path: for a question that is a bug report (a traceback, an error message, "it
 * crashes when…"), the files the locate mode ranks for it (src/core/locate/locate.ts), each as
 * the chunk around its strongest evidence: the frame, the raising line, the definition named.
 * Search ranks chunks; a report is better served by the file that holds the behaviour.
 */
import type { Engine } from '../engine';
import { locatorFor, type LocateHistory } from '../locate/locate';
import { parseReport } from '../locate/report';
import { codeCitation } from './retrievers';
import { isTestPath } from './paths';
import type { AnalyzedQuestion, RetrievalRequest, RetrievalResult, Retriever } from './types';

/** Words that make a question a bug report. */
const REPORT_WORDS = /\b(?:traceback|stack ?trace|exception|errors?|crash(?:es|ed|ing)?|fails?|failing|failure|panics?|bug|broken|regression|throws|raises|TypeError|ValueError|KeyError|AttributeError|NullPointerException)\b/i;
/** Lines of the evidence's chunk given, from the evidence line on. */
const CONTENT_LINES = 14;
/** Files asked of the locate mode. */
const FILES = 6;

export function looksLikeBugReport(text: string): boolean {
  return REPORT_WORDS.test(text) || parseReport(text).frames.length > 0;
}

export class LocateRetriever implements Retriever {
  readonly name = 'locate';
  readonly family = 'code';
  constructor(
    private readonly engine: Engine,
    private readonly history?: () => Promise<LocateHistory | undefined>,
  ) {}

  applies(q: AnalyzedQuestion): true | string {
    return q.type === 'report' || looksLikeBugReport(q.text) ? true : 'only for reports (an issue, a change description, a traceback or an error message)';
  }

  async retrieve(req: RetrievalRequest): Promise<RetrievalResult[]> {
    const history = await this.history?.().catch(() => undefined);
    const res = await locatorFor(this.engine).locate(req.question.text, { k: Math.min(FILES, req.limit), signal: req.signal, ...(history ? { history } : {}) });
    const out: RetrievalResult[] = [];
    for (const f of res.files) {
      const chunk = this.engine.chunkAround(f.path, f.line ?? 1);
      if (!chunk) continue;
      const lines = chunk.text.split('\n');
      const from = f.line !== undefined ? Math.max(chunk.startLine, Math.min(f.line - 2, chunk.endLine)) : chunk.startLine;
      const shown = lines.slice(from - chunk.startLine, from - chunk.startLine + CONTENT_LINES);
      const to = from + shown.length - 1;
      out.push({
        key: `code:${f.path}:${from}-${to}`,
        source: isTestPath(f.path) ? 'test' : 'code',
        path: f.path,
        startLine: from,
        endLine: to,
        content: shown.join('\n'),
        score: f.score,
        method: 'locate',
        citation: codeCitation(f.path, from, to),
        contentHash: chunk.contentHash,
        metadata: { symbol: chunk.symbol, kind: chunk.kind, reasons: f.reasons },
      });
    }
    return out;
  }
}
