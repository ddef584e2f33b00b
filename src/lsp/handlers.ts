/**
 * What `vlt lsp` answers, one handler per request or notification, registered from one table
 * ({@link HANDLERS}). Each reads the session (`session.ts`) and goes through the agent tools
 * where a tool exists (`find_definition`, `find_references`, `vlt/tool`), so the editor, the
 * chat and agents get the same answers.
 */
import { SymbolKind, type Connection, type Hover, type Location, type SymbolInformation } from 'vscode-languageserver/node';
import { DEFAULT_MAP_TOKENS, repoMapperFor } from '../core/intel/repomap';
import type { NavToolLocation, NavToolResult } from '../core/tools/nav-tools';
import type { ToolInput } from '../core/tools';
import { MAX_ANSWER_TOKENS } from '../core/tools/budget';
import {
  askEventNotification,
  askRequest,
  cancelIndexingRequest,
  citationTargetRequest,
  citedLinesRequest,
  modelsRequest,
  reindexRequest,
  repoMapRequest,
  searchRequest,
  sessionEventsRequest,
  sessionsRequest,
  statusRequest,
  syncRequest,
  toolRequest,
  useSessionRequest,
  whereDefinedRequest,
  whereUsedRequest,
  type AskEvent,
  type CitationTarget,
  type NavParams,
  type NavResult,
  type NavResultLocation,
  type RepoMapParams,
  type SearchParams,
} from '../protocol/lsp';
import { uriToPath, type LspSession } from './session';

/** Registers one handler of the table on the connection. */
type Registration = (connection: Connection, s: LspSession) => void;

const KINDS: Record<string, SymbolKind> = {
  function: SymbolKind.Function,
  method: SymbolKind.Method,
  class: SymbolKind.Class,
  interface: SymbolKind.Interface,
  struct: SymbolKind.Struct,
  enum: SymbolKind.Enum,
  type: SymbolKind.TypeParameter,
  variable: SymbolKind.Variable,
  constant: SymbolKind.Constant,
  field: SymbolKind.Field,
  property: SymbolKind.Property,
  module: SymbolKind.Module,
  namespace: SymbolKind.Namespace,
  trait: SymbolKind.Interface,
  section: SymbolKind.String,
};

