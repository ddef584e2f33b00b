/**
 * Neighbour enrichment (seed 002, user story 2): the context for a question holds the notes
 * that matched in full, then a short summary of each note they link to, so that a model sees
 * how things relate without paying for every linked note's full text.
 *
 * Budget rule, in order: primary matches first, each whole when it fits and cut when it does
 * not; neighbours after them, whole summaries only, until the budget is spent. Neighbours are
 * therefore always the first to go. Links to notes that do not exist are never sources.
 * Budgets use the character estimate of tokens.ts (characters / 4): every section is measured
 * as it is added, and a primary match is cut at a character offset.
 */
import { charsForTokens, estimateTokens } from '../tokens';

/** A primary match cut shorter than this is not worth including. */
const MIN_PRIMARY_CHARS = 200;

export const DEFAULT_NOTE_CONTEXT_TOKENS = 4000;

export interface NoteContextOptions {
  /** Upper bound on the estimated tokens of the assembled text. */
  budgetTokens?: number;
}

export interface NoteContextPiece {
  path: string;
  title: string;
  /** The fused text for a primary match, the summary for a neighbour. */
  text: string;
}

export interface NoteContextSection extends NoteContextPiece {
  role: 'primary' | 'neighbour';
  /** The text was cut to fit the budget. */
  truncated?: true;
}

export interface NoteContext {
  /** The sections rendered as one Markdown text, primaries first. */
  text: string;
  sections: NoteContextSection[];
  /** Paths of the notes the text draws on, in order. Only existing notes. */
  sources: string[];
  /** Link targets of the primary matches that reach no note; kept out of {@link sources}. */
  dropped_links: string[];
  /** Something (a neighbour, or part of a primary) did not fit. */
  truncated: boolean;
  /** Estimated tokens of {@link text}. */
  tokens: number;
}

function header(s: NoteContextPiece, role: NoteContextSection['role']): string {
  return role === 'primary' ? `## ${s.title} (${s.path})\n` : `### Linked: ${s.title} (${s.path})\n`;
}

function render(section: NoteContextSection): string {
  return `${header(section, section.role)}${section.text.trim()}\n`;
}

export function assembleNoteContext(primaries: NoteContextPiece[], neighbours: NoteContextPiece[], droppedLinks: string[], opts: NoteContextOptions = {}): NoteContext {
  const budget = charsForTokens(Math.max(1, Math.floor(opts.budgetTokens ?? DEFAULT_NOTE_CONTEXT_TOKENS)));
  const sections: NoteContextSection[] = [];
  let used = 0;
  let truncated = false;
  // Sections are joined by one blank line.
  const cost = (text: string): number => text.length + (sections.length ? 1 : 0);

  for (const p of primaries) {
    const whole: NoteContextSection = { ...p, role: 'primary' };
    const c = cost(render(whole));
    if (used + c <= budget) {
      sections.push(whole);
      used += c;
      continue;
    }
    truncated = true;
    const room = budget - used - cost(header(p, 'primary')) - 2;
    if (room < MIN_PRIMARY_CHARS) continue;
    const cut: NoteContextSection = { ...p, role: 'primary', text: `${p.text.trim().slice(0, room - 1)}…`, truncated: true };
    sections.push(cut);
    used += cost(render(cut));
  }
  for (const n of neighbours) {
    if (!n.text.trim()) continue;
    const s: NoteContextSection = { ...n, role: 'neighbour' };
    const c = cost(render(s));
    if (used + c > budget) {
      truncated = true;
      continue;
    }
    sections.push(s);
    used += c;
  }
  const text = sections.map(render).join('\n');
  return {
    text,
    sections,
    sources: sections.map((s) => s.path),
    dropped_links: [...new Set(droppedLinks)],
    truncated,
    tokens: estimateTokens(text),
  };
}
