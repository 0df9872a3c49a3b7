// Generated from the declarations of crates/core (crates/core/src/surface/): `pnpm surface:generate` writes it, `pnpm surface:check` holds it to them. Do not edit.
import type {
  AccountInfo,
  CallOptions,
  ClientRequestMap,
  ForkThreadOptions,
  GoalChange,
  ListMcpServersOptions,
  ListModelsOptions,
  ListThreadsOptions,
  LoginHandle,
  McpServerStatus,
  Model,
  ReadThreadOptions,
  RefusedMethod,
  RequestMethod,
  RequestParams,
  RequestResult,
  RevertThreadOptions,
  SkillMetadata,
  StartLoginOptions,
  ThreadGoal,
  ThreadRecord,
  ThreadSummary,
  Usage,
} from '../index.js'

/**
 * Who is logged in, and the plan's limits where the server tells them (`account/read`, then
 * `account/rateLimits/read` on the same child).
 */
export function readAccount(options?: CallOptions): Promise<AccountInfo>

/** Every page of `model/list`: the models Codex offers, hidden ones only with `includeHidden`. */
export function listModels(options?: ListModelsOptions): Promise<Model[]>

/**
 * One page of the stored threads, newest first; pass `nextCursor` back as `cursor` for the
 * next.
 */
export function listThreads(
  options?: ListThreadsOptions,
): Promise<{ threads: ThreadSummary[]; nextCursor: string | null }>

/**
 * The stored thread (`thread/read`), as the server sent it; with `includeTurns`, its turns
 * and their items.
 */
export function readThread(threadId: string, options?: ReadThreadOptions): Promise<ThreadRecord>

/**
 * A new thread with this one's history (through `lastTurnId`, inclusive), listed at once; run
 * a turn on it with `runTurn({ threadId })`.
 */
export function forkThread(threadId: string, options?: ForkThreadOptions): Promise<{ threadId: string }>

/**
 * Stores `apiKey` as the user's Codex login (Codex writes `auth.json`), then reads the account
 * as `readAccount` does. The key goes into the request's params and nowhere else: never on a
 * command line, in a log record, an error or an event. `LOGIN_FAILED` when Codex refuses it; a
 * key that is empty or holds whitespace or a control character is a `TypeError` naming
 * `apiKey`.
 */
export function loginWithApiKey(apiKey: string, options?: CallOptions): Promise<AccountInfo>

/**
 * Starts a ChatGPT login. Never throws: bad options reject `started` and `completed` with a
 * TypeError.
 */
export function startLogin(options?: StartLoginOptions): LoginHandle

/** Removes the stored login (Codex deletes `auth.json`). */
export function logout(options?: CallOptions): Promise<void>

/** Sets the thread's name (what `ThreadSummary.name` shows). */
export function renameThread(threadId: string, name: string, options?: CallOptions): Promise<void>

/** Moves the thread out of `listThreads()` into `listThreads({ archived: true })`. */
export function archiveThread(threadId: string, options?: CallOptions): Promise<void>

/** Moves an archived thread back. */
export function unarchiveThread(threadId: string, options?: CallOptions): Promise<void>

/** Deletes the thread: gone from both lists, and `readThread` fails. */
export function deleteThread(threadId: string, options?: CallOptions): Promise<void>

/**
 * Patches the Git facts Codex keeps for the thread (`gitInfo`: `sha`, `branch`, `originUrl`;
 * what is absent stays, `null` clears), without loading it; resolves with the thread as
 * Codex then has it.
 */
export function updateThreadMetadata(
  threadId: string,
  metadata: Omit<ClientRequestMap['thread/metadata/update']['params'], 'threadId'>,
  options?: CallOptions,
): Promise<ThreadRecord>

/**
 * "Edit and resend": removes `beforeTurnId` and every later turn from the thread's history
 * (not the changes those turns made to files); then `runTurn({ threadId })` goes on from
 * there.
 */
export function revertThread(threadId: string, options: RevertThreadOptions): Promise<void>

/**
 * Compacts the thread's context: Codex runs a compaction turn of its own (one model
 * request); the call ends when it completed, with that turn's usage. `TURN_FAILED` when it
 * failed.
 */
export function compactThread(threadId: string, options?: CallOptions): Promise<{ usage: Usage | null }>

/** The thread's goal, or null. */
export function readGoal(threadId: string, options?: CallOptions): Promise<ThreadGoal | null>

/**
 * Creates or changes the thread's goal, without loading the thread (a loaded, idle thread with
 * an active goal starts working toward it at once). The next turn on the thread works toward
 * an active goal; `until: 'idle'` waits for the continuations Codex starts for it.
 */
export function setGoal(threadId: string, goal: GoalChange, options?: CallOptions): Promise<ThreadGoal>

/** Clears the thread's goal. */
export function clearGoal(threadId: string, options?: CallOptions): Promise<void>

/**
 * The skills Codex finds for `cwd` (the project's `.agents/skills` and `.codex/skills`, the
 * user's `$CODEX_HOME/skills`), each as Codex describes it; give one to a turn as
 * `{ type: 'skill', name, path }`.
 */
export function listSkills(options?: CallOptions): Promise<SkillMetadata[]>

/**
 * Every MCP server Codex knows for `cwd`, disabled ones included (every page of
 * `mcpServerStatus/list`). Without `connect`, none is started: each server the configuration
 * enables reads `runtimeStatus: 'notStarted'` (no tools, no server info), each it disables
 * `'disabled'`; plugin servers are not listed. With `connect: true`, Codex starts every
 * enabled server (stdio commands run, remote servers are contacted) to report its tools and
 * auth status, and the call's child ends them before it settles.
 */
export function listMcpServers(options?: ListMcpServersOptions): Promise<McpServerStatus[]>

/**
 * Any other client method on one child: `params` as given (`{}` when absent), the server's
 * result as it sent it; typed by method from the pinned Codex's schema. A method the running
 * Codex does not have rejects with `METHOD_UNSUPPORTED` (detail: `method`, `codexVersion`).
 * Whatever the method leaves running (a `command/exec`, an `fs/watch`) ends with the child.
 */
export function request<M extends RequestMethod | (string & {})>(
  method: M & (M extends RefusedMethod ? never : unknown),
  params?: RequestParams<M>,
  options?: CallOptions,
): Promise<RequestResult<M>>
