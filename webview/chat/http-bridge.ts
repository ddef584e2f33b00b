/**
 * The chat's bridge in a browser, to `vlt serve`: JSON requests to `/chat/api/*` and a
 * question as a `POST /chat/api/ask` whose response is a Server-Sent Events stream (`event`
 * lines with the progress and text, then one `answer` or `error`). A request is authorised by
 * the session cookie the one-time link set together with the session key the login page carried:
 * the page keeps the key in `sessionStorage` (per origin, so no other port of the host can read
 * it) and sends it in a header. The page never sees the bearer token.
 */
import type { AskEvent, AskHandle, AskParams, Bridge, ChatAnswer, ChatCommand } from './bridge';

const API = '/chat/api';
const KEY_HEADER = 'X-Vlt-Chat-Key';
const KEY_STORE = 'vlt-chat-key';

/**
 * The session key: taken once from the login page's meta element into `sessionStorage` (the
 * element is removed and the address bar shows `/chat/`), read from there after a reload.
 */
export function sessionKey(): string {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="vlt-chat-key"]');
  if (meta) {
    const key = meta.content;
    meta.remove();
    try {
      sessionStorage.setItem(KEY_STORE, key);
    } catch {
      // No storage: the key lives as long as this page.
    }
    if (location.pathname !== '/chat/' || location.search) history.replaceState(null, '', '/chat/');
    return key;
  }
  try {
    return sessionStorage.getItem(KEY_STORE) ?? '';
  } catch {
    return '';
  }
}

let key: string | undefined;
function headers(extra: Record<string, string>): Record<string, string> {
  key ??= sessionKey();
  return { ...extra, [KEY_HEADER]: key };
}

/** Ends the browser session on the server and forgets the key. */
export async function signOut(): Promise<void> {
  try {
    await call('logout');
  } finally {
    key = '';
    try {
      sessionStorage.removeItem(KEY_STORE);
    } catch {
      // Nothing stored.
    }
  }
}

async function call<T>(method: string, body?: unknown): Promise<T> {
  const res = await fetch(`${API}/${method}`, {
    method: 'POST',
    headers: headers({ 'Content-Type': 'application/json' }),
    body: JSON.stringify(body ?? {}),
    credentials: 'same-origin',
  });
  const data = (await res.json().catch(() => ({ error: `HTTP ${res.status}` }))) as { result?: T; error?: string };
  if (!res.ok || data.error !== undefined) throw new Error(data.error ?? `HTTP ${res.status}`);
  return data.result as T;
}

/** Parses `text/event-stream` frames (`event:` and `data:` lines, blank-line separated). */
export async function readEvents(body: ReadableStream<Uint8Array>, onFrame: (event: string, data: string) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true }).replace(/\r\n/g, '\n');
    let end: number;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of frame.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) onFrame(event, data.join('\n'));
    }
  }
}

export function httpBridge(storageKey: string): Bridge {
  return {
    kind: 'browser',
    ask(params: AskParams, onEvent: (e: AskEvent) => void): AskHandle {
      const ctl = new AbortController();
      const answer = (async () => {
        const res = await fetch(`${API}/ask`, {
          method: 'POST',
          headers: headers({ 'Content-Type': 'application/json', Accept: 'text/event-stream' }),
          body: JSON.stringify(params),
          credentials: 'same-origin',
          signal: ctl.signal,
        });
        if (!res.ok || !res.body) {
          const data = (await res.json().catch(() => ({}))) as { error?: string };
          throw new Error(data.error ?? `HTTP ${res.status}`);
        }
        let result: ChatAnswer | undefined;
        let error: string | undefined;
        await readEvents(res.body, (event, data) => {
          if (event === 'event') onEvent(JSON.parse(data) as AskEvent);
          else if (event === 'answer') result = JSON.parse(data) as ChatAnswer;
          else if (event === 'error') error = (JSON.parse(data) as { error: string }).error;
        });
        if (error !== undefined) throw new Error(error);
        if (!result) throw new Error('CANCELLED: the answer stream ended early');
        return result;
      })().catch((e: unknown) => {
        if (ctl.signal.aborted) throw new Error('CANCELLED: stopped');
        throw e instanceof Error ? e : new Error(String(e));
      });
      return { answer, cancel: () => ctl.abort() };
    },
    sessions: () => call('sessions'),
    useSession: (id) => call('useSession', id !== undefined ? { id } : {}),
    sessionEvents: (id) => call('sessionEvents', id !== undefined ? { id } : {}),
    citedLines: (items) => call('citedLines', { items }),
    openCitation: (citation) => call('citationTarget', { citation }),
    // A page has no workspace to resolve dropped files against: only relative paths are kept.
    workspacePaths: (uris) => Promise.resolve(uris.filter((u) => !/^[a-z][\w+.-]*:/i.test(u) && !u.startsWith('/'))),
    openExternal: (url) => {
      if (/^https?:\/\//i.test(url)) window.open(url, '_blank', 'noopener,noreferrer');
    },
    models: () => call('models'),
    selectModel: (id) => call('selectModel', { id }),
    loadState: () => {
      try {
        return Promise.resolve(JSON.parse(localStorage.getItem(storageKey) ?? 'null') as unknown);
      } catch {
        return Promise.resolve(undefined);
      }
    },
    saveState: (s) => {
      try {
        localStorage.setItem(storageKey, JSON.stringify(s));
      } catch {
        // A full or disabled storage loses only the transcript across reloads.
      }
    },
    onCommand: (_fn: (c: ChatCommand) => void) => {},
    log: (level, message) => console[level](`vlt chat: ${message}`),
  };
}
