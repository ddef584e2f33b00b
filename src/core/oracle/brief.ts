/**
 * The extractive evidence brief: the oracle's answer without a language model, and its
 * fallback when the model fails. It leads with the few places that answer the question, each
 * with what it is and an excerpt at the lines that matched; the rest of the evidence follows as
 * one line each, then the callers and importers around it. How the answer was found (the
 * question's type, the repository-map slice of the evidence files, what was searched and what
 * was not) is apart, in the answer's `details`, which each surface shows folded or after it.
 */
import type { AnalyzedQuestion, AssembledContext, ContextItem, RetrieverRun } from './types';

/** Snippet lines shown per evidence item; the citation says where to read on. */
const SNIPPET_LINES = 10;
/** Evidence items shown with their excerpt; the rest are listed one line each. */
export const LEAD_ITEMS = 3;
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

/** What each retrieval path is, in words. */
const PATH_NAMES: Record<string, string> = {
  code: 'code search',
  scoped: 'the folder the question names',
  navigation: 'definitions and references',
  tests: 'tests',
  locate: 'the files a report points at',
  diagnostics: "the language server's diagnostics",
  structure: 'the folder structure',
  notes: 'notes',
  threads: 'development threads',
  graph: 'callers and importers',
  git: 'git history',
};

/** What was searched and what was not, in words: the details' last part. */
function searchedInWords(runs: readonly RetrieverRun[]): string[] {
  const name = (r: RetrieverRun) => PATH_NAMES[r.name] ?? r.name;
  const searched = runs.filter((r) => r.status === 'ok').map((r) => `${name(r)} (${r.results.length} found, ${r.ms.toFixed(0)} ms)`);
  const failed = runs.filter((r) => r.status === 'failed' || r.status === 'timeout').map((r) => `${name(r)} ${r.status === 'timeout' ? 'timed out' : 'failed'}${r.reason ? ` (${r.reason})` : ''}`);
  const skipped = runs.filter((r) => r.status === 'skipped').map((r) => `${name(r)}${r.reason ? `: ${r.reason}` : ''}`);
  const out: string[] = [];
  if (searched.length) out.push(`Searched: ${searched.join(', ')}.`);
  if (failed.length) out.push(`Did not answer: ${failed.join('; ')}.`);
  if (skipped.length) out.push(`Not searched: ${skipped.join('; ')}.`);
  return out;
}

export interface BriefInput {
  question: AnalyzedQuestion;
  context: AssembledContext;
  runs: readonly RetrieverRun[];
  /** Why this is a brief and not a synthesised answer, when a model was configured. */
  degraded?: string;
}

export interface Brief {
  /** Markdown: the places that answer, then the rest of the evidence and what surrounds it. */
  answer: string;
  /** Markdown: the question's type, the repository-map slice, what was left out and what was searched. */
  details: string;
}

export function extractiveBrief(input: BriefInput): Brief {
  const { question: q, context } = input;
  const out: string[] = [];
  out.push(`**Evidence brief** (no language model${input.degraded ? `: ${input.degraded}` : ' configured'})`);
  if (q.symbols.length) out.push(`Symbols asked about: ${q.symbols.map((s) => `\`${s}\``).join(', ')}`);
  const main = context.items.filter((i) => i.tier === 'selected' || i.tier === 'primary');
  const neighbours = context.items.filter((i) => i.tier === 'neighbour');
  out.push('');
  if (main.length === 0) out.push('No direct matches.');
  const lead = main.slice(0, LEAD_ITEMS);
  lead.forEach((item, i) => {
    out.push(`${i + 1}. ${describe(item)}${item.tier === 'selected' ? ' **(the subject)**' : ''}`);
    const s = snippet(item, `${i + 1}. `.length);
    if (s) out.push(s);
  });
  const more = main.slice(LEAD_ITEMS);
  if (more.length) {
    out.push('', '**More evidence**:');
    for (const item of more) out.push(`- ${describe(item)}`);
  }
  if (neighbours.length) {
    out.push('', '**Related** (callers, importers, linked notes):');
    for (const item of neighbours) out.push(`- ${describe(item)}`);
  }
  const details: string[] = [`Question type: **${q.type}** (${q.typeReason}).`];
  if (context.repoMap) details.push('', '**Where this sits** (repository map of the evidence files):', '```', context.repoMap, '```');
  if (context.dropped.length) details.push('', `Left out for the ${context.budget}-token budget: ${context.dropped.map((d) => d.citation).join(', ')}`);
  details.push('', ...searchedInWords(input.runs));
  return { answer: out.join('\n'), details: details.join('\n') };
}
