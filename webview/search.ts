/**
 * The search view: it renders and forwards, and the extension owns the engine. Typing searches
 * after a short pause (Enter searches at once); an answer to a query the user has since changed
 * is dropped, so results never flicker back to an older query. A kind picked in the list
 * (functions, tests, docs…) narrows the search and asks again. The last query, kind and results
 * survive hide/show through the webview state.
 */
import type { SearchKind } from '../src/protocol/lsp';
import type { SearchHostToView, SearchViewHit, SearchViewToHost } from '../src/protocol/webview';

export interface SearchState {
  query: string;
  kind?: SearchKind;
  hits: SearchViewHit[];
}
export interface SearchApi {
  postMessage(msg: SearchViewToHost): void;
  getState(): SearchState | undefined;
  setState(s: SearchState): void;
}

/** How long typing must pause before a search; queries shorter than this many characters wait for Enter. */
export const TYPE_DELAY_MS = 250;
export const MIN_TYPED_CHARS = 2;

export function mountSearchView(doc: Document, api: SearchApi, win: Pick<Window, 'addEventListener' | 'setTimeout' | 'clearTimeout'>): { receive(msg: SearchHostToView): void } {
  const form = doc.getElementById('form') as HTMLFormElement;
  const input = doc.getElementById('query') as HTMLInputElement;
  const list = doc.getElementById('results') as HTMLOListElement;
  const statusLine = doc.getElementById('status') as HTMLDivElement;
  /** The kind picker; absent in a page without one, which then searches every kind. */
  const kindSelect = doc.getElementById('kind') as HTMLSelectElement | null;
  const kind = (): SearchKind | undefined => (kindSelect?.value ? (kindSelect.value as SearchKind) : undefined);
  /** The query and kind whose answer the view waits for; answers to any other are stale. */
  let pending: string | undefined;
  let timer: number | undefined;
  const key = (query: string, k: SearchKind | undefined) => `${k ?? ''}\u0000${query}`;

  const render = (state: SearchState): void => {
    input.value = state.query;
    if (kindSelect) kindSelect.value = state.kind ?? '';
    list.replaceChildren(
      ...state.hits.map((h) => {
        const li = doc.createElement('li');
        const title = doc.createElement('a');
        title.href = '#';
        title.textContent = `${h.symbol ?? h.kind} — ${h.path}:${h.start_line}${h.stale ? ' (changed since indexed)' : ''}`;
        title.addEventListener('click', (ev) => {
          ev.preventDefault();
          api.postMessage({ type: 'open', path: h.path, line: h.start_line });
        });
        const pre = doc.createElement('pre');
        pre.textContent = h.snippet.split('\n').slice(0, 4).join('\n');
        li.append(title, pre);
        return li;
      }),
    );
    statusLine.textContent = state.query ? `${state.hits.length} results` : '';
  };

  const search = (query: string): void => {
    if (timer !== undefined) win.clearTimeout(timer);
    timer = undefined;
    const k = kind();
    if (!query || key(query, k) === pending) return;
    pending = key(query, k);
    statusLine.textContent = 'searching…';
    api.postMessage({ type: 'search', query, ...(k ? { kind: k } : {}) });
  };

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const query = input.value.trim();
    // Enter asks again even for the query already shown.
    pending = undefined;
    search(query);
  });
  input.addEventListener('input', () => {
    if (timer !== undefined) win.clearTimeout(timer);
    const query = input.value.trim();
    if (query.length < MIN_TYPED_CHARS) {
      timer = undefined;
      return;
    }
    timer = win.setTimeout(() => search(query), TYPE_DELAY_MS);
  });
  // Another kind asks again at once, for the query in the box.
  kindSelect?.addEventListener('change', () => {
    pending = undefined;
    search(input.value.trim());
  });

  const receive = (msg: SearchHostToView): void => {
    if (msg.type === 'results') {
      if (pending !== undefined && key(msg.query, msg.kind) !== pending) return;
      pending = undefined;
      const state: SearchState = { query: msg.query, ...(msg.kind ? { kind: msg.kind } : {}), hits: msg.hits };
      api.setState(state);
      const typing = input.value;
      render(state);
      // The user kept typing while this query ran: keep what they typed.
      if (typing.trim() !== msg.query) input.value = typing;
    } else if (msg.type === 'error') {
      if (msg.query !== undefined && pending !== undefined && key(msg.query, msg.kind) !== pending) return;
      pending = undefined;
      statusLine.textContent = `error: ${msg.message}`;
    }
  };
  win.addEventListener('message', (ev) => receive((ev as MessageEvent<SearchHostToView>).data));

  const saved = api.getState();
  if (saved) render(saved);
  return { receive };
}
