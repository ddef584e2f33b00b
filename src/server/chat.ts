/**
 * The chat's server side, shared by every host that serves the chat UI (`vlt lsp` for the VS
 * Code view, `vlt serve` for the browser page): a question streamed through `ask_oracle` in
 * the shared session, the sessions a picker lists, what a citation leads to, and the lines a
 * code citation pointed at, for hovers and for marking citations whose lines changed since
 * the answer ("stale").
 *
 * Every read goes through the workspace's tools (`read_file_range`, `read_note`,
 * `thread_read`), so the chat can show nothing an agent could not read: the same workspace
 * confinement and the same refusals.
 */
import { createHash } from 'node:crypto';
import { VltError, toVltError } from '../core/errors';
import type { ChatModel } from '../core/llm/chat';
import type { SessionSummary } from '../core/memory';
import type { OracleEvent } from '../core/oracle/types';
import { parseCitations } from '../protocol/citations';
import type { AskOracleResult } from '../core/tools/oracle-tools';
import type { ToolInput } from '../core/tools';
import { NodeGitHistory } from '../node/git-history';
import type { CitationTarget as WireCitationTarget, CitedLines, ModelChoice } from '../protocol/lsp';
import type { WorkspaceServer } from './workspace';

/** Lines shown for a citation of one line (`[a.go:12]`): the line and a few after it. */
const SINGLE_LINE_SPAN = 6;
/** Most lines a citation's hover shows and its hash covers. */
const MAX_SPAN = 60;
/** Most code citations of one answer whose lines are recorded. */
const MAX_CITED = 40;

export interface ChatQuestion {
  question: string;
  sources?: string[];
  noLlm?: boolean;
  agent?: boolean;
  explain?: boolean;
  session?: string;
  /** `none`: the extractive brief; `configured` (or absent): the server's own model. */
  model?: string;
}

export type ChatAnswer = AskOracleResult & { session: string; cited: Record<string, CitedLines> };

/** Where a citation leads; the host adds a file's URI (`CitationTarget` of the protocol). */
export type CitationTarget = DistributiveOmit<WireCitationTarget, 'uri'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export interface ChatSessionEvent {
  kind: 'question' | 'answer' | 'tool_call' | 'tool_result';
  author: string;
  tool?: string;
  text: string;
  created_at: string;
}

/** A model the editor offers (VS Code's Language Model API), as its host lists it. */
export interface EditorModelInfo {
  id: string;
  name: string;
  vendor: string;
  family: string;
}

/** The editor's language models, where the host runs inside an editor that offers them. */
export interface EditorModels {
  /** The models the editor offers now; throws `LLM_FAILED` when it cannot say. */
  list(): Promise<EditorModelInfo[]>;
  model(info: EditorModelInfo): ChatModel;
}

const EDITOR_PREFIX = 'editor:';

export class ChatService {
  private git: NodeGitHistory | undefined;
  /** The editor's models as last listed (by the picker): a question naming one needs no listing first. */
  private listedEditorModels = new Map<string, EditorModelInfo>();

  constructor(
    private readonly ws: WorkspaceServer,
    /** Who asks, as recorded in the session (`vscode-chat`, `browser-chat`). */
    private readonly author: string,
    private readonly editorModels?: EditorModels,
  ) {}

