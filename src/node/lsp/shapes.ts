/**
 * The LSP result shapes the client reads, validated with zod: a server that answers with
 * anything else answers `error`, not a crash. And their conversion to what callers get
 * (locations, hover markdown).
 */
import { z } from 'zod';

const Position = z.object({ line: z.number().int().min(0), character: z.number().int().min(0) });
const Range = z.object({ start: Position, end: Position });
const Location = z.object({ uri: z.string(), range: Range });
const LocationLink = z.object({ targetUri: z.string(), targetRange: Range, targetSelectionRange: Range });
export const LocationsResult = z.union([z.null(), Location, z.array(z.union([Location, LocationLink]))]);
const MarkedString = z.union([z.string(), z.object({ language: z.string(), value: z.string() })]);
export const HoverResult = z.union([
  z.null(),
  z.object({ contents: z.union([MarkedString, z.object({ kind: z.string(), value: z.string() }), z.array(MarkedString)]) }),
]);
export const Diagnostic = z.object({
  range: Range,
  severity: z.number().int().min(1).max(4).nullish(),
  code: z.union([z.string(), z.number()]).nullish(),
  source: z.string().nullish(),
  message: z.string(),
});
export const DiagnosticReport = z.union([
  z.object({ kind: z.literal('full'), items: z.array(Diagnostic) }),
  z.object({ kind: z.literal('unchanged') }),
]);

export type LspPosition = z.infer<typeof Position>;
export type LspRange = z.infer<typeof Range>;
export type LspLocation = z.infer<typeof Location>;
export type LspDiagnostic = z.infer<typeof Diagnostic>;

export function toLocations(result: z.infer<typeof LocationsResult>): LspLocation[] {
  if (result === null) return [];
  const list = Array.isArray(result) ? result : [result];
  // A link's selection range is the name itself: the line an agent wants to read.
  return list.map((l) => ('targetUri' in l ? { uri: l.targetUri, range: l.targetSelectionRange } : l));
}

export function hoverMarkdown(result: z.infer<typeof HoverResult>): string | null {
  if (result === null) return null;
  const parts = Array.isArray(result.contents) ? result.contents : [result.contents];
  const text = parts
    .map((p) => (typeof p === 'string' ? p : 'language' in p ? `\`\`\`${p.language}\n${p.value}\n\`\`\`` : p.value))
    .filter((s) => s.trim() !== '')
    .join('\n\n');
  return text.trim() === '' ? null : text;
}
