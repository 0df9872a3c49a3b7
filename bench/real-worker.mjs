#!/usr/bin/env node
// One run of the real suite (real.mjs): one client, one scenario, in a fresh Node process, so
// that its CPU time and peak RSS belong to that client alone. It loads only the client it
// measures and never the mock server (which runs in the parent).
//
//   node bench/real-worker.mjs '<json>'   {client, scenario, codexPath, prompt, turns: [{cwd, env}]}
//
// Clients: `addon` (runTurn of this package; BENCH_ADDON selects another build), `baseline`
// (baseline-client.mjs) and `sdk` (@openai/codex-sdk, which runs `codex exec --experimental-json`).
//
// Scenarios:
//   turn        one turn; times on the monotonic clock of when the call was made, when the
//               consumer saw the message's first text, an earlier "turn done" event (the SDK's
//               turn.completed, the addon's turnCompleted once it has one), the terminal, the
//               end of the loop; CPU from the call to the end; peak RSS of the process
//   abort       one turn whose model stream hangs; the parent sends 'hang' over IPC once it
//               does, and the worker aborts then; the time from the abort to the end of the loop
//   concurrent  all turns at once; when every one has seen its first delta the worker samples
//               RSS and sends 'streaming', the parent lets the streams finish; RSS per turn
//
// Prints one JSON line: the measurements plus `errors` (a wrong terminal, missing text, …).

