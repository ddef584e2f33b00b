/**
 * Evidence briefs from real code, rendered as the chat renders them (marked + DOMPurify, the
 * webview's renderer): a few hundred briefs over three corpora (this project's TypeScript, zod's
 * sources, the one-file-per-language fixtures), whose excerpts are cut, hold backticks and fences
 * of their own, and sit under numbered items. None may leak a fence or a list marker as text,
 * leave a code block open, or restart the numbered list.
 */
import { cpSync, existsSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import createDOMPurify from 'dompurify';
import { JSDOM } from 'jsdom';
import { marked } from 'marked';
import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/core/engine';
import { Oracle } from '../../src/core/oracle/oracle';
import { nodeWorkspaceFs } from '../../src/node/fs';
import { tempDir } from '../helpers/cli';
import { createMarkdownRenderer } from '../../webview/chat/markdown';

const ROOT = path.resolve(__dirname, '../..');
const window = new JSDOM('').window;
const md = createMarkdownRenderer(createDOMPurify(window as unknown as Parameters<typeof createDOMPurify>[0]));

const CORPORA = [
  { name: 'this project', from: path.join(ROOT, 'src') },
  { name: 'zod', from: path.join(ROOT, 'node_modules/zod/src') },
  { name: 'fixtures in 49 languages', from: path.join(ROOT, 'test/fixtures/lang') },
].filter((c) => existsSync(c.from));

/** Questions a user asks of a corpus: its definitions by name, in words, and as "where" and "why". */
function questionsFor(engine: Engine, n: number): string[] {
  const names = [...new Set([...engine.store.eachSymbol()].map((s) => s.name).filter((x) => /^[A-Za-z_][A-Za-z0-9_]{3,}$/.test(x)))].sort();
  const picked = names.filter((_, i) => i % Math.max(1, Math.floor(names.length / n)) === 0).slice(0, n);
  const forms = [(x: string) => `How does ${x} work?`, (x: string) => `Where is ${x} used?`, (x: string) => `${x}`, (x: string) => `why does ${x} fail with an error`];
  return picked.map((x, i) => forms[i % forms.length]!(x));
}

/** What is wrong with one rendered brief, if anything. */
function problems(brief: string): string[] {
  const out: string[] = [];
  let codeTokens = 0;
  void marked.walkTokens(marked.lexer(brief), (t) => {
    if (t.type === 'code') codeTokens++;
  });
  const host = window.document.createElement('div');
  host.innerHTML = md.render(brief);
  const pres = host.querySelectorAll('pre');
  if (pres.length !== codeTokens) out.push(`${pres.length} code blocks rendered for ${codeTokens} in the markdown`);
  for (const pre of pres) if (pre.querySelectorAll(':scope > code').length !== 1) out.push('a code block without exactly one <code>');
  // Text outside code blocks: no fence, no list marker left as text.
  const outside = host.cloneNode(true) as HTMLElement;
  for (const pre of outside.querySelectorAll('pre')) pre.remove();
  for (const code of outside.querySelectorAll('code')) code.remove();
  const text = outside.textContent ?? '';
  if (/```|~~~/.test(text)) out.push(`a fence outside a code block: …${text.slice(Math.max(0, text.search(/```|~~~/) - 60), text.search(/```|~~~/) + 20)}…`);
  for (const p of outside.querySelectorAll('p')) {
    const t = (p.textContent ?? '').trim();
    if (/^\d+\.\s/.test(t) || /^[-*+]\s/.test(t)) out.push(`a list marker as text: ${t.slice(0, 80)}`);
  }
  // The places that answer form one numbered list, never restarted after a snippet.
  const ordered = [...host.children].filter((e) => e.tagName === 'OL');
  if (ordered.length > 1) out.push(`${ordered.length} numbered lists (the numbering restarts)`);
  return out;
}

describe('evidence briefs from real code, rendered by the chat', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it.each(CORPORA)('$name: every brief renders whole', async ({ from }) => {
    const dir = tempDir('vlt-briefs-');
    dirs.push(dir);
    cpSync(from, dir, { recursive: true });
    const engine = await Engine.open(dir, { fs: nodeWorkspaceFs, embeddingProvider: null }, 'write');
    try {
      await engine.index();
      const oracle = new Oracle({ engine });
      const questions = questionsFor(engine, 80);
      expect(questions.length).toBeGreaterThan(20);
      let briefs = 0;
      let withCode = 0;
      const failures: string[] = [];
      for (const q of questions) {
        const answer = await oracle.ask(q, { noLlm: true, noLog: true });
        if (answer.noContext) continue;
        briefs++;
        if (answer.answer.includes('```')) withCode++;
        for (const p of problems(answer.answer)) failures.push(`${q}: ${p}`);
      }
      expect(failures).toEqual([]);
      // The set exercised what it is for: many briefs, most with excerpts.
      expect(briefs).toBeGreaterThan(questions.length / 2);
      expect(withCode).toBeGreaterThan(briefs / 2);
    } finally {
      await engine.close();
    }
  }, 240_000);
});
