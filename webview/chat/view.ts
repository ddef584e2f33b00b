/**
 * The chat UI, one codebase for the VS Code view and the browser page: a toolbar (session
 * picker, New Session, model picker, sources/explain/agent), the transcript (questions,
 * streamed answers with their progress steps, agents' activity), and the composer (context
 * chips, the question, Send/Stop). It talks to its host only through a {@link Bridge}.
 *
 * Streaming: text deltas are appended to the message and the message is re-rendered at most
 * once per animation frame, so a long answer costs one markdown pass per frame, not per token.
 */
import type { AskHandle, Bridge, CitationTarget, CitedLines, ContextItem, ChatCommand, ModelInfo } from './bridge';
import type { MarkdownRenderer } from './markdown';
import { applyStep, settledLength, composeQuestion, emptyState, mergeActivity, persistable, restoreState, settleSteps, SOURCES, transcriptOf, type ChatState, type Message } from './state';

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else e.setAttribute(k, v);
  }
  e.append(...children);
  return e;
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e)).replace(/^(?:Error: )?[A-Z_]+: /, '');
const isCancel = (e: unknown): boolean => /CANCELLED|cancel|abort/i.test(e instanceof Error ? e.message : String(e));

export class ChatView {
  private state: ChatState = emptyState();
  /** `active` is empty until the server has listed its models. */
  private models: ModelInfo = { choices: [], active: '' };
  private running: { id: string; handle: AskHandle } | undefined;
  private renderQueued = new Set<string>();
  private frame = 0;
  private historyAt = -1;
  private readonly nodes = new Map<string, HTMLElement>();
  private readonly log = el('div', { id: 'log', role: 'log', 'aria-live': 'polite', 'aria-relevant': 'additions text', 'aria-label': 'Conversation' });
  private readonly input = el('textarea', { id: 'input', rows: '3', placeholder: 'Ask about this codebase… (Enter to send, Shift+Enter for a new line)', 'aria-label': 'Question' });
  private readonly send = el('button', { id: 'send', type: 'button', class: 'primary' }, 'Send');
  private readonly chips = el('div', { id: 'chips', 'aria-label': 'Context' });
  private readonly sessionSelect = el('select', { id: 'session', 'aria-label': 'Session', title: 'Recent sessions' });
  private readonly modelSelect = el('select', { id: 'model', 'aria-label': 'Model', title: 'Which model answers' });
  private readonly status = el('div', { id: 'status', role: 'status' });
  private readonly overlay = el('div', { id: 'overlay', hidden: '' });
  /** Sets each option's checkbox from the state. */
  private readonly syncToggles: Array<() => void> = [];

  constructor(
    private readonly bridge: Bridge,
    private readonly md: MarkdownRenderer,
    private readonly root: HTMLElement,
  ) {}

