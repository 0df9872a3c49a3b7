// Compiled, never run (`pnpm test:types`). Each `@ts-expect-error` proves that narrowing really
// narrows: if a type widened to `any` or `unknown`, the directive would be unused and tsc fails.
import { CodexError, prepareTurn, runReview, runTurn, runUtility, setLogger, SteerError, UtilityError } from '@rennet/codex'
import type { FailureCode, HarnessEvent, LogRecord, NativeItem, TerminalEvent } from '@rennet/codex'
import codex from '@rennet/codex'
import { toStandardJsonSchema } from '@valibot/to-json-schema'
import { type } from 'arktype'
import * as v from 'valibot'
import { z } from 'zod'

/** A UI transcript line per event, as an adapter would build it. */
export function describe(event: HarnessEvent): string {
  switch (event.type) {
    case 'messageDelta':
      return event.delta
    case 'itemStarted':
    case 'itemCompleted':
      return describeItem(event.item)
    case 'serverRequest':
      return `${event.method} → ${event.reply}`
    case 'terminal':
      return event.failure ? `${event.failure.source}/${event.failure.code}: ${event.failure.message}` : event.status
    case 'usage':
      return String(event.turn.total)
    case 'turnCompleted': {
      // The outcome before the child is gone: the same shape as the terminal, codes included.
      const code: FailureCode | undefined = event.failure?.code
      // @ts-expect-error failure codes are the contract's, not any string
      const typo: FailureCode = 'CODEX_NOT_FOUD'
      if (code === 'HOST_GUARD_UNAVAILABLE') return `${event.status}: no host-death guard`
      return `${event.status} ${code ?? ''} ${typo}`
    }
    case 'started':
      return event.turnKey
    default:
      // @ts-expect-error not every remaining event carries `delta`
      return event.delta
  }
}

export function describeItem(item: NativeItem): string {
  switch (item.type) {
    case 'agentMessage':
      // @ts-expect-error an agent message has no command
      item.command
      return item.text
    case 'commandExecution': {
      const exit: number | null = item.exitCode
      const status: 'inProgress' | 'completed' | 'failed' | 'declined' = item.status
      return `$ ${item.command} (${status}, exit ${exit ?? '-'})`
    }
    case 'fileChange':
      return item.changes.map((change) => change.path).join(', ')
    case 'reasoning':
      return item.summary.join('\n')
    case 'mcpToolCall':
      return `${item.server}.${item.tool}`
    default:
      return item.id
  }
}

export async function transcript(cwd: string): Promise<TerminalEvent> {
  const controller = new AbortController()
  const turn = runTurn({ prompt: 'hi', cwd, signal: controller.signal })
  const lines: string[] = []
  for await (const event of turn) lines.push(describe(event))
  // @ts-expect-error the options are checked: `cwd` is required
  runTurn({ prompt: 'hi' })
  // @ts-expect-error input items are typed
  runTurn({ cwd, input: [{ type: 'audio', path: '/a.wav' }] })
  runTurn({ cwd, input: [{ type: 'text', text: 'look' }, { type: 'localImage', path: '/a.png', detail: 'high' }] })
  await turn.steer('more').catch((e: SteerError) => e.code satisfies 'TURN_NOT_STEERABLE' | 'TURN_ENDED')
  return turn.outcome
}

export async function prepared(cwd: string): Promise<string | null> {
  const next = prepareTurn({ cwd, idleTimeoutMs: 60_000 })
  // @ts-expect-error a prepared turn's input goes to start()
  prepareTurn({ cwd, prompt: 'x' })
  const ready = await next.ready
  const turn = next.start({ input: [{ type: 'image', url: 'https://example.com/a.png' }], effort: 'low' })
  for await (const event of turn) {
    if (event.type === 'plan') event.plan.map((step) => `${step.status}: ${step.step}`)
    if (event.type === 'diff') event.diff.length
  }
  return 'threadId' in ready ? ready.threadId : ready.failure.code
}

export async function utility(cwd: string): Promise<unknown> {
  try {
    return (await runUtility({ prompt: 'x', cwd, outputSchema: { type: 'object' } })).output
  } catch (error) {
    if (error instanceof UtilityError) return error.code
    throw error
  }
}

/** A Standard Schema's output type (transforms applied) becomes the result's `output`. */
export async function typedUtility(cwd: string): Promise<number> {
  const Count = z.object({ count: z.string().transform(Number), note: z.string().nullable() })
  const { output } = await runUtility({ prompt: 'x', cwd, outputSchema: Count, signal: AbortSignal.timeout(1000) })
  const note: string | null = output.note
  // @ts-expect-error the transform made `count` a number
  const text: string = output.count
  // @ts-expect-error there is no such field
  output.missing
  return output.count + (note ?? text).length
}

export async function otherLibraries(cwd: string): Promise<string> {
  const fromValibot = await runUtility({ prompt: 'x', cwd, outputSchema: toStandardJsonSchema(v.object({ name: v.string() })) })
  const fromArktype = await runUtility({ prompt: 'x', cwd, outputSchema: type({ name: 'string' }) })
  // @ts-expect-error a string is not a number
  const wrong: number = fromArktype.output.name
  return fromValibot.output.name + fromArktype.output.name + wrong
}

