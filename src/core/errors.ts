/**
 * The one error type of the engine. Every failure a user can cause or meet carries a
 * stable string `code` from {@link ERROR_CODES}; hosts translate it (CLI exit code and one
 * stderr line, MCP `isError` result, webview `{type: "error"}` message).
 */
export const ERROR_CODES = {
  USAGE: 'bad usage of a command or tool',
  PATH_NOT_FOUND: 'path does not exist',
  NOT_A_DIRECTORY: 'path is not a directory',
  PATH_OUTSIDE_WORKSPACE: 'path escapes the workspace',
  ACCESS_DENIED: 'the path is not readable by tools: vlt state, version control, an ignored file, a secret, or a vault outside the workspace',
  CONFIG_INVALID: 'vlt.toml is invalid',
  INDEX_LOCKED: 'another process is writing the index',
  INDEX_CORRUPT: 'the index file is corrupt',
  INDEX_MISSING: 'the workspace has no index yet',
  PARSER_UNAVAILABLE: 'no parser for this language',
  EMBEDDING_FAILED: 'the embedding provider failed',
  EMBEDDING_BUDGET: 'embedding would spend past the configured cap',
  LLM_FAILED: 'the language model failed',
  LLM_NOT_CONFIGURED: 'no language model is configured',
  NOT_FOUND: 'no such note, thread or session',
  REF_NOT_FOUND: 'no node of the architecture graph has this id',
  LINT_FAILED: 'an architecture rule is broken',
  PATH_OUTSIDE_VAULT: 'note path escapes the notes vault',
  READ_ONLY: 'the note lies in a read-only part of the vault',
  MEMORY_LOCKED: 'another process holds the memory store too long',
  IO: 'file system error',
  LSP_UNAVAILABLE: 'no language server could answer',
  GIT_UNAVAILABLE: 'git is missing, or the folder is not a repository with history',
  RESTRICTED: 'not done in an untrusted workspace',
  CANCELLED: 'operation cancelled',
  INTERNAL: 'internal error',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class VltError extends Error {
  override readonly name = 'VltError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The message of anything thrown: an Error's message, or the value as text. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function isVltError(e: unknown): e is VltError {
  return e instanceof VltError;
}

/** Wraps any thrown value as a VltError, keeping VltErrors as they are. */
export function toVltError(e: unknown, code: ErrorCode = 'INTERNAL'): VltError {
  if (e instanceof VltError) return e;
  const message = errorMessage(e);
  return new VltError(code, message, undefined, { cause: e });
}
