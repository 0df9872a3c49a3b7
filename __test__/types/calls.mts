// Compiled, never run (`pnpm test:types`): the calls around turns as an app's UI code uses them.
import { CallError, forkThread, listModels, listThreads, readAccount, readThread } from '@rennet/codex'
import type { AccountInfo, Model, ThreadRecord, ThreadSummary } from '@rennet/codex'
import codex from '@rennet/codex'
import type { FakeCodexScript } from '@rennet/codex/testing'

/** A login banner. */
export async function banner(): Promise<string> {
  const info: AccountInfo = await readAccount({ requestTimeoutMs: 10_000 })
  const account = info.account
  if (account === null) return info.requiresOpenaiAuth ? 'Log in to Codex' : ''
  if (account.type === 'chatgpt') return `${account.email ?? ''} (${account.planType})`
  // @ts-expect-error the account is the protocol's union, not any object
  account.email
  const used: number | undefined = info.rateLimits?.rateLimits.primary?.usedPercent
  return used === undefined ? account.type : `${account.type}: ${used}% used`
}

/** A model picker. */
export async function picker(signal: AbortSignal): Promise<Array<{ value: string; label: string }>> {
  const models: Model[] = await listModels({ signal, includeHidden: false })
  return models.map((m) => ({ value: m.model, label: m.displayName }))
}

/** A thread sidebar, and branching from a turn. */
export async function sidebar(cwd: string): Promise<string[]> {
  const { threads, nextCursor }: { threads: ThreadSummary[]; nextCursor: string | null } = await listThreads({ cwd, limit: 20 })
  if (nextCursor !== null) await listThreads({ cwd, cursor: nextCursor })
  const first: ThreadRecord = await readThread(threads[0].id, { includeTurns: true })
  const { threadId }: { threadId: string } = await forkThread(first.id, { lastTurnId: first.turns[0].id })
  // @ts-expect-error a call's own options belong to it
  await readAccount({ includeHidden: true })
  try {
    await codex.readThread(threadId)
  } catch (error) {
    if (error instanceof CallError && error.code === 'REQUEST_FAILED') return [error.message]
    // @ts-expect-error codes are the contract's
    if (error instanceof CallError && error.code === 'NOT_A_CODE') return []
  }
  return threads.map((t) => t.preview)
}

export const script: FakeCodexScript = {
  account: { account: null, requiresOpenaiAuth: true },
  calls: {
    'account/rateLimits/read': { error: { code: -32600, message: 'codex account authentication required to read rate limits' } },
    'model/list': { pages: [[{ id: 'a' }], [{ id: 'b' }]] },
    'thread/read': 'never',
    'thread/list': { exit: { code: 1, stderr: 'locked' } },
  },
}
