// Compiled, never run (`pnpm test:types`). Each `@ts-expect-error` proves that narrowing really
// narrows: if a type widened to `any` or `unknown`, the directive would be unused and tsc fails.
import { runTurn, runUtility, setLogger, UtilityError } from '@rennet/codex'
import type { HarnessEvent, LogRecord, NativeItem, TerminalEvent } from '@rennet/codex'
import codex from '@rennet/codex'

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
  // @ts-expect-error the options are checked: `prompt` is required
  runTurn({ cwd })
  return turn.outcome
}

export async function utility(cwd: string): Promise<unknown> {
  try {
    return (await runUtility({ prompt: 'x', cwd, outputSchema: { type: 'object' } })).output
  } catch (error) {
    if (error instanceof UtilityError) return error.code
    throw error
  }
}

setLogger((record: LogRecord) => {
  const level: 'error' | 'warn' | 'info' | 'debug' | 'trace' = record.level
  console.error(level, record.target, record.message)
}, { filter: 'rennet_codex=debug' })
setLogger(null)
export const sameApi: typeof runTurn = codex.runTurn
