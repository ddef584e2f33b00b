/**
 * What each agent tool answers, as a schema: MCP's `outputSchema`, which clients read to know
 * the shape of `structuredContent` and validate it. Each schema names the fields an agent
 * relies on, with a description where the name does not say enough. Objects are open
 * (`looseObject`): an answer may carry more than its schema names (explanations, provider
 * details), and a client that validates must not reject it for that.
 *
 * The tool definitions check their handler's result against these schemas when they compile
 * (`defineTool`), and MCP clients check every answer of the test suite at run time.
 */
import { z } from 'zod';

const line = z.number().int().describe('1-based line number.');
const cursor = z.string().describe('Present when more follows: pass it back as `cursor` (with the same other arguments) for the next page.');
const notes = z.array(z.string()).describe('What to know about the answer (e.g. a name nothing in the workspace defines).');

// ---- code ---------------------------------------------------------------------------------

const searchHit = z.looseObject({
  path: z.string().describe('Workspace-relative path.'),
  start_line: line,
  end_line: line,
  symbol: z.string().nullable().describe('The definition the hit stands for, when it has one.'),
  kind: z.string(),
  score: z.number().optional(),
  snippet: z.string().optional().describe('Up to 12 lines of the chunk, starting at snippet_line.'),
  first_line: z.string().optional().describe('With signatures_only: the first line of the snippet.'),
  snippet_line: line.optional(),
  stale_index: z.literal(true).optional().describe('The file changed since it was indexed; the snippet was read live.'),
  note: z.string().optional(),
});

export const searchCodeOutput = z.looseObject({
  hits: z.array(searchHit),
  next_cursor: cursor.optional(),
  truncated: z.boolean().describe('The token budget cut this answer: hits moved to the next page, or a snippet was shortened.'),
  notes: notes.optional(),
});

export const indexStatusOutput = z.looseObject({
  workspace: z.string(),
  files: z.number().int(),
  chunks: z.number().int(),
  symbols: z.number().int(),
  references: z.number().int(),
  languages: z.record(z.string(), z.number()).describe('Files per language.'),
  last_update: z.string().nullable(),
  vectors: z.looseObject({ enabled: z.boolean(), count: z.number().int() }),
  skipped_by_reason: z.record(z.string(), z.number()),
  skipped_dirs: z.array(z.looseObject({ path: z.string(), reason: z.string() })),
  skipped_dirs_total: z.number().int().optional().describe('How many folders were skipped in all, when skipped_dirs lists only the first ones.'),
});

const navLocation = z.looseObject({
  path: z.string(),
  line,
  col: z.number().int(),
  citation: z.string().describe('path:line, to cite.'),
  text: z.string().describe('The source line, read now.'),
  kind: z.string().optional(),
  signature: z.string().optional(),
  provenance: z.string().describe('Which provider found it: lsp, ctags, graph or search.'),
  exact: z.boolean().describe('True when a type-aware provider (a language server) answered.'),
  confidence: z.enum(['high', 'medium', 'low']),
});

export const navOutput = z.looseObject({
  query: z.string(),
  symbol: z.string(),
  locations: z.array(navLocation),
  definition: navLocation.optional().describe('find_references: the definition the uses are of.'),
  ambiguous: z.boolean().describe('Several definitions share the name; the locations may mix them.'),
  suggestions: z.array(z.string()).optional().describe('Close names, when nothing matched.'),
  notes,
  providers: z.array(z.looseObject({ provider: z.string(), status: z.enum(['answered', 'empty', 'skipped', 'failed']), reason: z.string().optional(), ms: z.number() })),
  truncated: z.boolean().optional(),
  total: z.number().int().optional().describe('find_references: every use found, on all pages.'),
  reason: z.looseObject({ code: z.string(), message: z.string() }).optional().describe('Why the answer is empty or partial.'),
  next_cursor: cursor.optional(),
});

export const diagnosticsOutput = z.looseObject({
  file: z.string(),
  server: z.string().describe('The language server that answered.'),
  diagnostics: z.array(
    z.looseObject({
      citation: z.string(),
      line,
      col: z.number().int(),
      end_line: line,
      end_col: z.number().int(),
      severity: z.string(),
      message: z.string(),
      code: z.string().optional(),
      source: z.string().optional(),
    }),
  ),
  hover: z.string().nullable().optional().describe('The hover text at line:col, when asked for; null when the server had none.'),
});

