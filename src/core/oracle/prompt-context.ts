/**
 * Token-budgeted context assembly (seed 002). Evidence goes in by priority tier:
 *
 *   1. selected: the entity the question is about (the definition of the symbol it names, the
 *      file and line it names);
 *   2. primary: the other ranked matches;
 *   3. conversation: subjects carried over from the session;
 *   4. neighbour: 1-hop neighbours (callers, importers) and linked notes' summaries;
 *
 * and the repository-map slice of the evidence's files is reserved up front whenever any code
 * was found. When the budget runs out, the bottom of that list is trimmed first: a lower tier
 * never displaces a higher one, and within a tier the better-ranked evidence stays.
 */
import type { Engine } from '../engine';
import type { AnalyzedQuestion, AssembledContext, ContextItem, ContextTier, QuestionType, RankedEvidence } from './types';

export type TokenCounter = (text: string) => number;

/** Context budgets by question type: a definition needs one snippet, a concept needs several. */
export const CONTEXT_BUDGETS: Readonly<Record<QuestionType, number>> = {
  definition: 2500,
  references: 3500,
  conceptual: 6000,
  behavioural: 5000,
  structural: 5000,
  history: 4000,
  report: 6000,
};

/** The share of the budget the repo-map slice may take, and its absolute cap. */
const MAP_SHARE = 0.15;
const MAP_MAX_TOKENS = 700;
/** Evidence considered at all: beyond this, ranks are noise. */
const MAX_EVIDENCE = 16;
/** A primary item is shortened rather than dropped when at least this many tokens remain. */
const MIN_PARTIAL_TOKENS = 80;

const TIER_ORDER: readonly ContextTier[] = ['selected', 'primary', 'conversation', 'neighbour'];

/** Which tier a piece of evidence belongs to. */
export function tierOf(e: RankedEvidence, q: AnalyzedQuestion): ContextTier {
  const r = e.result;
  if (e.ranks.graph !== undefined && Object.keys(e.ranks).length === 1) return 'neighbour';
  // A report's order is the locate path's (see leadEvidence); a definition it names is
  // already ranked there.
  if (r.metadata.definition === true && e.features.exactSymbol !== undefined && !(q.type === 'report' && q.report?.kind !== 'statement')) return 'selected';
  const named = q.paths.find((p) => r.path === p.path || r.path.endsWith(`/${p.path}`));
  if (named && (named.line === undefined || (r.startLine !== undefined && r.startLine <= named.line && named.line <= (r.endLine ?? r.startLine)))) return 'selected';
  return 'primary';
}

/** The text of one evidence item as the model (or the brief) sees it: header, then content. */
export function evidenceText(e: RankedEvidence): string {
  const r = e.result;
  const sym = typeof r.metadata.symbol === 'string' && r.metadata.symbol ? ` ${r.metadata.symbol}` : '';
  const kind = typeof r.metadata.kind === 'string' ? ` (${r.metadata.kind})` : '';
  const why = typeof r.metadata.why === 'string' ? ` — ${r.metadata.why}` : '';
  return `${r.citation}${sym}${kind}${why}\n${r.content.trimEnd()}`;
}

/**
 * The repository-map slice of the evidence: each evidence file (best first) with its
 * top-level definitions and their signatures, in line order, until `budget` tokens.
 */
export function repoMapSlice(engine: Engine, files: readonly string[], budget: number, count: TokenCounter): string {
  const lines: string[] = [];
  let used = 0;
  for (const path of files) {
    const file = engine.store.getFile(path);
    if (!file) continue;
    const syms = engine.store
      .symbolsOfFile(file.id)
      .filter((s) => !s.container && s.kind !== 'heading')
      .sort((a, b) => a.startLine - b.startLine)
      .slice(0, 12);
    if (syms.length === 0) continue;
    const block = [`${path}:`, ...syms.map((s) => `  L${s.startLine} ${s.signature.slice(0, 140)}`)].join('\n');
    const t = count(block);
    if (used + t > budget) {
      if (lines.length === 0 && budget > 20) lines.push(`${path}: (${syms.length} definitions)`);
      break;
    }
    lines.push(block);
    used += t;
  }
  return lines.join('\n');
}

export interface AssembleOptions {
  budget?: number;
  /** Subjects carried over from the session (its focus and recent questions), as one text. */
  conversation?: string;
  count: TokenCounter;
  engine?: Engine;
}

export function assembleContext(ranked: readonly RankedEvidence[], q: AnalyzedQuestion, opts: AssembleOptions): AssembledContext {
  const budget = opts.budget ?? CONTEXT_BUDGETS[q.type];
  const count = opts.count;
  const evidence = ranked.slice(0, MAX_EVIDENCE);

  const codeFiles = [...new Set(evidence.filter((e) => e.result.source === 'code' || e.result.source === 'lsp' || e.result.source === 'test').map((e) => e.result.path))];
  const repoMap = opts.engine && codeFiles.length > 0 ? repoMapSlice(opts.engine, codeFiles.slice(0, 6), Math.min(MAP_MAX_TOKENS, Math.floor(budget * MAP_SHARE)), count) : '';
  let used = repoMap ? count(repoMap) : 0;

  const candidates: ContextItem[] = evidence.map((e) => {
    const text = evidenceText(e);
    return { tier: tierOf(e, q), citation: e.result.citation, text, tokens: count(text), evidence: e };
  });
  if (opts.conversation?.trim()) {
    const text = `Earlier in this conversation:\n${opts.conversation.trim()}`;
    candidates.push({ tier: 'conversation', citation: '[conversation]', text, tokens: count(text) });
  }
  // Stable: within a tier, the reranked order stays.
  const ordered = TIER_ORDER.flatMap((tier) => candidates.filter((c) => c.tier === tier));

  const items: ContextItem[] = [];
  const dropped: AssembledContext['dropped'] = [];
  for (const c of ordered) {
    const left = budget - used;
    if (c.tokens <= left) {
      items.push(c);
      used += c.tokens;
    } else if ((c.tier === 'selected' || c.tier === 'primary') && left >= MIN_PARTIAL_TOKENS) {
      const cut = shorten(c.text, left, count);
      const tokens = count(cut);
      items.push({ ...c, text: cut, tokens });
      used += tokens;
    } else {
      dropped.push({ citation: c.citation, tier: c.tier, tokens: c.tokens });
    }
  }
  return { items, repoMap, tokens: used, budget, dropped };
}

/** Cuts a text at a line boundary so that it fits `tokens`, marking the cut. */
function shorten(text: string, tokens: number, count: TokenCounter): string {
  const lines = text.split('\n');
  let lo = 1;
  let hi = lines.length;
  // Binary search over the number of lines kept: token counts are monotone in it.
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (count(`${lines.slice(0, mid).join('\n')}\n…`) <= tokens) lo = mid;
    else hi = mid - 1;
  }
  return `${lines.slice(0, lo).join('\n')}\n…`;
}
