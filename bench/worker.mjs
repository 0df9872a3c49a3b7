#!/usr/bin/env node
// One measurement of one client in a fresh Node process, so that CPU time and RSS belong to
// that client alone. Usage: node bench/worker.mjs '<json>' with {client, measure, ...size};
// prints one JSON line with the result. Correctness problems (lost, reordered or foreign
// events, a wrong terminal, a child left running) are reported in `errors`, never thrown away.

import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'

const here = dirname(fileURLToPath(import.meta.url))
const FAKE = join(here, 'fake-server.mjs')
const config = JSON.parse(process.argv[2])
const errors = []

/** The client under test, loaded alone (the idle RSS must not include the other one). */
async function loadClient(kind) {
  if (kind === 'addon') {
    // BENCH_ADDON: another build's index.js (with its binding beside it), to compare versions.
    const { runTurn } = createRequire(import.meta.url)(process.env.BENCH_ADDON || '../index.js')
    return (options) => runTurn(options)
  }
  if (kind === 'baseline') {
    const { baselineTurn } = await import('./baseline-client.mjs')
    return (options) => baselineTurn(options)
  }
  throw new Error(`unknown client ${kind}`)
}

const open = await loadClient(config.client)

function fakeTurn(env, extra = {}) {
  return open({ prompt: 'bench', cwd: tmpdir(), codexPath: FAKE, env, ...extra })
}

const cpuSeconds = (u) => (u.user + u.system) / 1e6

function percentile(sorted, p) {
  if (sorted.length === 0) return null
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

/** Whether a process is gone (or only a zombie waiting for its parent). */
function processGone(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z'
  } catch {
    return !existsSync(`/proc/${pid}`)
  }
}

function expectTerminal(ev, status, what) {
  if (ev?.type !== 'terminal') errors.push(`${what}: the stream ended without a terminal event`)
  else if (ev.status !== status) errors.push(`${what}: terminal status ${ev.status}, expected ${status} (${JSON.stringify(ev.failure)})`)
}

/**
 * Consumes one turn of the pre-built stream (`tag` names the turn, `perMessage` deltas per
 * agent message), checking that deltas arrive complete, in order and in their own turn's
 * messages; `onDelta(seq)` may return a promise (a slow consumer).
 */
async function consumeStream(turn, { events, tag = '1', perMessage = Infinity, onDelta }) {
  let seq = 0
  let last = null
  let started = null
  let firstAt = null
  let firstCpu = null
  let expectedItem = `msg_${tag}.0`
  for await (const ev of turn) {
    last = ev
    if (ev.type === 'messageDelta') {
      if (firstAt === null) {
        firstAt = process.hrtime.bigint()
        firstCpu = process.cpuUsage()
      }
      if (seq > 0 && seq % perMessage === 0) expectedItem = `msg_${tag}.${seq / perMessage}`
      if (ev.itemId !== expectedItem) {
        errors.push(`delta of ${ev.itemId} where one of ${expectedItem} was expected`)
        break
      }
      if (+ev.delta !== seq) {
        errors.push(`turn ${tag}: delta ${ev.delta} where ${seq} was expected`)
        break
      }
      seq++
      if (onDelta) await onDelta(seq)
    } else if (ev.type === 'started') {
      started = ev
    }
  }
  const endAt = process.hrtime.bigint()
  const cpu = firstCpu ? process.cpuUsage(firstCpu) : null
  expectTerminal(last, 'completed', `turn ${tag}`)
  if (seq !== events) errors.push(`turn ${tag}: ${seq} deltas of ${events}`)
  // The final message is the last agent message: the deltas from its first one on.
  const lastStart = perMessage === Infinity ? 0 : Math.floor((events - 1) / perMessage) * perMessage
  let expectedLength = 0
  for (let i = lastStart; i < events; i++) expectedLength += String(i).length
  if (last?.type === 'terminal' && last.finalMessage?.length !== expectedLength) {
    errors.push(`turn ${tag}: final message of ${last.finalMessage?.length} characters, expected ${expectedLength}`)
  }
  return { deltas: seq, firstAt, endAt, cpu, started }
}