export const locateOutput = z.looseObject({
  files: z.array(
    z.looseObject({
      path: z.string(),
      line: line.optional(),
      score: z.number(),
      reasons: z.array(z.string()).describe('Why the file ranks here.'),
      channels: z.record(z.string(), z.number()).optional().describe('With explain: the score per kind of evidence.'),
      prior: z.number().optional().describe('With explain: the multiplier a test, doc or vendored file got.'),
    }),
  ),
  notes: notes.optional(),
  ms: z.number().optional(),
  timings: z.record(z.string(), z.number()).optional().describe("With explain: each channel's milliseconds."),
});

export const askOracleOutput = z.looseObject({
  question: z.string(),
  type: z.string().describe('What kind of question it was taken for.'),
  mode: z.enum(['llm', 'agent', 'extractive']),
  answer: z.string().describe('Markdown; every claim cites [path:line], [note:path], [thread:id#n] or [commit:hash].'),
  details: z.string().optional(),
  noContext: z.boolean().describe('Nothing relevant exists in this project: the answer says what was searched.'),
  citations: z.array(z.looseObject({ citation: z.string(), source: z.string(), path: z.string(), line: line.optional() })),
  files: z.array(z.string()).describe('The cited files, in order.'),
  degraded: z.string().optional().describe('What was unavailable (a model, a retrieval path) and how the answer was made instead.'),
  truncated: z.boolean(),
  next_cursor: cursor.optional(),
});

export const readFileRangeOutput = z.looseObject({
  path: z.string(),
  start_line: line,
  end_line: line,
  total_lines: z.number().int(),
  text: z.string().describe('The lines, each prefixed with its number.'),
  truncated: z.literal(true).optional().describe('max_tokens cut this read: lines moved to the next page, or a line was shortened.'),
  next_cursor: cursor.optional(),
});

export const repoMapOutput = z.looseObject({
  map: z.string().describe('"path:" lines, each followed by "L<line> <signature>" lines of its definitions.'),
  tokens: z.number().int(),
  truncated: z.boolean(),
  next_cursor: cursor.optional(),
});

// ---- the Context Oracle -------------------------------------------------------------------

const archNode = z.looseObject({ ref_id: z.string(), kind: z.string() });

/** A bundle, or (for a matching if_none_match) only its version, etag and not_modified. */
export const contextOutput = z.looseObject({
  version: z.literal(2),
  etag: z.string().describe('The bundle\'s version tag, for if_none_match.'),
  not_modified: z.literal(true).optional().describe('The bundle is the one if_none_match named; nothing else is sent.'),
  focus: z.looseObject({}).optional(),
  focus_nodes: z.array(z.looseObject({})).optional(),
  graph: z.looseObject({ nodes: z.array(archNode), edges: z.array(z.looseObject({})) }).optional(),
  text_chunks: z.array(z.looseObject({})).optional(),
  code_symbols: z.array(z.looseObject({})).optional(),
  sync_status: z.looseObject({ stale_docs: z.array(z.looseObject({})), last_reindex: z.string().nullable(), history: z.enum(['git', 'none']) }).optional(),
  constraints: z.array(z.looseObject({ rule: z.string(), description: z.string() })).optional(),
  routes: z.array(z.looseObject({})).optional(),
  tests: z.looseObject({}).nullable().optional(),
  warning: z.string().nullable().optional(),
});

export const impactOutput = z.looseObject({
  node: z.looseObject({ ref_id: z.string(), kind: z.string(), summary: z.string() }),
  upstream: z.array(z.looseObject({})),
  downstream: z.array(z.looseObject({})),
  impact: z.looseObject({}),
  depth: z.looseObject({ upstream: z.number().int(), downstream: z.number().int() }),
  truncated: z.looseObject({ upstream: z.boolean(), downstream: z.boolean() }),
});

export const routesOutput = z.looseObject({
  routes: z.array(z.looseObject({ method: z.string(), path: z.string(), handler: z.string(), file: z.string(), line, framework: z.string() })),
  total: z.number().int(),
});

export const graphOutput = z.looseObject({
  focus: z.array(z.string()).describe('The nodes the walk started from.'),
  nodes: z.array(archNode),
  edges: z.array(z.looseObject({ src: z.string(), dst: z.string(), kind: z.string() })),
  left_out: z.number().int().describe('Neighbours not shown because max_nodes was reached.'),
  mermaid: z.string().optional().describe('The same subgraph as a Mermaid flowchart.'),
});

