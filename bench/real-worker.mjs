#!/usr/bin/env node
// One run of the real suite (real.mjs): one client, one scenario, in a fresh Node process, so
// that its CPU time and peak RSS belong to that client alone. It loads only the client it
// measures and never the mock server (which runs in the parent).
//
//   node bench/real-worker.mjs '<json>'   {client, scenario, codexPath, prompt, turns: [{cwd, env}]}
//
// Clients: `addon` (runTurn and prepareTurn of this package; BENCH_ADDON selects another
// build), `yardstick` (yardstick-client.mjs), `baseline` (baseline-client.mjs), `sdk`
// (@openai/codex-sdk, which runs `codex exec --experimental-json`) and `aisdk`
// (ai-sdk-provider-codex-cli in its app-server mode, driven through its language model's
// doStream).
//
// Scenarios:
//   turn, edges one turn; times on the monotonic clock of when the call was made, when the
//               consumer saw the message's first text, an earlier "turn done" event (the SDK's
//               turn.completed, the addon's turnCompleted, the AI SDK's finish part), the
//               terminal, the end of the loop; CPU from the call to the end; peak RSS
//   prepared    the same turn prepared ahead (addon: prepareTurn, then ready; plain client:
//               thread/start answered, turn/start held back); after a pause the worker starts
//               it and notes when (`startAt`; the plain client also traces turn/start sent)
//   failure     one turn whose model answers HTTP 401: the same moments as `turn`
//   abort       one turn whose model stream hangs; the parent sends 'hang' over IPC once it
//               does, and the worker aborts then; the time from the abort to the end of the loop
//   concurrent  all turns at once; when every one has seen its first delta the worker samples
//               RSS and sends 'streaming', the parent lets the streams finish; RSS per turn
//   idle        (addon) the host's CPU time and wake-ups over `idleMs` while a prepared turn
//               waits (`prepare: true`) or with nothing prepared (the control), the addon
//               loaded either way
//   accountRead the round trip of account/read right after initialize: the plain client's
//               (accountReadRoundTrip), or this package's own on a real turn (its debug log)
//
// Prints one JSON line: the measurements plus `errors` (a wrong terminal, missing text, …).

import { createRequire } from 'node:module'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { memoryMb, monotonicMs } from './common.mjs'

const config = JSON.parse(process.argv[2])
const errors = []

/**
 * The client under test: `run(turn, hooks)` → what the consumer saw, and for the two
 * app-server clients that can hold a turn back, `prepare(turn, hooks)` → `{ ready, start }`
 * (`ready` settles once everything up to turn/start is done, `start()` → what the consumer
 * saw). `hooks.signal` aborts, `hooks.onFirstText` is called when the first text arrives.
 */
