/**
 * The extractive evidence brief: the oracle's answer without a language model, and its
 * fallback when the model fails. It states the question type, lists the ranked evidence with
 * snippets and citations, and ends with the repository-map slice and what was searched, so an
 * agent reading it can act on it directly.
 */
import type { AnalyzedQuestion, AssembledContext, ContextItem, RetrieverRun } from './types';

/** Snippet lines shown per evidence item; the citation says where to read on. */
const SNIPPET_LINES = 10;
const LANGUAGE_OF_EXT: Record<string, string> = { go: 'go', py: 'python', ts: 'ts', tsx: 'tsx', js: 'js', mjs: 'js', rs: 'rust', java: 'java', md: 'markdown', rb: 'ruby', c: 'c', h: 'c', cc: 'cpp', cpp: 'cpp' };

function fence(path: string): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase() ?? '';
  return LANGUAGE_OF_EXT[ext] ?? '';
}

function describe(item: ContextItem): string {
  const e = item.evidence;
  if (!e) return item.citation;
  const r = e.result;
  const parts = [r.citation];
  if (typeof r.metadata.symbol === 'string' && r.metadata.symbol) parts.push(`\`${r.metadata.symbol}\``);
  if (typeof r.metadata.kind === 'string' && r.metadata.kind !== 'block') parts.push(`(${r.metadata.kind})`);
  const how = [...new Set(Object.keys(e.ranks))].join(', ');
  const exact = r.source === 'lsp' ? 'exact, language server' : r.metadata.exact === true ? 'exact' : '';
  const why = typeof r.metadata.why === 'string' ? r.metadata.why : '';
  return `${parts.join(' ')} — ${[exact, `found by ${how}`, why].filter(Boolean).join('; ')}`;
}

/**
 * An item's excerpt as the content of its list item: every line indented by the item marker's
 * width (`1. ` is 3, `10. ` is 4, or the line would end the item and restart the numbering),
 * the truncation mark inside the block, and a fence longer than any backtick run in the code.
 */
function snippet(item: ContextItem, indent: number): string {
  const e = item.evidence;
  if (!e) return '';
  const r = e.result;
  const pad = ' '.repeat(indent);
  // The item text starts with its header line; the rest is the content as budgeted.
  const body = item.text.split('\n').slice(1);
  const shown = body.slice(0, SNIPPET_LINES);
  if (body.length > SNIPPET_LINES) shown.push('…');
  if (r.source === 'note' || r.source === 'thread' || r.source === 'git') return shown.map((l) => `${pad}> ${l}`).join('\n');
  const longestRun = Math.max(0, ...shown.map((l) => Math.max(0, ...(l.match(/`+/g) ?? []).map((m) => m.length))));
  const ticks = '`'.repeat(Math.max(3, longestRun + 1));
  return `${pad}${ticks}${fence(r.path)}\n${shown.map((l) => `${pad}${l}`).join('\n')}\n${pad}${ticks}`;
}

export function searchedSummary(runs: readonly RetrieverRun[]): string[] {
  return runs.map((r) => {
    if (r.status === 'ok') return `${r.name}: ${r.results.length} result${r.results.length === 1 ? '' : 's'} (${r.ms.toFixed(0)} ms)`;
    return `${r.name}: ${r.status}${r.reason ? ` (${r.reason})` : ''}`;
  });
}

export interface BriefInput {
  question: AnalyzedQuestion;
  context: AssembledContext;
  runs: readonly RetrieverRun[];
  /** Why this is a brief and not a synthesised answer, when a model was configured. */
  degraded?: string;
}

export function extractiveBrief(input: BriefInput): string {
  const { question: q, context } = input;
  const out: string[] = [];
  out.push(`**Evidence brief** (no language model${input.degraded ? `: ${input.degraded}` : ' configured'}) · question type: **${q.type}** (${q.typeReason})`);
  if (q.symbols.length) out.push(`Symbols asked about: ${q.symbols.map((s) => `\`${s}\``).join(', ')}`);
  const main = context.items.filter((i) => i.tier === 'selected' || i.tier === 'primary');
  const neighbours = context.items.filter((i) => i.tier === 'neighbour');
  out.push('');
  if (main.length === 0) out.push('No direct matches.');
  main.forEach((item, i) => {
    out.push(`${i + 1}. ${describe(item)}${item.tier === 'selected' ? ' **(the subject)**' : ''}`);
    const s = snippet(item, `${i + 1}. `.length);
    if (s) out.push(s);
  });
  if (neighbours.length) {
    out.push('', '**Related** (callers, importers, linked notes):');
    for (const item of neighbours) out.push(`- ${describe(item)}`);
  }
  if (context.repoMap) out.push('', '**Where this sits** (repository map of the evidence files):', '```', context.repoMap, '```');
  if (context.dropped.length) out.push('', `Left out for the ${context.budget}-token budget: ${context.dropped.map((d) => d.citation).join(', ')}`);
  out.push('', `Searched: ${searchedSummary(input.runs).join('; ')}.`);
  return out.join('\n');
}