/** Every handler of `vlt lsp`, after `initialize` and `initialized` (the session's own). */
export const HANDLERS: readonly Registration[] = [
  // vlt/* requests of the extension and the chat.
  (c, s) => c.onRequest(searchRequest, s.handle((p, signal) => search(s, p, signal))),
  (c, s) => c.onRequest(whereUsedRequest, s.handle(async (p, signal) => toNavResult(s, await s.callTool('find_references', { ...navInput(s, p), limit: p.limit ?? 500, max_tokens: 20_000, ...(p.budgetMs ? { budget_ms: p.budgetMs } : {}) }, { signal })))),
  (c, s) => c.onRequest(whereDefinedRequest, s.handle(async (p, signal) => toNavResult(s, await s.callTool('find_definition', navInput(s, p), { signal })))),
  (c, s) => c.onRequest(repoMapRequest, s.handle((p) => repoMap(s, p))),
  (c, s) => c.onRequest(statusRequest, s.handle(() => Promise.resolve(s.status()))),
  (c, s) =>
    c.onRequest(syncRequest, s.handle(async () => {
      await s.ready().ws.sync();
      return s.status();
    })),
  (c, s) =>
    c.onRequest(reindexRequest, s.handle(async (_p, signal) => {
      const r = await s.ready().ws.reindex({ signal });
      return { filesParsed: r.filesParsed, filesRemoved: r.filesRemoved, chunksAdded: r.chunksAdded, ms: Math.round(r.ms.total) };
    })),
  // Not behind `handle`: it must answer while the first index holds the server's opening.
  (c, s) => c.onRequest(cancelIndexingRequest, () => s.cancelIndexing()),
  (c, s) => c.onRequest(toolRequest, s.handle((p, signal) => s.callToolByName(String(p.name), p.input, p.author ? `${p.author.slice(0, 100)} via ${s.clientName}` : s.clientName, signal))),

  // The chat: a question streamed as `vlt/askEvent` notifications, in the shared session.
  (c, s) =>
    c.onRequest(askRequest, s.handle((p, signal) => {
      const { askId } = p;
      const onEvent = (event: AskEvent) => {
        if (askId !== undefined) void c.sendNotification(askEventNotification, { askId, event }).catch(() => undefined);
      };
      return s.chatService().ask(p, onEvent, signal);
    })),
  (c, s) => c.onRequest(sessionsRequest, s.handle((p) => s.chatService().sessions(p.limit))),
  (c, s) => c.onRequest(useSessionRequest, s.handle((p) => Promise.resolve(s.chatService().useSession(p.id)))),
  (c, s) => c.onRequest(sessionEventsRequest, s.handle((p) => s.chatService().sessionEvents(p.id))),
  (c, s) => c.onRequest(modelsRequest, s.handle(() => s.chatService().models())),
  (c, s) => c.onRequest(citedLinesRequest, s.handle((p) => s.chatService().citedLines(p.items))),
  (c, s) =>
    c.onRequest(citationTargetRequest, s.handle(async (p): Promise<CitationTarget> => {
      const t = await s.chatService().target(p.citation);
      return t.kind === 'file' ? { ...t, uri: s.ready().coords.uri(t.path) } : t;
    })),

  // Standard LSP.
  (c, s) => c.onWorkspaceSymbol(s.handle((p) => workspaceSymbols(s, p.query))),
  (c, s) =>
    c.onDefinition(s.handle(async (p): Promise<Location[]> => {
      if (!s.servesDocument(p.textDocument.uri)) return [];
      const answer = await s.callTool('find_definition', navInput(s, { target: { textDocument: p.textDocument, position: p.position } }));
      // Never silent: an empty answer's reason goes to the log (a pop-up would follow the pointer).
      if (answer.reason) c.console.info(`definition: ${answer.reason.message}`);
      return toNavResult(s, answer).locations.map((l) => ({ uri: l.uri, range: l.range }));
    })),
  (c, s) =>
    c.onReferences(s.handle(async (p, signal): Promise<Location[]> => {
      if (!s.servesDocument(p.textDocument.uri)) return [];
      const answer = await s.callTool('find_references', { ...navInput(s, { target: { textDocument: p.textDocument, position: p.position } }), limit: 1000, max_tokens: 20_000, budget_ms: s.init.referencesBudgetMs ?? 5000 }, { signal });
      // Never silent: the user asked, so an empty answer says why where they look.
      if (answer.reason) c.window.showInformationMessage(`Vlt Oracle: ${answer.reason.message}`);
      const r = toNavResult(s, answer);
      const locs = r.locations.map((l) => ({ uri: l.uri, range: l.range }));
      if (p.context.includeDeclaration && r.definition) locs.unshift({ uri: r.definition.uri, range: r.definition.range });
      return locs;
    })),
  (c, s) =>
    c.onHover(s.handle(async (p): Promise<Hover | null> => {
      if (!s.servesDocument(p.textDocument.uri)) return null;
      const r = await s.callTool('find_definition', navInput(s, { target: { textDocument: p.textDocument, position: p.position } })).catch(() => undefined);
      const d = r?.locations[0];
      if (!d) return null;
      const how = d.exact ? 'language server' : `${d.provenance}, ${d.confidence} confidence`;
      return { contents: { kind: 'markdown', value: ['```', d.signature ?? d.text, '```', `${d.kind ?? 'definition'} at \`${d.citation}\` (Vlt Oracle: ${how})`].join('\n') } };
    })),
  // Saves and watched-file events feed the delta queue.
  (c, s) => c.onDidChangeWatchedFiles((p) => s.server?.enqueue(p.changes.map((x) => uriToPath(x.uri)).filter((x): x is string => x !== undefined))),
  (c, s) =>
    c.onDidSaveTextDocument((p) => {
      const f = uriToPath(p.textDocument.uri);
      if (f) s.server?.enqueue([f]);
    }),
];

/**
 * `vlt/search`: the search_code tool, as an agent calls it (the same ranking, filters, freshness
 * check and errors), without a token cap (the view shows what it asked for) and without
 * recording each typed query in the shared session.
 */
