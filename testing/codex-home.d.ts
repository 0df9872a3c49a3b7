// Types for codex-home.js. `@rennet/codex/testing` (index.d.ts) re-exports what apps use; the
// names marked @internal are this package's own suites', demo's and bench's, and are not
// exported by the kit.

/**
 * The codex-cli version this package is tested with.
 * @internal
 */
export const PINNED_CODEX_VERSION: string

/**
 * Absolute path of the native `codex` binary of the installed `@openai/codex` (its platform
 * package), looked up from `from`, beside this package, then the working directory. Throws when
 * `@openai/codex` is not installed.
 */
export function codexBinaryPath(options?: { from?: string }): string

/**
 * The version `codex --version` prints.
 * @internal
 */
export function codexVersion(bin: string): string

/**
 * The Codex binary under test: `RENNET_TEST_CODEX_BIN` (an absolute path), else `codexBinaryPath()`.
 * @internal
 */
export function codexUnderTest(): { path: string; version: string }

/**
 * The config.toml that selects the loopback mock provider, with `extra` merged into it table by
 * table (a table the kit writes too, such as `[features]`, gets the extra keys; an extra value wins
 * over the kit's): never a duplicate table. Extra text that is not TOML is a TypeError.
 * @internal
 */
export function renderConfigToml(options: { baseUrl: string; model?: string; extra?: string }): string

export interface CodexHome {
  root: string
  home: string
  codexHome: string
  configPath: string
  configText: string
  /** Pass to runTurn's `env` (merged over the inherited environment). */
  env: Record<string, string>
  /** The binary under test (`codexUnderTest()`, looked up when read; throws when none is installed). */
  readonly codexPath: string
  initialHash: string | null
  configHash(): string | null
  readConfig(): string
  cleanup(): void
}

/** The environment that confines a Codex child to temporary homes. */
export function isolatedEnv(home: string, codexHome: string): Record<string, string>

export function createCodexHome(options: {
  baseUrl: string
  model?: string
  /** More config.toml, merged into the kit's own tables (see `renderConfigToml`). */
  extraConfig?: string
  prefix?: string
}): CodexHome

/** A Codex home nobody is logged in to (`createLoggedOutHome`). */
export interface LoggedOutHome {
  root: string
  home: string
  codexHome: string
  configPath: string
  /** Pass to runTurn's or a call's `env`. */
  env: Record<string, string>
  cleanup(): void
}

/**
 * A fresh HOME and CODEX_HOME (both temporary, both present: Codex exits when CODEX_HOME is
 * missing) for a Codex nobody is logged in to: the default OpenAI provider, no login, no API
 * key. `account/read` reports `{ account: null, requiresOpenaiAuth: true }`: a turn fails
 * `AUTH_REQUIRED` before its thread. `config`: its config.toml (default empty).
 */
export function createLoggedOutHome(options?: { prefix?: string; config?: string }): LoggedOutHome

export interface GitCwd {
  path: string
  cleanup(): void
}

export function createGitCwd(options?: { prefix?: string; files?: Record<string, string> }): GitCwd