  /** One question through ask_oracle, in the shared session, streaming `onEvent`. */
  async ask(q: ChatQuestion, onEvent: (e: OracleEvent) => void, signal?: AbortSignal): Promise<ChatAnswer> {
    const chat = await this.modelFor(q.model);
    if (q.session !== undefined && q.session !== this.ws.session) this.ws.useSession(q.session);
    const session = this.ws.session;
    const input: ToolInput<'ask_oracle'> = {
      question: q.question,
      // The client's list, as it sent it: the tool's schema refuses a source it does not know.
      ...(q.sources?.length ? { sources: q.sources as NonNullable<ToolInput<'ask_oracle'>['sources']> } : {}),
      ...(q.noLlm || q.model === 'none' ? { no_llm: true } : {}),
      ...(q.agent ? { agent: true } : {}),
      ...(q.explain ? { explain: true } : {}),
      max_tokens: 20_000,
    };
    const ans = await this.ws.call('ask_oracle', input, { author: this.author, onEvent, ...(chat ? { chat } : {}), ...(signal ? { signal } : {}) });
    const cited: Record<string, CitedLines> = {};
    const code = parseCitations(ans.answer).filter((c) => c.source === 'code' && c.line !== undefined).slice(0, MAX_CITED);
    const lines = await this.citedLines(code.map((c) => spanOf(c.citation, c.path, c.line!)));
    code.forEach((c, i) => {
      const l = lines[i];
      if (l) cited[c.citation] = l;
    });
    return { ...ans, session, cited };
  }

  /** The current lines of each range (at most {@link MAX_SPAN} lines each); a hash when they could be read. */
  async citedLines(items: ReadonlyArray<{ path: string; start: number; end: number }>): Promise<CitedLines[]> {
    return Promise.all(
      items.slice(0, 200).map(async ({ path, start, end }): Promise<CitedLines> => {
        const first = Math.max(1, Math.floor(start));
        const last = Math.max(first, Math.min(Math.floor(end), first + MAX_SPAN - 1));
        try {
          const r = await this.ws.call('read_file_range', { path, start_line: first, end_line: last }, { author: this.author, record: false });
          return { path, start: first, end: last, hash: hashOf(r.text), text: r.text };
        } catch (e) {
          return { path, start: first, end: last, text: toVltError(e).message };
        }
      }),
    );
  }

  /** What a citation leads to. Files are checked to exist; notes, threads and commits are read. */
  async target(citation: string): Promise<CitationTarget> {
    const c = parseCitations(citation)[0];
    if (!c) throw new VltError('USAGE', `not a citation: ${citation.slice(0, 200)}`);
    if (c.source === 'code') {
      const span = spanOf(c.citation, c.path, c.line ?? 1);
      await this.ws.call('read_file_range', { path: c.path, start_line: span.start, end_line: span.start }, { author: this.author, record: false });
      return { kind: 'file', path: c.path, start: span.start, end: /-\d+\]$/.test(c.citation) ? span.end : span.start };
    }
    if (c.source === 'note') {
      const note = await this.ws.call('read_note', { path: c.path }, { author: this.author, record: false });
      return { kind: 'document', title: `Note: ${note.path}`, language: 'markdown', content: note.content };
    }
    if (c.source === 'thread') {
      const view = await this.ws.call('thread_read', { thread: c.path, entries: 50 }, { author: this.author, record: false });
      return { kind: 'document', title: `Thread: ${c.path}${c.line !== undefined ? `#${c.line}` : ''}`, language: 'markdown', content: renderThread(view, c.line) };
    }
    if (this.ws.restricted) throw new VltError('RESTRICTED', 'git history is not read in an untrusted workspace');
    this.git ??= new NodeGitHistory(this.ws.root, { logger: this.ws.ctx.logger });
    const [commit] = await this.git.commits([c.path]);
    if (!commit) throw new VltError('NOT_FOUND', `no commit ${c.path} in this repository`);
    const content = [`# ${commit.subject}`, '', `commit ${commit.hash}  `, `${commit.author}, ${commit.date}`, '', commit.body.trim(), '', commit.files.length ? '## Files' : '', ...commit.files.map((f) => `- ${f}`)].join('\n');
    return { kind: 'document', title: `Commit ${commit.shortHash}`, language: 'markdown', content };
  }

