/**
 * Time for a language server's calls: a call's deadline raced against the caller's signal
 * ({@link CallScope}), and the timers the client waits with.
 */

export const EXPIRED = Symbol('expired');
export const ABORTED = Symbol('aborted');

/**
 * The time a call has: `wait` races a promise against the deadline and the caller's signal;
 * `signal` aborts when the call ends for any reason, so waiters can clean up.
 */
export class CallScope {
  private readonly deadline: number;
  private readonly controller = new AbortController();
  private readonly stop: Promise<never>;
  private timer: NodeJS.Timeout | undefined;
  private readonly onAbort: () => void;

  constructor(
    timeoutMs: number,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    const ms = Number.isFinite(timeoutMs) ? Math.max(0, timeoutMs) : 0;
    this.deadline = Date.now() + ms;
    let reject!: (e: symbol) => void;
    this.stop = new Promise<never>((_, r) => (reject = r));
    this.stop.catch(() => {});
    this.onAbort = () => reject(ABORTED);
    if (callerSignal?.aborted) reject(ABORTED);
    else callerSignal?.addEventListener('abort', this.onAbort, { once: true });
    this.timer = setTimeout(() => reject(EXPIRED), ms);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  remaining(): number {
    return this.deadline - Date.now();
  }

  wait<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.stop]);
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.callerSignal?.removeEventListener('abort', this.onAbort);
    this.controller.abort();
  }
}

export function elapsed(t0: number): number {
  return Math.round(performance.now() - t0);
}

// These timers keep the process alive on purpose: `await dispose()` must run to its end.
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), ms)));
  return Promise.race([p, expiry]).finally(() => clearTimeout(timer));
}