const measures = {
  async throughput({ events }) {
    const r = await consumeStream(fakeTurn({ BENCH_EVENTS: String(events) }), { events })
    const seconds = Number(r.endAt - r.firstAt) / 1e9
    return {
      events: r.deltas,
      seconds,
      eventsPerSec: r.deltas / seconds,
      cpuSecondsPer100k: (cpuSeconds(r.cpu) / r.deltas) * 1e5,
    }
  },

  async latency({ events, intervalMs, warmup }) {
    const samples = []
    let last = null
    const turn = fakeTurn({ BENCH_EVENTS: String(events), BENCH_INTERVAL_MS: String(intervalMs) })
    let n = 0
    for await (const ev of turn) {
      last = ev
      if (ev.type !== 'messageDelta') continue
      const now = process.hrtime.bigint()
      if (n++ >= warmup) samples.push(Number(now - BigInt(ev.delta)) / 1e6)
    }
    expectTerminal(last, 'completed', 'latency')
    if (n !== events) errors.push(`latency: ${n} deltas of ${events}`)
    samples.sort((a, b) => a - b)
    return { samples: samples.length, p50Ms: percentile(samples, 50), p99Ms: percentile(samples, 99), maxMs: samples.at(-1) }
  },

  async slowConsumer({ events, pauseMs, perMessage }) {
    // Let the process settle, then reset the kernel's peak-RSS mark so that VmHWM measures
    // this turn only.
    await sleep(200)
    const status = () => readFileSync('/proc/self/status', 'utf8')
    const kb = (text, key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)[1])
    let resetPeak = true
    try {
      writeFileSync('/proc/self/clear_refs', '5')
    } catch {
      resetPeak = false
    }
    const idleKb = kb(status(), 'VmRSS')
    // Without a resettable peak mark (an old kernel), sample instead.
    let sampledPeakKb = idleKb
    const sampler = resetPeak ? null : setInterval(() => (sampledPeakKb = Math.max(sampledPeakKb, kb(status(), 'VmRSS'))), 10)
    const half = Math.floor(events / 2)
    let pausedKb = null
    const r = await consumeStream(fakeTurn({ BENCH_EVENTS: String(events), BENCH_MESSAGE_DELTAS: String(perMessage) }), {
      events,
      perMessage,
      onDelta: (seq) => {
        if (seq !== half) return undefined
        return sleep(pauseMs).then(() => (pausedKb = kb(status(), 'VmRSS')))
      },
    })
    clearInterval(sampler)
    const peakKb = resetPeak ? kb(status(), 'VmHWM') : sampledPeakKb
    return {
      events: r.deltas,
      idleRssMb: idleKb / 1024,
      peakRssGrowthMb: (peakKb - idleKb) / 1024,
      // At the end of the pause: what the paused stream holds (plus what GC has not returned).
      pausedRssGrowthMb: (pausedKb - idleKb) / 1024,
      peakFrom: resetPeak ? 'VmHWM' : 'sampled',
    }
  },

  async abort({ reps, interrupt, graceMs, afterEvents }) {
    const latencies = []
    for (let i = 0; i < reps; i++) {
      const controller = new AbortController()
      const turn = fakeTurn(
        { BENCH_EVENTS: '0', BENCH_INTERVAL_MS: '2', BENCH_INTERRUPT: interrupt },
        { signal: controller.signal, interruptGraceMs: graceMs },
      )
      let abortedAt = null
      let deltas = 0
      let last = null
      let pid = null
      for await (const ev of turn) {
        last = ev
        if (ev.type === 'started') pid = ev.pid
        if (ev.type === 'messageDelta' && ++deltas === afterEvents) {
          abortedAt = process.hrtime.bigint()
          controller.abort()
        }
      }
      const endedAt = process.hrtime.bigint()
      if (abortedAt === null) {
        errors.push(`abort: the stream ended before ${afterEvents} deltas`)
        continue
      }
      latencies.push(Number(endedAt - abortedAt) / 1e6)
      const expected = interrupt === 'honour' ? 'interrupted' : 'killed'
      expectTerminal(last, 'cancelled', `abort (${interrupt})`)
      if (last?.cancellation !== expected) errors.push(`abort (${interrupt}): cancellation ${last?.cancellation}, expected ${expected}`)
      if (pid === null) errors.push('abort: no started event')
      else if (!processGone(pid)) errors.push(`abort (${interrupt}): the server ${pid} still runs after the terminal event`)
    }
    latencies.sort((a, b) => a - b)
    return { reps: latencies.length, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), maxMs: latencies.at(-1), graceMs }
  },

  async concurrency({ turns, events }) {
    const startedAt = process.hrtime.bigint()
    const cpu0 = process.cpuUsage()
    const results = await Promise.all(
      Array.from({ length: turns }, (_, k) =>
        consumeStream(fakeTurn({ BENCH_EVENTS: String(events), BENCH_TAG: String(k) }), { events, tag: String(k) }),
      ),
    )
    const endAt = process.hrtime.bigint()
    const firstAt = results.reduce((min, r) => (r.firstAt !== null && r.firstAt < min ? r.firstAt : min), endAt)
    const total = results.reduce((sum, r) => sum + r.deltas, 0)
    const seconds = Number(endAt - firstAt) / 1e9
    return {
      turns,
      events: total,
      seconds,
      wallSeconds: Number(endAt - startedAt) / 1e9,
      eventsPerSec: total / seconds,
      cpuSecondsPer100k: (cpuSeconds(process.cpuUsage(cpu0)) / total) * 1e5,
    }
  },

  async real() {
    const { start, messageResponse, usage } = await import('../testing/mock-responses.js')
    const { createCodexHome, createGitCwd } = await import('../testing/codex-home.js')
    const mock = await start([messageResponse(['Hello ', 'world'], { usage: usage({ input: 3, output: 2 }) })])
    const home = createCodexHome({ baseUrl: mock.url })
    const cwd = createGitCwd()
    try {
      const cpu0 = process.cpuUsage()
      const t0 = process.hrtime.bigint()
      let last = null
      let events = 0
      let beforeLast = t0
      let lastAt = t0
      for await (const ev of open({ prompt: 'Say hello.', cwd: cwd.path, codexPath: home.codexPath, env: home.env })) {
        last = ev
        events++
        beforeLast = lastAt
        lastAt = process.hrtime.bigint()
      }
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9
      // From the event before the terminal to the terminal: mostly ending the process.
      const endingMs = Number(lastAt - beforeLast) / 1e6
      expectTerminal(last, 'completed', 'real')
      if (last?.finalMessage !== 'Hello world') errors.push(`real: final message ${JSON.stringify(last?.finalMessage)}`)
      return { seconds, endingMs, events, cpuSeconds: cpuSeconds(process.cpuUsage(cpu0)) }
    } finally {
      await mock.close()
      home.cleanup()
      cwd.cleanup()
    }
  },

  /** The full event list of a mixed stream, for comparing both clients' shapes. */
  async shapes({ events }) {
    const list = []
    for await (const ev of fakeTurn({ BENCH_EVENTS: String(events), BENCH_MIXED: '1' })) list.push(ev)
    return { events: list }
  },
}

const measure = measures[config.measure]
if (!measure) throw new Error(`unknown measurement ${config.measure}`)
const result = await measure(config)
process.stdout.write(JSON.stringify({ ...result, errors }) + '\n')
