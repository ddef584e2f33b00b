/**
 * Racing a promise against an abort signal, shared by the engine's clients of slow services
 * (embeddings, chat, git history). Those clients notice an abort only between their own steps;
 * without the race, a cancel during a back-off sleep or a hung call would wait it out.
 */
import { VltError } from './errors';

/** A `CANCELLED` error saying what was cancelled ("embedding"), with the abort reason as cause. */
export function cancelledError(what: string, cause?: unknown): VltError {
  return new VltError('CANCELLED', `${what} cancelled`, undefined, cause === undefined ? undefined : { cause });
}

/**
 * Settles with `p`, or rejects with a `CANCELLED` error naming `what` as soon as `signal`
 * aborts. The abandoned promise still settles later; its rejection is swallowed so that it is
 * not reported as unhandled.
 */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      p.catch(() => undefined);
      reject(cancelledError(what, signal.reason));
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
