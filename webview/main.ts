/**
 * The search view's script. It only renders and forwards: every `{type}` message goes to the
 * extension, which owns the engine. The last query and results survive hide/show via setState.
 */
interface Hit {
  path: string;
  start_line: number;
  symbol: string | null;
  kind: string;
  snippet: string;
}
type Incoming = { type: 'results'; query: string; hits: Hit[] } | { type: 'error'; message: string };
interface State {
  query: string;
  hits: Hit[];
}
declare function acquireVsCodeApi(): { postMessage(msg: unknown): void; getState(): State | undefined; setState(s: State): void };

const vscodeApi = acquireVsCodeApi();
const form = document.getElementById('form') as HTMLFormElement;
const input = document.getElementById('query') as HTMLInputElement;
const list = document.getElementById('results') as HTMLOListElement;
const statusLine = document.getElementById('status') as HTMLDivElement;

function render(state: State): void {
  input.value = state.query;
  list.replaceChildren(
    ...state.hits.map((h) => {
      const li = document.createElement('li');
      const title = document.createElement('a');
      title.href = '#';
      title.textContent = `${h.symbol ?? h.kind} — ${h.path}:${h.start_line}`;
      title.addEventListener('click', (ev) => {
        ev.preventDefault();
        vscodeApi.postMessage({ type: 'open', path: h.path, line: h.start_line });
      });
      const pre = document.createElement('pre');
      pre.textContent = h.snippet.split('\n').slice(0, 4).join('\n');
      li.append(title, pre);
      return li;
    }),
  );
  statusLine.textContent = state.query ? `${state.hits.length} results` : '';
}

form.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const query = input.value.trim();
  if (!query) return;
  statusLine.textContent = 'searching…';
  vscodeApi.postMessage({ type: 'search', query });
});

window.addEventListener('message', (ev: MessageEvent<Incoming>) => {
  const msg = ev.data;
  if (msg.type === 'results') {
    const state = { query: msg.query, hits: msg.hits };
    vscodeApi.setState(state);
    render(state);
  } else if (msg.type === 'error') {
    statusLine.textContent = `error: ${msg.message}`;
  }
});

const saved = vscodeApi.getState();
if (saved) render(saved);
export {};
