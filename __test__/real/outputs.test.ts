// Real `codex app-server` (pinned 0.171.0) against the loopback mock: what a turn's texts add up
// to. 0.171.0 streams nothing of a fast command's output and nothing of what a command printed
// before its item/started: the commandOutput deltas still add up to the completed item's
// aggregatedOutput. The terminal's finalMessage is the thread's last completed agent message
// whatever the outcome, and a plan-only answer's terminal carries the plan (proposedPlan).
// Invariants common to every scenario are checked in harness.ts.
import { describe, expect, it } from 'vitest'

import type { HarnessEvent } from '../../index.js'
import {
  created,
  completed,
  execCommandItem,
  execCommandResponse,
  failedResponse,
  hangingMessage,
  messageItem,
  messageResponse,
} from '../../testing/mock-responses.js'
import { runRealTurn } from './harness.js'
import type { RealTurnResult } from './harness.js'

type Output = Extract<HarnessEvent, { type: 'commandOutput' }>

/** A command item's output as an app builds it from commandOutput events (`replace`: the whole output). */
function built(output: Output[], itemId: string): string {
  let text = ''
  for (const o of output.filter((o) => o.itemId === itemId)) text = o.replace ? o.delta : text + o.delta
  return text
}

/** Runs `cmd` through exec_command; returns the run and the completed item's aggregatedOutput. */
async function command(cmd: string) {
  const r = await runRealTurn({
    prompt: 'Run the command.',
    scenario: [execCommandResponse(cmd, { callId: 'call_1' }), messageResponse('Done.')],
  })
  expect(r.terminal.status).toBe('completed')
  const done = r.of('itemCompleted').find((e) => e.item.type === 'commandExecution' && e.item.id === 'call_1')
  expect(done, 'the command completed').toBeDefined()
  const aggregated = done!.item.type === 'commandExecution' ? done!.item.aggregatedOutput : null
  // Every delta of the item before its completion.
  const completedAt = r.events.indexOf(done!)
  const output = r.of('commandOutput')
  for (const o of output) expect(r.events.indexOf(o), JSON.stringify(o)).toBeLessThan(completedAt)
  return { r, aggregated, output }
}

/** The run's model answers with `text` and then calls a command whose turn goes on as `then`. */
const commentaryThen = (text: string) => [
  created('resp_1'),
  ...messageItem({ id: 'msg_commentary', deltas: [text] }),
  ...execCommandItem({ cmd: 'true', callId: 'call_true', outputIndex: 1 }),
  completed('resp_1'),
]

describe('real codex app-server: what the texts add up to', { timeout: 60_000 }, () => {
  it("a fast command's output, never streamed by Codex, still comes as commandOutput", async () => {
    const { aggregated, output } = await command("printf 'out\\n'; echo err >&2; exit 3")
    // stdout and stderr in the order they were read (either first).
    expect(String(aggregated).split('\n').sort()).toEqual(['', 'err', 'out'])
    expect(built(output, 'call_1')).toBe(aggregated)
  })

  it('a longer output whose first lines Codex did not stream adds up to aggregatedOutput', async () => {
    // Lines written before Codex sends item/started are never streamed (seen: line-1 and line-2).
    const { aggregated, output } = await command('for i in 1 2 3 4 5; do echo line-$i; sleep 0.1; done; echo tail')
    expect(aggregated).toBe('line-1\nline-2\nline-3\nline-4\nline-5\ntail\n')
    expect(built(output, 'call_1')).toBe(aggregated)
    // A correction says so, and is the last one.
    const replacing = output.filter((o) => o.replace)
    expect(replacing.length).toBeLessThanOrEqual(1)
    if (replacing.length) expect(output.at(-1)).toBe(replacing[0])
  })

  it('stdout and stderr interleaved, with pauses, add up to aggregatedOutput', async () => {
    const { aggregated, output } = await command('sleep 0.3; for i in 1 2 3; do echo out-$i; echo err-$i >&2; sleep 0.15; done')
    expect(String(aggregated).split('\n').sort()).toEqual(['', 'err-1', 'err-2', 'err-3', 'out-1', 'out-2', 'out-3'])
    expect(built(output, 'call_1')).toBe(aggregated)
  })

  it('a turn that fails after an agent message completed keeps it as finalMessage', async () => {
    const r = await runRealTurn({
      scenario: [commentaryThen('Let me look first.'), failedResponse({ message: 'The model failed (mock).' })],
    })
    expect(r.terminal.status).toBe('failed')
    expect(r.terminal.failure?.code).toBe('TURN_FAILED')
    expect(r.terminal.finalMessage).toBe('Let me look first.')
  })

  it('a turn aborted after an agent message completed keeps it as finalMessage', async () => {
    let aborted = false
    const r = await runRealTurn({
      scenario: [commentaryThen('Let me look first.'), hangingMessage({ delta: 'Now I' })],
      interruptGraceMs: 5000,
      onEvent: (ev, ctx) => {
        if (ev.type === 'messageDelta' && ev.delta === 'Now I' && !aborted) {
          aborted = true
          ctx.abort()
        }
      },
    })
    expect(r.terminal.status).toBe('cancelled')
    // The message being streamed when the turn was cut short never completed: not the final one.
    expect(r.terminal.finalMessage).toBe('Let me look first.')
  })

  it("plan: a plan-only answer's terminal carries the plan as proposedPlan", async () => {
    const plan = '1. Paint the fence red.\n2. Let it dry.\n'
    const r: RealTurnResult = await runRealTurn({
      prompt: 'Plan the paint job.',
      scenario: [messageResponse(['<proposed_plan>\n1. Paint the fence', ' red.\n2. Let it dry.\n</proposed_plan>'])],
      extra: { mode: 'plan' },
    })
    const t = r.terminal
    expect(t.status).toBe('completed')
    expect(t.proposedPlan).toBe(plan)
    // No agent message: the plan is not the final message.
    expect(t.finalMessage).toBeNull()
    expect(r.of('turnCompleted')[0]?.proposedPlan).toBe(plan)
    const item = r.of('itemCompleted').find((e) => e.item.type === 'plan')?.item
    expect(item).toMatchObject({ type: 'plan', text: plan })
    expect(r.of('planDelta').map((e) => e.delta).join('')).toBe(plan)
  })
})