  async start(): Promise<void> {
    this.build();
    this.state = restoreState(await this.bridge.loadState().catch(() => undefined));
    this.input.value = this.state.draft;
    this.renderAll();
    this.bridge.onCommand((c) => void this.command(c));
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') void this.checkCitations();
    });
    await Promise.all([this.loadSessions(), this.loadModels()]);
    void this.checkCitations();
  }

  // -- building ---------------------------------------------------------------------------------

  private build(): void {
    const newBtn = el('button', { id: 'new-session', type: 'button', title: 'Start a new shared session' }, 'New');
    newBtn.addEventListener('click', () => void this.newSession());
    const refresh = el('button', { id: 'refresh', type: 'button', title: "Show agents' calls in this session" }, 'Refresh');
    refresh.addEventListener('click', () => void this.refresh());
    this.sessionSelect.addEventListener('change', () => void this.switchSession(this.sessionSelect.value));
    this.modelSelect.addEventListener('change', () => void this.selectModel(this.modelSelect.value));
    const opts = el('details', { class: 'options' }, el('summary', {}, 'Options'));
    for (const s of SOURCES) opts.append(this.toggle(`src-${s}`, s, () => this.state.sources.includes(s), (on) => (this.state.sources = on ? [...new Set([...this.state.sources, s])] : this.state.sources.filter((x) => x !== s))));
    opts.append(this.toggle('explain', 'explain', () => this.state.explain, (on) => (this.state.explain = on)));
    opts.append(this.toggle('agent', 'agent mode', () => this.state.agent, (on) => (this.state.agent = on)));
    const toolbar = el('div', { class: 'toolbar' }, this.sessionSelect, newBtn, refresh, this.modelSelect, opts);

    this.send.addEventListener('click', () => (this.running ? this.stop() : void this.ask()));
    this.input.addEventListener('keydown', (ev) => this.onKey(ev));
    this.input.addEventListener('input', () => {
      this.state.draft = this.input.value;
      this.save();
    });
    this.input.addEventListener('dragover', (ev) => ev.preventDefault());
    this.input.addEventListener('drop', (ev) => this.onDrop(ev));
    const composer = el('div', { class: 'composer' }, this.chips, this.input, el('div', { class: 'row' }, this.status, this.send));

    this.log.addEventListener('click', (ev) => this.onLogClick(ev));
    this.overlay.addEventListener('click', (ev) => {
      if ((ev.target as HTMLElement).closest('.close')) this.overlay.hidden = true;
      else this.onLogClick(ev);
    });
    this.root.replaceChildren(toolbar, this.log, this.overlay, composer);
    document.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') {
        if (this.running) this.stop();
        else if (!this.overlay.hidden) this.overlay.hidden = true;
      }
    });
  }

  private toggle(id: string, label: string, get: () => boolean, set: (on: boolean) => void): HTMLElement {
    const box = el('input', { type: 'checkbox', id: `opt-${id}` });
    box.addEventListener('change', () => {
      set(box.checked);
      this.save();
    });
    this.syncToggles.push(() => (box.checked = get()));
    return el('label', { for: `opt-${id}` }, box, ` ${label}`);
  }

  // -- rendering --------------------------------------------------------------------------------

  private renderAll(): void {
    for (const sync of this.syncToggles) sync();
    this.nodes.clear();
    this.bodies.clear();
    this.log.replaceChildren(...this.state.messages.map((m) => this.messageNode(m)));
    if (this.state.messages.length === 0) this.log.append(el('p', { class: 'empty' }, 'Ask how something works, where a symbol is used, or why code changed. Answers cite files, notes, threads and commits.'));
    this.renderChips();
    this.updateSend();
    this.log.scrollTop = this.log.scrollHeight;
  }

  private messageNode(m: Message): HTMLElement {
    const node = el('div', { class: `msg ${m.role}`, 'data-id': m.id });
    this.nodes.set(m.id, node);
    this.fill(node, m);
    return node;
  }

  private fill(node: HTMLElement, m: Message): void {
    node.className = `msg ${m.role}${m.status ? ` ${m.status}` : ''}${m.answer?.noContext ? ' no-context' : ''}`;
    if (m.role === 'user') {
      const body = el('div', { class: 'question' });
      body.textContent = m.text;
      node.replaceChildren(body, ...(m.context?.length ? [el('div', { class: 'ctx' }, ...m.context.map((c) => el('span', { class: 'chip' }, chipLabel(c))))] : []));
      return;
    }
    if (m.role === 'activity') {
      node.replaceChildren(el('span', { class: 'who' }, m.author ?? 'agent'), ' ', el('code', {}, m.text));
      return;
    }
    const parts: HTMLElement[] = [];
    if (m.steps?.length && (m.status === 'streaming' || m.text === '')) {
      parts.push(el('ul', { class: 'steps', 'aria-label': 'Progress' }, ...m.steps.map((s) => el('li', { class: s.state }, s.label))));
    }
    if (m.answer?.noContext) parts.push(el('div', { class: 'badge' }, 'No relevant context in this workspace'));
    const body = this.answerBody(m);
    if (m.status !== 'streaming' && m.answer?.mode === 'extractive') foldLists(body);
    body.setAttribute('aria-busy', m.status === 'streaming' ? 'true' : 'false');
    this.decorate(body, m);
    parts.push(body);
    if (m.error) parts.push(el('div', { class: 'error', role: 'alert' }, m.error));
    if (m.status === 'stopped') parts.push(el('div', { class: 'note' }, 'Stopped.'));
    const refs = this.references(m);
    if (refs) parts.push(refs);
    if (m.answer) parts.push(this.footer(m));
    node.replaceChildren(...parts);
  }

  /** Rendered answers by message id: the text they show, and while streaming, how much of it is settled. */
  private readonly bodies = new Map<string, { el: HTMLElement; text: string; settled: number; tail: HTMLElement }>();

  /**
   * The answer's rendered markdown. While it streams, the text up to the last paragraph break
   * outside a code block is settled: each settled stretch is rendered once and kept, and only
   * the tail after it is rendered again on the next frame, so a long answer costs the same per
   * frame at its end as at its start. A finished answer whose text is what was streamed keeps
   * that DOM; any other text (the evidence brief replacing a model's answer) is rendered whole.
   */
  private answerBody(m: Message): HTMLElement {
    let b = this.bodies.get(m.id);
    if (m.status === 'streaming') {
      if (!b || !m.text.startsWith(b.text.slice(0, b.settled))) {
        const tail = el('div', { class: 'seg' });
        b = { el: el('div', { class: 'answer markdown' }, tail), text: '', settled: 0, tail };
        this.bodies.set(m.id, b);
      }
      const cut = settledLength(m.text, b.settled);
      if (cut > b.settled) {
        const seg = el('div', { class: 'seg' });
        seg.innerHTML = this.md.render(m.text.slice(b.settled, cut));
        b.el.insertBefore(seg, b.tail);
        b.settled = cut;
      }
      if (b.text !== m.text) b.tail.innerHTML = this.md.render(m.text.slice(b.settled));
      b.text = m.text;
      return b.el;
    }
    if (!b || b.text !== m.text) {
      const body = el('div', { class: 'answer markdown' });
      body.innerHTML = this.md.render(m.text);
      b = { el: body, text: m.text, settled: m.text.length, tail: body };
      this.bodies.set(m.id, b);
    }
    return b.el;
  }

  /** Copy buttons on code blocks; citation states (stale, hover text) from what the answer recorded. */
  private decorate(body: HTMLElement, m: Message): void {
    for (const pre of body.querySelectorAll('pre')) {
      if (pre.querySelector(':scope > button.copy')) continue;
      pre.prepend(el('button', { type: 'button', class: 'copy', title: 'Copy', 'aria-label': 'Copy code' }, 'Copy'));
    }
    for (const a of body.querySelectorAll<HTMLAnchorElement>('a.cite')) {
      const key = `${m.id}|${a.dataset.cite ?? ''}`;
      const cited = m.answer?.cited[a.dataset.cite ?? ''];
      const now = this.stale.get(key);
      a.classList.toggle('stale', now !== undefined);
      if (now !== undefined) a.title = `Changed since this answer. Now:\n${now}`;
      else if (cited?.text) a.title = cited.text;
    }
  }

  /**
   * A model's answer is prose with inline citations; under it, what it cited as small chips that
   * open the places (the evidence brief lists its places itself).
   */
  private references(m: Message): HTMLElement | undefined {
    const a = m.answer;
    if (!a || m.status === 'streaming' || a.mode === 'extractive') return undefined;
    const cites = Object.keys(a.cited);
    if (cites.length === 0) return undefined;
    const refs = el('div', { class: 'refs', 'aria-label': 'Cited' }, ...cites.map((c) => el('a', { class: 'cite', href: '#', 'data-cite': c }, c.replace(/^\[(.*)\]$/, '$1'))));
    this.decorate(refs, m);
    return refs;
  }

  private footer(m: Message): HTMLElement {
    const a = m.answer!;
    const bits = [a.mode === 'extractive' ? 'evidence brief' : a.mode === 'agent' ? `agent · ${a.model ?? ''}` : (a.model ?? 'model')];
    if (a.usage) bits.push(`${a.usage.promptTokens} → ${a.usage.completionTokens} tokens`);
    if (a.ms) bits.push(`${(a.ms / 1000).toFixed(1)} s`);
    const foot = el('div', { class: 'footer' }, bits.join(' · '));
    if (a.rewritten) foot.append(el('div', { class: 'rewritten' }, `Understood as: ${a.rewritten}`));
    if (a.degraded) foot.append(el('div', { class: 'degraded' }, a.degraded));
    if (a.details) {
      const d = el('details', { class: 'details' }, el('summary', {}, 'Details'));
      const body = el('div', { class: 'markdown' });
      body.innerHTML = this.md.render(a.details);
      d.append(body);
      foot.append(d);
    }
    if (a.explain) foot.append(this.explainPanel(a.explain));
    return foot;
  }

  private explainPanel(explain: unknown): HTMLElement {
    const x = explain as { runs?: Array<{ name: string; status: string; ms: number; reason?: string; results?: unknown[] }>; ranked?: Array<{ citation: string; score: number }>; context?: { tokens: number; budget: number }; threshold?: { best: number; min: number } };
    const d = el('details', { class: 'explain' }, el('summary', {}, 'How this was found'));
    const rows = (x.runs ?? []).map((r) => el('tr', {}, el('td', {}, r.name), el('td', {}, r.status), el('td', {}, String(r.results?.length ?? 0)), el('td', {}, `${Math.round(r.ms)} ms`), el('td', {}, r.reason ?? '')));
    d.append(el('table', {}, el('tr', {}, el('th', {}, 'path'), el('th', {}, 'status'), el('th', {}, 'results'), el('th', {}, 'time'), el('th', {}, 'note')), ...rows));
    if (x.ranked?.length) d.append(el('ol', {}, ...x.ranked.slice(0, 10).map((r) => el('li', {}, `${r.citation} (${r.score.toFixed(3)})`))));
    if (x.context) d.append(el('p', {}, `Context: ${x.context.tokens} of ${x.context.budget} tokens.${x.threshold ? ` Coverage ${x.threshold.best.toFixed(2)} (minimum ${x.threshold.min}).` : ''}`));
    return d;
  }

  private renderChips(): void {
    this.chips.replaceChildren(
      ...this.state.context.map((c, i) => {
        const x = el('button', { type: 'button', class: 'remove', 'aria-label': `Remove ${chipLabel(c)}` }, '×');
        x.addEventListener('click', () => {
          this.state.context.splice(i, 1);
          this.renderChips();
          this.save();
        });
        return el('span', { class: 'chip' }, chipLabel(c), x);
      }),
    );
  }

  private updateSend(): void {
    this.send.textContent = this.running ? 'Stop' : 'Send';
    this.send.classList.toggle('stop', Boolean(this.running));
    this.send.setAttribute('aria-label', this.running ? 'Stop the answer (Esc)' : 'Send the question (Enter)');
  }

  /** Re-renders a message on the next animation frame (once per frame however many deltas came). */
  private queueRender(id: string): void {
    this.renderQueued.add(id);
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      const stick = this.log.scrollTop + this.log.clientHeight >= this.log.scrollHeight - 40;
      for (const qid of this.renderQueued) {
        const m = this.state.messages.find((x) => x.id === qid);
        const node = this.nodes.get(qid);
        if (m && node) this.fill(node, m);
      }
      this.renderQueued.clear();
      if (stick) this.followAnswer();
    });
  }

  /**
   * Follows a growing answer down, but never past its start: once the answer is taller than the
   * log, its question stays at the top and the reader scrolls on when ready (an answer read from
   * its end first is read backwards).
   */
  private followAnswer(): void {
    const last = [...this.log.querySelectorAll<HTMLElement>('.msg.user')].at(-1);
    const bottom = this.log.scrollHeight - this.log.clientHeight;
    if (!last) {
      this.log.scrollTop = bottom;
      return;
    }
    const start = last.getBoundingClientRect().top - this.log.getBoundingClientRect().top + this.log.scrollTop - 4;
    this.log.scrollTop = Math.max(this.log.scrollTop, Math.min(bottom, start));
  }

  // -- asking -----------------------------------------------------------------------------------

  private async ask(questionOverride?: string): Promise<void> {
    const typed = (questionOverride ?? this.input.value).trim();
    if (!typed || this.running) return;
    const context = [...this.state.context];
    const now = Date.now();
    const q: Message = { id: `q${now}`, role: 'user', text: typed, at: now, ...(context.length ? { context } : {}) };
    const a: Message = { id: `a${now}`, role: 'assistant', text: '', at: now, status: 'streaming', steps: [{ key: 'phase:start', label: 'Reading the question…', state: 'running' }] };
    if (this.state.messages.length === 0) this.log.replaceChildren();
    this.state.messages.push(q, a);
    this.state.history = [...this.state.history.filter((h) => h !== typed), typed];
    this.state.context = [];
    this.state.draft = '';
    this.input.value = '';
    this.historyAt = -1;
    this.log.append(this.messageNode(q), this.messageNode(a));
    this.log.scrollTop = this.log.scrollHeight;
    this.renderChips();
    const none = this.models.active === 'none';
    const handle = this.bridge.ask(
      {
        question: composeQuestion(typed, context),
        askId: a.id,
        ...(this.state.sources.length && this.state.sources.length < SOURCES.length ? { sources: this.state.sources } : {}),
        ...(this.state.explain ? { explain: true } : {}),
        ...(this.state.agent ? { agent: true } : {}),
        // Before the list has loaded (or when it could not be), the server's default answers.
        ...(none ? { noLlm: true } : this.models.active ? { model: this.models.active } : {}),
        ...(this.state.session ? { session: this.state.session } : {}),
      },
      (e) => {
        if (a.status !== 'streaming') return;
        if (e.type === 'text') {
          if (a.text === '') a.steps = settleSteps(a.steps ?? []);
          a.text += e.text;
        } else {
          a.steps = applyStep((a.steps ?? []).filter((s) => s.key !== 'phase:start'), e);
          this.status.textContent = a.steps.at(-1)?.label ?? '';
        }
        this.queueRender(a.id);
      },
    );
    this.running = { id: a.id, handle };
    this.updateSend();
    this.save();
    try {
      const ans = await handle.answer;
      if (a.status !== 'streaming') return;
      a.text = ans.answer;
      a.status = 'done';
      a.steps = settleSteps(a.steps ?? []);
      a.answer = {
        mode: ans.mode,
        ms: Date.now() - now,
        noContext: ans.noContext,
        cited: ans.cited,
        ...(ans.model ? { model: ans.model } : {}),
        ...(ans.usage ? { usage: ans.usage } : {}),
        ...(ans.degraded ? { degraded: ans.degraded } : {}),
        ...(ans.rewritten ? { rewritten: ans.rewritten } : {}),
        ...(ans.explain ? { explain: ans.explain } : {}),
        ...(ans.details ? { details: ans.details } : {}),
      };
      this.state.session = ans.session;
      this.status.textContent = ans.noContext ? 'No relevant context found.' : 'Answered.';
    } catch (e) {
      if (a.status === 'streaming') {
        a.status = isCancel(e) ? 'stopped' : 'error';
        if (a.status === 'error') a.error = errorText(e);
        a.steps = settleSteps(a.steps ?? []);
        this.status.textContent = a.status === 'stopped' ? 'Stopped.' : 'The question failed.';
      }
    } finally {
      if (this.running?.id === a.id) this.running = undefined;
      this.updateSend();
      this.queueRender(a.id);
      this.save();
      void this.loadSessions();
    }
  }

  private stop(): void {
    const r = this.running;
    if (!r) return;
    const m = this.state.messages.find((x) => x.id === r.id);
    if (m && m.status === 'streaming') {
      m.status = 'stopped';
      m.steps = settleSteps(m.steps ?? []);
      this.queueRender(m.id);
    }
    r.handle.cancel();
    this.running = undefined;
    this.status.textContent = 'Stopped.';
    this.updateSend();
    this.save();
  }

  private onKey(ev: KeyboardEvent): void {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      void this.ask();
    } else if (ev.key === 'ArrowUp' && this.input.selectionStart === 0 && this.input.selectionEnd === 0 && this.state.history.length) {
      ev.preventDefault();
      this.historyAt = this.historyAt < 0 ? this.state.history.length - 1 : Math.max(0, this.historyAt - 1);
      this.input.value = this.state.history[this.historyAt] ?? '';
    } else if (ev.key === 'ArrowDown' && this.historyAt >= 0 && this.input.selectionStart === this.input.value.length) {
      ev.preventDefault();
      this.historyAt = this.historyAt + 1 < this.state.history.length ? this.historyAt + 1 : -1;
      this.input.value = this.historyAt < 0 ? '' : (this.state.history[this.historyAt] ?? '');
    }
  }

  private onDrop(ev: DragEvent): void {
    const list = ev.dataTransfer?.getData('text/uri-list') || ev.dataTransfer?.getData('text/plain') || '';
    const uris = list.split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    if (uris.length === 0) return;
    ev.preventDefault();
    void this.bridge.workspacePaths(uris.slice(0, 10)).then(
      (paths) => {
        if (paths.length < Math.min(uris.length, 10)) this.status.textContent = 'Only files of this workspace can be added.';
        for (const path of paths) this.addContext({ kind: 'file', path });
      },
      (e: unknown) => (this.status.textContent = `Could not add the file: ${errorText(e)}`),
    );
  }

  private addContext(item: ContextItem): void {
    if (!this.state.context.some((c) => c.kind === item.kind && c.path === item.path && c.startLine === item.startLine && c.endLine === item.endLine)) this.state.context.push(item);
    this.renderChips();
    this.save();
    this.input.focus();
  }

  // -- citations --------------------------------------------------------------------------------

  /** Citation keys (`messageId|citation`) whose lines changed since the answer, with the lines now. */
  private readonly stale = new Map<string, string>();

  private onLogClick(ev: MouseEvent): void {
    const target = ev.target as HTMLElement;
    const copy = target.closest('button.copy');
    if (copy) {
      const code = copy.parentElement?.querySelector('code')?.textContent ?? '';
      void navigator.clipboard?.writeText(code).then(
        () => (copy.textContent = 'Copied'),
        () => (copy.textContent = 'Copy failed'),
      );
      return;
    }
    const a = target.closest('a');
    if (!a) return;
    ev.preventDefault();
    const cite = a.dataset.cite;
    if (cite) {
      this.bridge.openCitation(cite).then(
        (t) => t && this.showTarget(t),
        (e: unknown) => (this.status.textContent = `Could not open ${cite}: ${errorText(e)}`),
      );
      return;
    }
    const href = a.getAttribute('href') ?? '';
    if (/^https?:\/\//i.test(href)) this.bridge.openExternal(href);
  }

  /** The browser's own view of a citation: the file's lines with the cited ones marked, or a document. */
  private async showTarget(t: CitationTarget): Promise<void> {
    const close = el('button', { type: 'button', class: 'close', 'aria-label': 'Close' }, '×');
    if (t.kind === 'document') {
      const body = el('div', { class: 'markdown' });
      body.innerHTML = this.md.render(t.content);
      this.overlay.replaceChildren(el('div', { class: 'head' }, el('strong', {}, t.title), close), body);
    } else {
      const from = Math.max(1, t.start - 15);
      const [lines] = await this.bridge.citedLines([{ path: t.path, start: from, end: from + 59 }]);
      const pre = el('pre', { class: 'file', 'aria-label': t.path });
      for (const line of (lines?.text ?? '').split('\n')) {
        const n = Number(/^\s*(\d+)/.exec(line)?.[1] ?? 0);
        // Each line is a block of its own (chat.css): no newline inside it, or it would show twice.
        pre.append(el('span', { class: n >= t.start && n <= t.end ? 'line hit' : 'line' }, line));
      }
      this.overlay.replaceChildren(el('div', { class: 'head' }, el('strong', {}, `${t.path}:${t.start}${t.end > t.start ? `-${t.end}` : ''}`), close), pre);
    }
    this.overlay.hidden = false;
    this.overlay.querySelector<HTMLElement>('.hit')?.scrollIntoView({ block: 'center' });
  }

  /** Asks the host for the current lines of every recorded citation and marks the changed ones stale. */
  private async checkCitations(): Promise<void> {
    const items: Array<{ key: string; cited: CitedLines }> = [];
    for (const m of this.state.messages) for (const [cite, c] of Object.entries(m.answer?.cited ?? {})) if (c.hash) items.push({ key: `${m.id}|${cite}`, cited: c });
    if (items.length === 0) return;
    try {
      const now = await this.bridge.citedLines(items.map((i) => ({ path: i.cited.path, start: i.cited.start, end: i.cited.end })));
      let changed = false;
      items.forEach((item, k) => {
        const cur = now[k];
        const isStale = !cur || cur.hash !== item.cited.hash;
        if (isStale !== this.stale.has(item.key)) changed = true;
        if (isStale) this.stale.set(item.key, cur?.text ?? '(the lines could not be read)');
        else this.stale.delete(item.key);
      });
      if (changed) for (const m of this.state.messages) if (m.answer) this.queueRender(m.id);
    } catch (e) {
      this.bridge.log('warn', `citation check failed: ${errorText(e)}`);
    }
  }

  // -- sessions and models ------------------------------------------------------------------------

  private async loadSessions(): Promise<void> {
    try {
      const { active, sessions } = await this.bridge.sessions();
      // A view with no conversation of its own joins the server's shared session and shows what
      // was said in it so far (by the editor's chat, the browser's, or agents).
      const joined = !this.state.session && this.state.messages.length === 0;
      if (!this.state.session) this.state.session = active;
      const list = sessions.some((s) => s.id === this.state.session) ? sessions : [{ id: this.state.session, title: '(this session)', created_at: '', updated_at: '', exchanges: 0 }, ...sessions];
      this.sessionSelect.replaceChildren(...list.map((s) => el('option', { value: s.id, title: s.id }, s.title)));
      this.sessionSelect.value = this.state.session;
      if (joined) {
        const { events } = await this.bridge.sessionEvents(active);
        if (this.state.messages.length === 0 && events.length > 0) {
          this.state.messages = transcriptOf(events);
          this.renderAll();
          this.save();
        }
      }
    } catch (e) {
      this.bridge.log('warn', `sessions: ${errorText(e)}`);
    }
  }

  private async loadModels(): Promise<void> {
    try {
      this.models = await this.bridge.models();
    } catch (e) {
      this.bridge.log('warn', `models: ${errorText(e)}`);
    }
    this.modelSelect.replaceChildren(...this.models.choices.map((c) => el('option', { value: c.id, ...(c.detail ? { title: c.detail } : {}) }, c.label)));
    this.modelSelect.value = this.models.active;
    this.modelSelect.title = this.models.reason ? `Which model answers. ${this.models.reason}` : 'Which model answers';
    this.showModelInHeader();
  }

  /** The browser page's header names the model that answers (the editor's view has no header). */
  private showModelInHeader(): void {
    const slot = document.querySelector('.web-header .web-model');
    if (!slot) return;
    const active = this.models.choices.find((c) => c.id === this.models.active);
    slot.textContent = !active || active.id === 'none' ? 'no model: evidence briefs' : active.label;
  }

  private async selectModel(id: string): Promise<void> {
    // The pick holds at once (a question sent right after it uses it); the host confirms it.
    const before = this.models;
    this.models = { ...before, active: id };
    try {
      this.models = await this.bridge.selectModel(id);
    } catch (e) {
      if (this.models.active === id) this.models = before;
      this.status.textContent = `Could not use that model: ${errorText(e)}`;
    }
    this.modelSelect.value = this.models.active;
    this.showModelInHeader();
  }

  private async newSession(): Promise<void> {
    if (this.running) this.stop();
    try {
      const { id } = await this.bridge.useSession();
      this.state = { ...this.state, session: id, messages: [], context: [] };
      this.stale.clear();
      this.renderAll();
      this.save();
      await this.loadSessions();
      this.status.textContent = 'New session.';
      this.input.focus();
    } catch (e) {
      this.status.textContent = `Could not start a session: ${errorText(e)}`;
    }
  }

  private async switchSession(id: string): Promise<void> {
    if (id === this.state.session) return;
    if (this.running) this.stop();
    try {
      await this.bridge.useSession(id);
      const { events } = await this.bridge.sessionEvents(id);
      this.state = { ...this.state, session: id, messages: transcriptOf(events) };
      this.stale.clear();
      this.renderAll();
      this.save();
    } catch (e) {
      this.status.textContent = `Could not open the session: ${errorText(e)}`;
    }
  }

  /** Adds what other clients (agents over MCP, language-model tools) did in this session. */
  private async refresh(): Promise<void> {
    try {
      const { events } = await this.bridge.sessionEvents(this.state.session);
      this.state.messages = mergeActivity(this.state.messages, events, (author) => / chat$/.test(author));
      this.renderAll();
      this.save();
      await this.loadSessions();
      void this.checkCitations();
    } catch (e) {
      this.status.textContent = `Could not refresh: ${errorText(e)}`;
    }
  }

  private async command(c: ChatCommand): Promise<void> {
    if (c.type === 'newSession') await this.newSession();
    else if (c.type === 'refresh') await this.refresh();
    else if (c.type === 'modelsChanged') await this.loadModels();
    else if (c.type === 'focusInput') this.input.focus();
    else if (c.type === 'addContext') {
      this.addContext(c.item);
      if (c.question) this.input.value = c.question;
    } else if (c.type === 'ask') {
      this.input.value = c.question;
      await this.ask();
    }
  }

  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private save(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => this.bridge.saveState(persistable(this.state)), this.running ? 500 : 0);
  }
}

/**
 * The evidence brief's lists after its lead places ("More evidence:", "Related …:") fold under
 * their headings, closed, with their length: the places that answer stay in view.
 */
function foldLists(body: HTMLElement): void {
  for (const p of [...body.querySelectorAll(':scope > p')]) {
    const list = p.nextElementSibling;
    const heading = (p.textContent ?? '').trim();
    if (list?.tagName !== 'UL' || !/^(More evidence|Related)\b.*:$/.test(heading)) continue;
    const fold = el('details', { class: 'more' }, el('summary', {}, `${heading.slice(0, -1)} (${list.children.length})`));
    p.replaceWith(fold);
    fold.append(list);
  }
}

function chipLabel(c: ContextItem): string {
  const name = c.path.split('/').pop() ?? c.path;
  return c.kind === 'selection' && c.startLine !== undefined ? `${name}:${c.startLine}${c.endLine !== undefined && c.endLine !== c.startLine ? `-${c.endLine}` : ''}` : name;
}