async function search(s: LspSession, p: SearchParams, signal: AbortSignal) {
  const { coords } = s.ready();
  const input: ToolInput<'search_code'> = {
    query: p.query,
    limit: Math.min(50, Math.max(1, Math.floor(p.k ?? 20))),
    max_tokens: MAX_ANSWER_TOKENS,
    // The client's strings, as sent: the tool's schema refuses a language or kind it does not know.
    ...(p.language ? { language: p.language as NonNullable<ToolInput<'search_code'>['language']> } : {}),
    ...(p.path ? { path: p.path } : {}),
    ...(p.kind?.length ? { kind: p.kind } : {}),
  };
  const out = await s.callTool('search_code', input, { signal, record: false });
  return {
    hits: out.hits.filter((h) => 'snippet' in h).map((h) => ({
      path: h.path,
      uri: coords.uri(h.path),
      range: { start: { line: h.start_line - 1, character: 0 }, end: { line: h.end_line - 1, character: 0 } },
      symbol: h.symbol,
      kind: h.kind,
      score: h.score,
      retrievers: h.retrievers,
      snippet: h.snippet,
      ...(h.snippet_line !== undefined ? { snippetLine: h.snippet_line - 1 } : {}),
      ...(h.stale_index ? { stale: true as const } : {}),
      ...(h.note ? { note: h.note } : {}),
      contentHash: h.content_hash,
    })),
  };
}

/** The map as text and as data (files, definitions, lines) for the editor's view: the same ranking and rendering `get_repo_map` answers with. */
async function repoMap(s: LspSession, p: RepoMapParams) {
  const { ws, coords } = s.ready();
  const focus = p.focus ? coords.relPath(p.focus) : undefined;
  const r = await ws.read((e) => repoMapperFor(e).render({ maxTokens: p.tokens ?? DEFAULT_MAP_TOKENS, ...(p.scope ? { scope: p.scope } : {}), ...(focus ? { focus: [focus] } : {}) }));
  return {
    text: r.text,
    files: r.files.map((f) => ({ path: f.path, uri: coords.uri(f.path), rank: f.rank, symbols: f.symbols.map((x) => ({ name: x.name, kind: x.kind, line: x.line, endLine: x.end_line, signature: x.signature })) })),
    ...(focus ? { focus } : {}),
    notes: r.notes,
  };
}

/** `workspace/symbol`: the index's symbols by prefix, then search hits that name a symbol; at most 200. */
async function workspaceSymbols(s: LspSession, query: string): Promise<SymbolInformation[]> {
  const { ws, coords } = s.ready();
  const q = query.trim();
  if (!q) return [];
  return ws.read(async (e) => {
    const seen = new Set<string>();
    const out: SymbolInformation[] = [];
    const add = (name: string, kind: string, file: string, line: number, container?: string) => {
      const key = `${file}:${line}:${name}`;
      if (seen.has(key) || out.length >= 200) return;
      seen.add(key);
      out.push({ name, kind: KINDS[kind] ?? SymbolKind.Variable, location: { uri: coords.uri(file), range: coords.point(line, 1) }, ...(container ? { containerName: container } : {}) });
    };
    for (const x of e.store.findSymbols(q, { prefix: true, limit: 100 })) add(x.name, x.kind, x.path, x.startLine, x.container);
    for (const h of (await e.search(q, { k: 50 })).hits) if (h.symbol) add(h.symbol, h.kind, h.path, h.start_line);
    return out;
  });
}

function navInput(s: LspSession, p: NavParams) {
  const { coords } = s.ready();
  if ('symbol' in p.target) return { symbol: p.target.symbol };
  return { file: coords.relPath(p.target.textDocument.uri), line: p.target.position.line + 1, col: p.target.position.character + 1 };
}

function toNavLocation(s: LspSession, l: NavToolLocation): NavResultLocation {
  const { coords } = s.ready();
  return { uri: coords.uri(l.path), range: coords.point(l.line, l.col), path: l.path, line: l.line, provenance: l.provenance, exact: l.exact, confidence: l.confidence, text: l.text };
}

function toNavResult(s: LspSession, r: NavToolResult): NavResult {
  return {
    name: r.symbol,
    locations: r.locations.map((l) => toNavLocation(s, l)),
    ...(r.definition ? { definition: toNavLocation(s, r.definition) } : {}),
    ambiguous: r.ambiguous,
    providers: r.providers.map((p) => ({ provider: p.provider, status: p.status, ...(p.reason ? { reason: p.reason } : {}), ms: Math.round(p.ms) })),
    notes: r.notes,
    suggestions: r.suggestions ?? [],
    truncated: r.truncated === true || r.next_cursor !== undefined,
  };
}