export const searchGraphOutput = z.looseObject({
  nodes: z.array(z.looseObject({ ref_id: z.string(), kind: z.string(), summary: z.string(), score: z.number() })),
});

// ---- memory: notes ------------------------------------------------------------------------

const noteInfo = z.looseObject({ path: z.string(), title: z.string(), tags: z.array(z.string()), modified: z.string(), bytes: z.number().int(), read_only: z.boolean() });
const noteIssue = z.looseObject({ line, message: z.string() });

export const listNotesOutput = z.looseObject({ notes: z.array(noteInfo), total: z.number().int(), next_cursor: cursor.optional() });

/** Files a memory text names that were modified after it was written. */
const codeChanged = z
  .array(z.looseObject({ path: z.string(), changed_at: z.string() }))
  .optional()
  .describe('Files this text names (paths, or definitions one file holds) that changed after it was written: what it says about them may be out of date.');

export const readNoteOutput = z.looseObject({
  code_changed: codeChanged,
  path: z.string(),
  title: z.string(),
  tags: z.array(z.string()),
  frontmatter: z.record(z.string(), z.unknown()),
  content: z.string().describe('The Markdown text, cut to max_tokens when truncated.'),
  links: z.array(z.looseObject({ target: z.string() })),
  issues: z.array(noteIssue),
  truncated: z.boolean(),
});

export const writeNoteOutput = z.looseObject({ path: z.string(), created: z.boolean(), issues: z.array(noteIssue) });
export const deleteNoteOutput = z.looseObject({ path: z.string() });
export const searchNotesOutput = z.looseObject({ hits: z.array(z.looseObject({ path: z.string(), title: z.string(), score: z.number(), line, snippet: z.string(), tags: z.array(z.string()), code_changed: codeChanged })) });
export const backlinksOutput = z.looseObject({ note: z.string(), backlinks: z.array(z.looseObject({ path: z.string(), title: z.string(), line, context: z.string() })) });
export const tagsOutput = z.looseObject({ tags: z.array(z.looseObject({ tag: z.string(), count: z.number().int() })) });
export const moveNoteOutput = z.looseObject({
  from: z.string(),
  to: z.string(),
  rewritten: z.array(z.string()).describe('The notes whose links were rewritten.'),
  links_rewritten: z.number().int(),
  not_rewritten: z.array(z.looseObject({ path: z.string(), reason: z.string() })),
});
export const createIndexOutput = z.looseObject({ path: z.string(), notes: z.number().int(), created: z.boolean() });

// ---- memory: threads ----------------------------------------------------------------------

const threadEntry = z.looseObject({ id: z.number().int(), thread: z.string(), seq: z.number().int(), author: z.string(), text: z.string(), created_at: z.string(), code_changed: codeChanged });

export const threadPushOutput = z.looseObject({ thread: z.string(), id: z.number().int(), seq: z.number().int(), author: z.string(), created_at: z.string() });
export const threadReadOutput = z.looseObject({
  thread: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  entry_count: z.number().int(),
  summary: z.looseObject({ text: z.string(), kind: z.enum(['llm', 'extractive']) }),
  entries: z.array(threadEntry).describe('The latest entries, oldest first.'),
  entries_truncated: z.boolean(),
  summary_truncated: z.boolean().optional(),
});
export const threadSeekOutput = z.looseObject({ hits: z.array(z.looseObject({ thread: z.string(), id: z.number().int(), seq: z.number().int(), author: z.string(), created_at: z.string(), score: z.number(), text: z.string(), code_changed: codeChanged })) });
export const threadListOutput = z.looseObject({
  threads: z.array(z.looseObject({ thread: z.string(), entry_count: z.number().int(), created_at: z.string(), updated_at: z.string(), last_author: z.string(), summary: z.enum(['current', 'stale', 'none']) })),
  total: z.number().int(),
  truncated: z.boolean().optional(),
});

export const librarianOutput = z.looseObject({
  success: z.boolean().describe('It finished within its turns without a failure of the model.'),
  files_modified: z.array(z.string()).describe('Vault paths written, moved (both ends), rewritten or indexed, sorted.'),
  summary: z.string().describe("The Librarian's own report, or why it stopped."),
  turns: z.number().int(),
});