import { createRequire } from 'node:module'
import { writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { memoryMb, monotonicMs } from './common.mjs'

const config = JSON.parse(process.argv[2])
const errors = []

/**
 * The client under test as `run(turn, hooks)` → what the consumer saw. `hooks.signal` aborts,
 * `hooks.onFirstText` is called when the first text of the message arrives.
 */
async function loadClient(kind) {
  if (kind === 'addon') {
    const { runTurn } = createRequire(import.meta.url)(process.env.BENCH_ADDON || '../index.js')
    return (turn, hooks) => consumeHarness(runTurn(options(turn, hooks)), hooks)
  }
  if (kind === 'baseline') {
    const { baselineTurn } = await import('./baseline-client.mjs')
    return (turn, hooks) => {
      const steps = {}
      const trace = (step) => (steps[step] ??= monotonicMs())
      return consumeHarness(baselineTurn({ ...options(turn, hooks), trace }), hooks).then((seen) => ({ ...seen, steps }))
    }
  }
  if (kind === 'sdk') {
    const { Codex } = await import('@openai/codex-sdk')
    return (turn, hooks) => consumeSdk(Codex, turn, hooks)
  }
  throw new Error(`unknown client ${kind}`)
}

const options = (turn, hooks) => ({
  prompt: config.prompt,
  cwd: turn.cwd,
  codexPath: config.codexPath,
  env: turn.env,
  signal: hooks.signal,
})

/** Consumes this package's or the plain client's harness events. */
async function consumeHarness(iterable, hooks) {
  const seen = { firstTextAt: null, doneAt: null, terminalAt: null, lastEventAt: null, endAt: null, terminal: null, text: '' }
  for await (const ev of iterable) {
    const at = monotonicMs()
    if (ev.type === 'terminal') {
      seen.terminalAt = at
      seen.terminal = ev
      continue
    }
    seen.lastEventAt = at
    if (ev.type === 'messageDelta') {
      seen.text += ev.delta
      if (seen.firstTextAt === null) {
        seen.firstTextAt = at
        hooks.onFirstText?.()
      }
    } else if (ev.type === 'turnCompleted') {
      seen.doneAt ??= at
    }
  }
  seen.endAt = monotonicMs()
  const t = seen.terminal
  seen.status = t?.status ?? null
  seen.cancellation = t?.cancellation ?? null
  seen.finalMessage = t?.finalMessage ?? null
  if (t?.failure) seen.failure = t.failure
  return seen
}

/** Consumes the SDK's thread events; the turn is over for its consumer when the loop ends. */
async function consumeSdk(Codex, turn, hooks) {
  const seen = { firstTextAt: null, doneAt: null, terminalAt: null, lastEventAt: null, endAt: null, text: '', status: null }
  const codex = new Codex({ codexPathOverride: config.codexPath, env: { ...process.env, ...turn.env } })
  const thread = codex.startThread({ workingDirectory: turn.cwd, sandboxMode: 'danger-full-access', approvalPolicy: 'never' })
  try {
    const { events } = await thread.runStreamed(config.prompt, { signal: hooks.signal })
    for await (const ev of events) {
      const at = monotonicMs()
      seen.lastEventAt = at
      // codex exec reports an agent message once, whole, as item.completed.
      if ((ev.type === 'item.updated' || ev.type === 'item.completed') && ev.item.type === 'agent_message') {
        seen.text = ev.item.text
        if (seen.firstTextAt === null) {
          seen.firstTextAt = at
          hooks.onFirstText?.()
        }
      } else if (ev.type === 'turn.completed') {
        seen.doneAt ??= at
        seen.status = 'completed'
      } else if (ev.type === 'turn.failed') {
        seen.status = 'failed'
        seen.failure = ev.error
      }
    }
  } catch (error) {
    seen.status = hooks.signal?.aborted ? 'cancelled' : 'failed'
    seen.failure ??= { message: String(error?.message ?? error), name: error?.name }
  }
  seen.endAt = seen.terminalAt = monotonicMs()
  seen.finalMessage = seen.status === 'completed' ? seen.text : null
  return seen
}

const run = await loadClient(config.client)

/** The message from IPC that the parent sends once (`hang`, `release`). */
const fromParent = (name) =>
  new Promise((resolve) => {
    const on = (message) => {
      if (message !== name) return
      process.off('message', on)
      resolve()
    }
    process.on('message', on)
  })

const scenarios = {
  async turn() {
    const [turn] = config.turns
    const cpu0 = process.cpuUsage()
    const callAt = monotonicMs()
    const seen = await run(turn, {})
    const cpu = process.cpuUsage(cpu0)
    if (seen.status !== 'completed') errors.push(`turn: status ${seen.status} (${JSON.stringify(seen.failure ?? null)})`)
    if (seen.finalMessage !== config.expectText) errors.push(`turn: final message ${JSON.stringify(seen.finalMessage)}`)
    if (seen.text !== config.expectText) errors.push(`turn: the streamed text was ${JSON.stringify(seen.text)}`)
    return { callAt, ...strip(seen), cpuMs: (cpu.user + cpu.system) / 1000, peakRssMb: memoryMb('VmHWM') }
  },

  async abort() {
    const [turn] = config.turns
    const controller = new AbortController()
    let abortedAt = null
    fromParent('hang').then(() => {
      abortedAt = monotonicMs()
      controller.abort()
    })
    const callAt = monotonicMs()
    const seen = await run(turn, { signal: controller.signal })
    process.disconnect()
    if (abortedAt === null) {
      errors.push(`abort: the turn ended (${seen.status}) before the stream hung`)
    } else if (seen.status !== 'cancelled') {
      errors.push(`abort: status ${seen.status}, expected cancelled (${JSON.stringify(seen.failure ?? null)})`)
    }
    return { callAt, abortedAt, ...strip(seen) }
  },

  async concurrent() {
    // Let the loaded client settle, then measure from there; the peak mark is reset so that
    // VmHWM covers the turns only.
    await sleep(300)
    const idleRssMb = memoryMb('VmRSS')
    let peakReset = true
    try {
      writeFileSync('/proc/self/clear_refs', '5')
    } catch {
      peakReset = false
    }
    let streaming = 0
    let streamingRssMb = null
    let everyoneStreams
    const allStreaming = new Promise((resolve) => (everyoneStreams = resolve))
    const turns = config.turns.map((turn) =>
      run(turn, {
        onFirstText: () => {
          if (++streaming === config.turns.length) everyoneStreams()
        },
      }),
    )
    const settled = Promise.allSettled(turns)
    // A turn that fails before its first delta must not leave the worker waiting.
    await Promise.race([allStreaming, settled])
    if (streaming === config.turns.length) {
      streamingRssMb = memoryMb('VmRSS')
      process.send('streaming')
    }
    const results = await settled
    process.disconnect()
    results.forEach((r, i) => {
      if (r.status === 'rejected') errors.push(`turn ${i}: ${r.reason}`)
      else if (r.value.status !== 'completed') errors.push(`turn ${i}: status ${r.value.status} (${JSON.stringify(r.value.failure ?? null)})`)
      else if (r.value.finalMessage !== config.expectText) errors.push(`turn ${i}: final message ${JSON.stringify(r.value.finalMessage)}`)
    })
    const peakRssMb = peakReset ? memoryMb('VmHWM') : null
    const n = config.turns.length
    return {
      turns: n,
      idleRssMb,
      streamingRssMb,
      peakRssMb,
      streamingPerTurnMb: streamingRssMb === null ? null : (streamingRssMb - idleRssMb) / n,
      peakPerTurnMb: peakRssMb === null ? null : (peakRssMb - idleRssMb) / n,
    }
  },
}

/** What goes into the result of one turn: times and outcome, not the whole text. */
function strip(seen) {
  const { text, terminal, finalMessage, ...rest } = seen
  return { ...rest, textLength: text.length }
}

const scenario = scenarios[config.scenario]
if (!scenario) throw new Error(`unknown scenario ${config.scenario}`)
const result = await scenario()
process.stdout.write(JSON.stringify({ ...result, errors }) + '\n')
