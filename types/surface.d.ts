// Generated from the declarations of crates/core (crates/core/src/surface/): `pnpm surface:generate` writes it, `pnpm surface:check` holds it to them. Do not edit.

/** Token counts of one turn or of a whole thread. */
export type Usage = {
  /** Input tokens, the cached ones included. */
  input: number
  /** Input tokens read from the provider's cache. */
  cacheRead: number
  /** Output tokens, the reasoning ones included. */
  output: number
  /** Output tokens spent on reasoning. */
  reasoning: number
  /** All tokens of the turn (or thread), as Codex counts them. */
  total: number
}

/**
 * Where a failure comes from: the turn (Codex said it failed), the protocol (`jsonrpc`: a
 * request refused, late or answered oddly), the child's exit, its start (`spawn`), its output
 * (`parse`: stdout is not the protocol), or the package itself (`internal`).
 */
export type FailureSource = 'turn' | 'jsonrpc' | 'exit' | 'spawn' | 'parse' | 'internal'

/**
 * Every code a failure carries: stable, for a program to tell failures apart (each one is
 * described in docs/failures.md).
 */
export type FailureCode =
  | 'CODEX_NOT_FOUND'
  | 'CODEX_NOT_EXECUTABLE'
  | 'CWD_NOT_FOUND'
  | 'SPAWN_FAILED'
  | 'HOST_GUARD_UNAVAILABLE'
  | 'NATIVE_ADDON_UNAVAILABLE'
  | 'MCP_NOT_LOOPBACK'
  | 'MCP_POLICY_INVALID'
  | 'MCP_INVENTORY_FAILED'
  | 'MCP_INVENTORY_INVALID'
  | 'MCP_INVENTORY_TOO_LARGE'
  | 'MCP_NAME_COLLISION'
  | 'REQUEST_FAILED'
  | 'REQUEST_TIMEOUT'
  | 'UNEXPECTED_RESPONSE'
  | 'ISOLATION_NOT_CONFIRMED'
  | 'AUTH_REQUIRED'
  | 'MALFORMED_FRAME'
  | 'INVALID_UTF8'
  | 'FRAME_TOO_LARGE'
  | 'PREAMBLE_TOO_LONG'
  | 'STDOUT_READ_FAILED'
  | 'PROCESS_EXITED'
  | 'TURN_FAILED'
  | 'STRUCTURED_OUTPUT_INVALID'
  | 'METHOD_UNSUPPORTED'
  | 'LOGIN_FAILED'
  | 'LOGIN_IN_PROGRESS'
  | 'INTERNAL_ERROR'
  | 'CANCELLED'
  | 'STRUCTURED_OUTPUT_MISMATCH'
  | 'TURN_NOT_STEERABLE'
  | 'TURN_ENDED'
  | 'ALREADY_STARTED'
  | 'TURN_RUNNING'
  | 'CONVERSATION_CLOSED'

/**
 * Why Codex's model request failed, from the `codexErrorInfo` Codex sent (a UI tells these
 * apart: "log in again", "usage limit reached", "try again later", …).
 */
export type FailureReason =
  | 'unauthorized'
  | 'usageLimit'
  | 'rateLimited'
  | 'overloaded'
  | 'serverError'
  | 'contextWindowExceeded'
  | 'connection'
  | 'badRequest'
  | 'other'

/** Why a turn or a call failed. `code` is stable; `message` is the provider's text, verbatim. */
export type Failure = {
  /** Where it comes from. */
  source: FailureSource
  /** The provider's message or the process detail, verbatim. */
  message: string
  /** Stable machine code. */
  code: FailureCode
  /**
   * What more there is to know, by code: the JSON-RPC `{method, code, data}`, the exit and
   * the stderr tail, `codexErrorInfo`…; absent when there is nothing.
   */
  detail?: unknown
  /**
   * Trying the same again can succeed: a rate limit, an overloaded or failing server, a lost
   * connection, a deadline that passed.
   */
  retryable: boolean
  /** Why Codex's model request failed, from its `codexErrorInfo`; absent where Codex said nothing. */
  reason?: FailureReason
}
