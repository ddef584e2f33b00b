/**
 * The message of anything thrown, for the extension's log lines and toasts. The extension loads
 * no engine code (src/core/errors.ts has the same helper for the engine and its hosts).
 */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
