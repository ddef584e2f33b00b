/**
 * The sidebar's search view on jsdom: typing searches after a pause (not on every key, not for a
 * one-letter query), Enter searches at once, and an answer to a query the user has since changed
 * is dropped.
 */
import { JSDOM } from 'jsdom';
import { describe, expect, it, vi } from 'vitest';
import { mountSearchView, TYPE_DELAY_MS, type SearchState } from '../../webview/search';

function setup(withKinds = false) {
  const kinds = withKinds ? '<select id="kind"><option value="">all kinds</option><option value="function">functions</option><option value="test">tests</option></select>' : '';
  const dom = new JSDOM(`<form id="form"><input id="query">${kinds}</form><div id="status"></div><ol id="results"></ol>`);
  const posted: unknown[] = [];
  let state: SearchState | undefined;
  const api = { postMessage: (m: unknown) => posted.push(m), getState: () => state, setState: (s: SearchState) => (state = s) };
  const view = mountSearchView(dom.window.document, api, { addEventListener: () => undefined, setTimeout: ((fn: () => void, ms: number) => setTimeout(fn, ms)) as unknown as Window['setTimeout'], clearTimeout: ((t: number) => clearTimeout(t)) as Window['clearTimeout'] });
  const doc = dom.window.document;
  const input = doc.getElementById('query') as HTMLInputElement;
  const type = (text: string) => {
    input.value = text;
    input.dispatchEvent(new dom.window.Event('input'));
  };
  const results = () => [...doc.querySelectorAll('#results a')].map((a) => a.textContent);
  return { view, posted, type, input, doc, dom, results };
}

const hit = (path: string) => ({ path, start_line: 1, symbol: path, kind: 'function', snippet: '' });

describe('the search view', () => {
  it('searches as you type, once the typing pauses', () => {
    vi.useFakeTimers();
    try {
      const { posted, type } = setup();
      type('p');
      type('pa');
      type('par');
      type('pars');
      vi.advanceTimersByTime(TYPE_DELAY_MS - 1);
      expect(posted).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(posted).toEqual([{ type: 'search', query: 'pars' }]);
      // A one-letter query waits for Enter.
      type('x');
      vi.advanceTimersByTime(TYPE_DELAY_MS * 2);
      expect(posted).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('searches at once on Enter, and drops the answer to a query the user has since changed', () => {
    vi.useFakeTimers();
    try {
      const { view, posted, type, input, doc, dom, results } = setup();
      type('parse');
      vi.advanceTimersByTime(TYPE_DELAY_MS);
      type('parse duration');
      doc.getElementById('form')!.dispatchEvent(new dom.window.Event('submit', { cancelable: true }));
      expect(posted).toEqual([
        { type: 'search', query: 'parse' },
        { type: 'search', query: 'parse duration' },
      ]);
      view.receive({ type: 'results', query: 'parse', hits: [hit('old.go')] });
      expect(results()).toEqual([]);
      view.receive({ type: 'results', query: 'parse duration', hits: [hit('time/format.go')] });
      expect(results()).toEqual(['time/format.go — time/format.go:1']);
      expect(input.value).toBe('parse duration');
      expect(doc.getElementById('status')!.textContent).toBe('1 results');
    } finally {
      vi.useRealTimers();
    }
  });

  it('narrows the search to the kind picked, asks again when the kind changes, and keeps only the answer for the current kind', () => {
    vi.useFakeTimers();
    try {
      const { view, posted, type, doc, dom, results } = setup(true);
      type('parse');
      vi.advanceTimersByTime(TYPE_DELAY_MS);
      const select = doc.getElementById('kind') as HTMLSelectElement;
      select.value = 'test';
      select.dispatchEvent(new dom.window.Event('change'));
      expect(posted).toEqual([
        { type: 'search', query: 'parse' },
        { type: 'search', query: 'parse', kind: 'test' },
      ]);
      // The answer for every kind comes late: the view waits for the tests.
      view.receive({ type: 'results', query: 'parse', hits: [hit('parse.go')] });
      expect(results()).toEqual([]);
      view.receive({ type: 'results', query: 'parse', kind: 'test', hits: [hit('parse_test.go'), { ...hit('edited_test.go'), stale: true }] });
      // A file changed since it was indexed says so (its snippet is what the file holds now).
      expect(results()).toEqual(['parse_test.go — parse_test.go:1', 'edited_test.go — edited_test.go:1 (changed since indexed)']);
      // Back to every kind: asked again at once.
      select.value = '';
      select.dispatchEvent(new dom.window.Event('change'));
      expect(posted.at(-1)).toEqual({ type: 'search', query: 'parse' });
    } finally {
      vi.useRealTimers();
    }
  });
});