  /**
   * Every model a question can name: the server's configured one (vlt.toml, the user's config,
   * the environment or the extension's settings), the editor's, and none (the evidence brief).
   * The default is the configured model, else the editor's first, else none.
   */
  async models(): Promise<{ choices: ModelChoice[]; default: string; reason?: string }> {
    const none: ModelChoice = { id: 'none', label: 'No model (evidence brief)', detail: 'ranked evidence with citations, no model' };
    if (this.ws.restricted) return { choices: [none], default: 'none', reason: 'the workspace is not trusted: no model reads it' };
    const engine = await this.ws.getEngine();
    const oracle = this.ws.ctx.getOracle ? await this.ws.ctx.getOracle(engine) : undefined;
    const name = oracle?.modelName;
    const choices: ModelChoice[] = name ? [{ id: 'configured', label: name, detail: `configured (${engine.config.llm.baseUrl})` }] : [];
    const reasons: string[] = name ? [] : ['no language model is configured ([llm] in vlt.toml or the user config, VLT_LLM_* variables, or the extension settings)'];
    if (this.editorModels) {
      try {
        const listed = await this.editorModels.list();
        this.listedEditorModels = new Map(listed.map((m) => [m.id, m]));
        for (const m of listed) choices.push({ id: `${EDITOR_PREFIX}${m.id}`, label: m.name, detail: `${m.vendor}, through the editor` });
      } catch (e) {
        reasons.push(`the editor's models are unavailable: ${toVltError(e).message}`);
      }
    }
    choices.push(none);
    return { choices, default: choices[0]!.id, ...(reasons.length ? { reason: reasons.join('; ') } : {}) };
  }

  /** The model a question names: undefined for the configured one or none (ask_oracle decides), the editor's model otherwise. */
  private async modelFor(id: string | undefined): Promise<ChatModel | undefined> {
    if (id === undefined || id === 'none' || id === 'configured') return undefined;
    if (!id.startsWith(EDITOR_PREFIX) || !this.editorModels) throw new VltError('USAGE', `unknown model ${id.slice(0, 100)}: this server answers with its configured model${this.editorModels ? ", the editor's (editor:<id>)" : ''} or none`);
    if (this.ws.restricted) throw new VltError('RESTRICTED', "the workspace is not trusted: no model reads it, the editor's included");
    const wanted = id.slice(EDITOR_PREFIX.length);
    // A model gone since the picker listed it is refused by the editor, and the answer says so.
    const info = this.listedEditorModels.get(wanted) ?? (await this.editorModels.list()).find((m) => m.id === wanted);
    if (!info) throw new VltError('NOT_FOUND', `the editor offers no model ${wanted.slice(0, 100)} now; pick another one`);
    return this.editorModels.model(info);
  }

  async sessions(limit = 20): Promise<{ active: string; sessions: SessionSummary[] }> {
    return { active: this.ws.session, sessions: await this.ws.listSessions(limit) };
  }

  useSession(id?: string): { id: string } {
    return { id: this.ws.useSession(id) };
  }

  async sessionEvents(id?: string): Promise<{ id: string; events: ChatSessionEvent[] }> {
    const sid = id ?? this.ws.session;
    const events = await this.ws.sessionEvents(sid);
    return { id: sid, events: events.map((e) => ({ kind: e.kind, author: e.author, ...(e.tool ? { tool: e.tool } : {}), text: e.text, created_at: e.created_at })) };
  }
}

interface ThreadView {
  thread: string;
  summary: { text: string };
  entries: Array<{ seq: number; author: string; text: string; created_at: string }>;
}

function renderThread(view: ThreadView, focus: number | undefined): string {
  const out = [`# Thread ${view.thread}`, '', view.summary.text ? `> ${view.summary.text.replace(/\n/g, '\n> ')}` : '', ''];
  for (const e of view.entries) {
    out.push(`## ${e.seq === focus ? '▶ ' : ''}#${e.seq} · ${e.author} · ${e.created_at}`, '', e.text, '');
  }
  return out.join('\n');
}

/** The lines a code citation covers: its range, or a few lines from its one line. */
export function spanOf(citation: string, path: string, line: number): { path: string; start: number; end: number } {
  const m = /:(\d+)-(\d+)\]$/.exec(citation);
  if (m) return { path, start: Number(m[1]), end: Math.min(Number(m[2]), Number(m[1]) + MAX_SPAN - 1) };
  return { path, start: line, end: line + SINGLE_LINE_SPAN - 1 };
}

export function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}