export async function jsonSchemaUtility(cwd: string): Promise<string> {
  const schema = { type: 'object', properties: { language: { type: 'string' } }, required: ['language'], additionalProperties: false }
  const named = await runUtility<{ language: string }>({ prompt: 'x', cwd, outputSchema: schema })
  const plain = await runUtility({ prompt: 'x', cwd, outputSchema: schema })
  // @ts-expect-error without a type argument a JSON Schema's output is unknown
  const unnamed: string = plain.output
  return named.output.language + unnamed
}

export async function whyCancelled(cwd: string): Promise<unknown> {
  const turn = runTurn({ prompt: 'x', cwd })
  turn.abort(new Error('the user pressed Stop'))
  turn.abort()
  const outcome = await turn.outcome
  try {
    await runUtility({ prompt: 'x', cwd, outputSchema: { type: 'object' }, signal: AbortSignal.timeout(400) })
  } catch (error) {
    if (error instanceof UtilityError && error.code === 'CANCELLED') return error.cause
  }
  return outcome.status === 'cancelled' ? outcome.abortReason : null
}

setLogger((record: LogRecord) => {
  const level: 'error' | 'warn' | 'info' | 'debug' | 'trace' = record.level
  console.error(level, record.target, record.message)
}, { filter: 'rennet_codex=debug' })
setLogger(null)
export const sameApi: typeof runTurn = codex.runTurn

/** The agent loop: nested agent events, goals, plans, dropped items, server requests typed by method. */
export function agentLoop(event: HarnessEvent): string {
  switch (event.type) {
    case 'agent': {
      const depth: number = event.agent.depth
      return `${event.agent.threadId}@${depth}: ${describe(event.event)}`
    }
    case 'goal': {
      const status: 'active' | 'paused' | 'blocked' | 'usageLimited' | 'budgetLimited' | 'complete' = event.goal.status
      return `${event.goal.objective}: ${status}`
    }
    case 'planDelta':
    case 'commandOutput': {
      // `replace` is true or absent: the delta is then the item's whole text.
      const replace: true | undefined = event.replace
      // @ts-expect-error replace is never false
      const never: false = event.replace
      return replace ? `=${event.delta}` : `${event.itemId}+${event.delta}${String(never)}`
    }
    case 'itemDropped':
      return event.itemId
    case 'serverRequest':
      if (event.method === 'item/tool/requestUserInput') {
        // Narrowed by method: the questions of plan mode.
        return event.params.questions.map((q) => q.question).join(' ')
      }
      // `unfit`: the app's answer did not fit the method's response type; why, in `unfit`.
      if (event.reply === 'unfit') return event.unfit ?? ''
      return event.reply satisfies 'accepted' | 'grantedEmpty' | 'declined' | 'methodError' | 'app' | 'timedOut' | 'cancelled' | 'unfit' | 'invalidArguments' | 'failed'
    case 'native':
      // Narrowed by method: the schema's params of that notification.
      if (event.method === 'thread/status/changed') return `${event.params.threadId}: ${event.params.status.type}`
      if (event.method === 'warning') {
        // @ts-expect-error a warning's params have no status
        event.params.status
        return event.params.message
      }
      return event.method
    case 'unknownNotification': {
      // A method the pinned schema does not list: only its name is known.
      const params: unknown = event.params
      // @ts-expect-error an unknown notification's params are unknown
      params.threadId
      return event.method
    }
    case 'terminal': {
      const plan: string | null = event.proposedPlan
      return `${event.agents.length} agents, ${event.cutOff.map((c) => c.kind).join(',')} cut off, ${event.totalUsage?.total ?? 0}, ${plan ?? event.finalMessage}`
    }
    case 'diagnostic':
      return event.source satisfies 'preamble' | 'stderr' | 'client'
    default:
      return event.type
  }
}

export function asking(cwd: string) {
  runTurn({
    prompt: 'plan it',
    cwd,
    access: 'ask',
    mode: 'plan',
    until: 'idle',
    serverRequestTimeoutMs: 60_000,
    onServerRequest: async (request) => {
      if (request.method === 'item/commandExecution/requestApproval') return { decision: 'decline' }
      if (request.method === 'item/tool/requestUserInput') {
        return { answers: Object.fromEntries(request.params.questions.map((q) => [q.id, { answers: ['yes'] }])) }
      }
      return undefined
    },
  })
  // @ts-expect-error until is 'turnCompleted' or 'idle'
  runTurn({ prompt: 'x', cwd, until: 'forever' })
  const review = runReview({ cwd, target: { type: 'baseBranch', branch: 'main' } })
  // @ts-expect-error a review has a target, not a prompt
  runReview({ cwd, prompt: 'x', target: { type: 'uncommittedChanges' } })
  return review.outcome.then((t) => t.finalMessage)
}

export function family(error: unknown): string {
  if (error instanceof CodexError) {
    const retry: boolean = error.retryable
    return `${error.code} ${error.reason ?? ''} ${retry}`
  }
  return 'other'
}