async function loadClient(kind) {
  if (kind === 'addon') {
    const addon = createRequire(import.meta.url)(process.env.BENCH_ADDON || '../index.js')
    return {
      addon,
      run: (turn, hooks) => consumeHarness(addon.runTurn(options(turn, hooks)), hooks),
      prepare(turn, hooks) {
        const { prompt, ...rest } = options(turn, hooks)
        const prepared = addon.prepareTurn(rest)
        return {
          ready: prepared.ready.then((r) => (r.failure ? Promise.reject(new Error(`preparation failed: ${JSON.stringify(r.failure)}`)) : r)),
          start: () => consumeHarness(prepared.start(prompt), hooks),
          prepared,
        }
      },
    }
  }
  if (kind === 'baseline') {
    const { baselineTurn, accountReadRoundTrip } = await import('./baseline-client.mjs')
    const traced = (turn, hooks, extra) => {
      const steps = {}
      const trace = (step) => (steps[step] ??= monotonicMs())
      return consumeHarness(baselineTurn({ ...options(turn, hooks), trace, ...extra }), hooks).then((seen) => ({ ...seen, steps }))
    }
    return {
      accountReadRoundTrip,
      run: (turn, hooks) => traced(turn, hooks, {}),
      prepare(turn, hooks) {
        let threadReady
        let go
        const ready = new Promise((resolve) => (threadReady = resolve))
        const gate = new Promise((resolve) => (go = resolve))
        const seen = traced(turn, hooks, {
          beforeTurnStart: () => {
            threadReady()
            return gate
          },
        })
        const ended = seen.then((s) => Promise.reject(new Error(`the turn ended (${s.status}) before its thread was ready`)))
        return {
          ready: Promise.race([ready, ended]),
          start: () => {
            go()
            return seen
          },
        }
      },
    }
  }
  if (kind === 'yardstick') {
    // Its terminal event comes at turn/completed: for it, the turn is done then.
    const { yardstickTurn } = await import('./yardstick-client.mjs')
    return { run: (turn, hooks) => consumeHarness(yardstickTurn(options(turn, hooks)), hooks).then((seen) => ({ ...seen, doneAt: seen.terminalAt })) }
  }
  if (kind === 'sdk') {
    const { Codex } = await import('@openai/codex-sdk')
    return { run: (turn, hooks) => consumeSdk(Codex, turn, hooks) }
  }
  if (kind === 'aisdk') {
    const { createCodexAppServer } = await import('ai-sdk-provider-codex-cli')
    return { run: (turn, hooks) => consumeAiSdk(createCodexAppServer, turn, hooks) }
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

/** Text (a delta, when given) reached the consumer at `at`: the first is the moment measured. */
function textSeen(seen, at, hooks, delta = '') {
  seen.text += delta
  if (seen.firstTextAt !== null) return
  seen.firstTextAt = at
  hooks.onFirstText?.()
}

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
      textSeen(seen, at, hooks, ev.delta)
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
        textSeen(seen, at, hooks)
      } else if (ev.type === 'turn.completed') {
        seen.doneAt ??= at
        seen.status = 'completed'
      } else if (ev.type === 'turn.failed') {
        seen.doneAt ??= at
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

/**
 * Consumes the AI SDK provider's stream parts. The provider owns one `codex app-server` per
 * instance; a fresh instance per turn, closed at the end (SIGTERM, not waited for), keeps it
 * one child per turn like the others. `mock-model` is the model the CODEX_HOME's config names.
 */
async function consumeAiSdk(createCodexAppServer, turn, hooks) {
  const seen = { firstTextAt: null, doneAt: null, terminalAt: null, lastEventAt: null, endAt: null, text: '', status: null }
  const provider = createCodexAppServer({
    defaultSettings: { codexPath: config.codexPath, cwd: turn.cwd, env: turn.env, approvalPolicy: 'never', sandboxPolicy: 'danger-full-access', logger: false },
  })
  try {
    const { stream } = await provider('mock-model').doStream({
      prompt: [{ role: 'user', content: [{ type: 'text', text: config.prompt }] }],
      abortSignal: hooks.signal,
    })
    for await (const part of stream) {
      const at = monotonicMs()
      seen.lastEventAt = at
      if (part.type === 'text-delta') {
        textSeen(seen, at, hooks, part.delta)
      } else if (part.type === 'finish') {
        seen.doneAt ??= at
        seen.status ??= part.finishReason?.unified === 'stop' ? 'completed' : 'failed'
      } else if (part.type === 'error') {
        seen.doneAt ??= at
        seen.status = hooks.signal?.aborted ? 'cancelled' : 'failed'
        seen.failure = { message: String(part.error?.message ?? part.error) }
      }
    }
  } catch (error) {
    seen.status = hooks.signal?.aborted ? 'cancelled' : 'failed'
    seen.failure ??= { message: String(error?.message ?? error), name: error?.name }
  }
  seen.endAt = seen.terminalAt = monotonicMs()
  await provider.close()
  seen.finalMessage = seen.status === 'completed' ? seen.text : null
  return seen
}

const client = await loadClient(config.client)
const run = client.run

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
    expectCompleted('turn', seen)
    return { callAt, ...strip(seen), cpuMs: (cpu.user + cpu.system) / 1000, peakRssMb: memoryMb('VmHWM') }
  },

  /** The edges of the yardstick (real.mjs): the same moments as `turn`, on another model stream. */
  edges() {
    return scenarios.turn()
  },

  async prepared() {
    const [turn] = config.turns
    const callAt = monotonicMs()
    const prepared = client.prepare(turn, {})
    await prepared.ready
    const readyAt = monotonicMs()
    // The user is still typing: whatever the preparation set going settles first.
    await sleep(config.pauseMs)
    const startAt = monotonicMs()
    const seen = await prepared.start()
    expectCompleted('prepared', seen)
    return { callAt, readyAt, startAt, ...strip(seen) }
  },

  async failure() {
    const [turn] = config.turns
    const callAt = monotonicMs()
    const seen = await run(turn, {})
    if (seen.status !== 'failed') errors.push(`failure: status ${seen.status}, expected failed`)
    else if (!/401/.test(JSON.stringify(seen.failure ?? null))) errors.push(`failure: the failure does not name the 401: ${JSON.stringify(seen.failure)}`)
    return { callAt, ...strip(seen) }
  },

  async idle() {
    const [turn] = config.turns
    let prepared = null
    if (config.prepare) {
      prepared = client.prepare(turn, {})
      await prepared.ready
    }
    // The start-up's own work (the child's spawn, the runtime's threads, GC) is not the wait.
    await sleep(config.settleMs)
    const wake0 = contextSwitches()
    const cpu0 = process.cpuUsage()
    const t0 = monotonicMs()
    await sleep(config.idleMs)
    const cpu = process.cpuUsage(cpu0)
    const idleMs = monotonicMs() - t0
    const wakeups = contextSwitches() - wake0
    const perMinute = (x) => (x * 60_000) / idleMs
    if (prepared) {
      prepared.prepared.dispose()
      const terminal = await prepared.prepared.start(config.prompt).outcome
      if (terminal.status !== 'cancelled') errors.push(`idle: a disposed prepared turn ended ${terminal.status}`)
    }
    return { prepare: !!config.prepare, idleMs, cpuMs: (cpu.user + cpu.system) / 1000, cpuMsPerMinute: perMinute((cpu.user + cpu.system) / 1000), wakeupsPerMinute: perMinute(wakeups), threads: readdirSync('/proc/self/task').length }
  },

  async accountRead() {
    const [turn] = config.turns
    if (client.accountReadRoundTrip) {
      const r = await client.accountReadRoundTrip({ ...options(turn, {}), clock: monotonicMs })
      if (r.error || r.account?.requiresOpenaiAuth !== false) errors.push(`accountRead: ${JSON.stringify(r.error ?? r.account)}`)
      return { initializeMs: r.initializeMs, accountReadMs: r.accountReadMs }
    }
    // This package's own requests, from its debug log of a real turn (times stamped in Rust).
    const records = []
    client.addon.setLogger((record) => records.push(record), { filter: 'rennet_codex::rpc=debug' })
    const seen = await run(turn, {})
    client.addon.setLogger(null)
    expectCompleted('accountRead', seen)
    const at = (method, message) => records.find((r) => r.fields.method === method && r.message === message)?.time ?? null
    const asked = at('account/read', 'request')
    const answered = at('account/read', 'response')
    const threadStart = at('thread/start', 'request')
    if (asked === null || answered === null || threadStart === null) errors.push(`accountRead: no account/read or thread/start in the log (${records.length} records)`)
    return { accountReadMs: answered - asked, answerToThreadStartMs: threadStart - answered, initializeToThreadStartMs: threadStart - at('initialize', 'response') }
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

function expectCompleted(scenario, seen) {
  if (seen.status !== 'completed') errors.push(`${scenario}: status ${seen.status} (${JSON.stringify(seen.failure ?? null)})`)
  if (seen.finalMessage !== config.expectText) errors.push(`${scenario}: final message ${JSON.stringify(seen.finalMessage)}`)
  if (seen.text !== config.expectText) errors.push(`${scenario}: the streamed text was ${JSON.stringify(seen.text)}`)
}

/** Context switches of every thread of this process so far: how often it was woken. */
function contextSwitches() {
  let n = 0
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const status = readFileSync(`/proc/self/task/${tid}/status`, 'utf8')
      for (const m of status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)/gm)) n += Number(m[1])
    } catch {}
  }
  return n
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
