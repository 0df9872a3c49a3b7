#!/usr/bin/env node
// One measurement of one client in a fresh Node process, so that CPU time and RSS belong to
// that client alone. Usage: node bench/worker.mjs '<json>' with {client, measure, ...size};
// prints one JSON line with the result. Correctness problems (lost, reordered or foreign
// events, a wrong terminal, a child left running) are reported in `errors`, never thrown away.

import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { pathToFileURL } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { writeFakeCodex } from '../testing/index.mjs'
import { memoryMb, processGone } from './common.mjs'

const config = JSON.parse(process.argv[2])
const errors = []

/**
 * The client under test, loaded alone (the idle RSS must not include the other one).
 * `addonGuardOff`: the addon with its host-death guard switched off (RENNET_HOST_GUARD=off,
 * set before the addon loads and inherited by the child).
 */
async function loadClient(kind) {
  if (kind === 'addonGuardOff') process.env.RENNET_HOST_GUARD = 'off'
  if (kind === 'addon' || kind === 'addonGuardOff') {
    // BENCH_ADDON: another build's index.js (with its binding beside it), to compare versions.
    const { runTurn } = createRequire(import.meta.url)(process.env.BENCH_ADDON || '../index.js')
    return (options) => runTurn(options)
  }
  if (kind === 'yardstick') {
    const { yardstickTurn } = await import('./yardstick-client.mjs')
    return (options) => yardstickTurn(options)
  }
  if (kind === 'external') {
    // BENCH_YARDSTICK: another plain client's module (exporting baselineTurn), measured beside
    // this bench's yardstick to show that the two do the same work (run.mjs, yardstickCheck).
    const { baselineTurn } = await import(pathToFileURL(process.env.BENCH_YARDSTICK).href)
    return (options) => baselineTurn(options)
  }
  if (kind === 'baseline') {
    const { baselineTurn } = await import('./baseline-client.mjs')
    return (options) => baselineTurn(options)
  }
  throw new Error(`unknown client ${kind}`)
}

const open = await loadClient(config.client)

/**
 * The test kit's fake in its fast mode: the codex-cli 0.171.0 handshake, then `events` deltas
 * (0: until the turn ends) with pre-serialised frames, written as fast as the pipe takes them,
 * or with `intervalMs` one at a time, the monotonic clock (ns) at its writing as its text;
 * `perMessage` deltas per agent message, whose ids `msg_<tag>.<n>` let concurrent turns prove
 * that nothing crossed over. `interrupt: 'ignore'` keeps streaming after turn/interrupt;
 * `wedged` also ignores SIGTERM and EOF on stdin (only SIGKILL ends it); `mixed` first sends a
 * foreign thread's frame, a foreign turn's, a usage update, a status, a server request and a
 * response to an id never used, so that both clients' routing and event shapes can be compared.
 */
function fakeServer({ events, intervalMs = 0, perMessage, tag = '1', interrupt = 'honour', wedged = false, mixed = false }) {
  const threadId = `01a22f3f-395c-74e0-a930-${tag.padStart(12, '0')}`
  const prelude = [
    { type: 'notification', method: 'item/agentMessage/delta', unscoped: true, params: { threadId: '01a22f3f-aaaa-7000-8000-000000000001', turnId: 'other-turn', itemId: 'msg_x', delta: 'not ours' } },
    { type: 'notification', method: 'item/agentMessage/delta', params: { turnId: 'earlier-turn', itemId: 'msg_y', delta: 'not ours either' } },
    { type: 'usage', input: 20, cached: 5, output: 10, reasoning: 2, total: 30 },
    { type: 'notification', method: 'thread/status/changed', unscoped: true, params: { threadId, status: { type: 'active', activeFlags: [] } } },
    { type: 'serverRequest', method: 'item/commandExecution/requestApproval', params: { itemId: 'call_1', command: 'true' }, wait: false },
    { type: 'send', frame: { id: 999, result: {} } },
  ]
  return writeFakeCodex({
    threadId,
    turnId: `01a22f3f-3972-7112-84af-${tag.padStart(12, '0')}`,
    omit: ['threadStarted', 'status', 'userMessage'],
    interrupt,
    linger: wedged,
    ignoreSigterm: wedged,
    steps: [...(mixed ? prelude : []), { type: 'stream', count: events, id: `msg_${tag}`, perMessage, intervalMs, clock: intervalMs > 0 }],
  })
}

function fakeTurn(codexPath, extra = {}) {
  return open({ prompt: 'bench', cwd: tmpdir(), codexPath, ...extra })
}

const cpuSeconds = (u) => (u.user + u.system) / 1e6

function percentile(sorted, p) {
  if (sorted.length === 0) return null
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
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
  async throughput({ events, perMessage }) {
    const r = await consumeStream(fakeTurn(fakeServer({ events, perMessage })), { events, perMessage })
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
    const turn = fakeTurn(fakeServer({ events, intervalMs }))
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
    const r = await consumeStream(fakeTurn(fakeServer({ events, perMessage })), {
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

  /**
   * Aborts after `afterEvents` deltas; the server honours or ignores the interrupt, and with
   * `wedged` also ignores SIGTERM and EOF on stdin (only SIGKILL ends it).
   */
  async abort({ reps, interrupt, graceMs, afterEvents, wedged = false }) {
    const latencies = []
    const server = fakeServer({ events: 0, intervalMs: 2, interrupt, wedged })
    for (let i = 0; i < reps; i++) {
      const controller = new AbortController()
      const turn = fakeTurn(server, { signal: controller.signal, interruptGraceMs: graceMs })
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
    const p50Ms = percentile(latencies, 50)
    return { reps: latencies.length, p50Ms, p99Ms: percentile(latencies, 99), maxMs: latencies.at(-1), graceMs, overGraceP50Ms: p50Ms === null ? null : p50Ms - graceMs }
  },

  /**
   * Short turns one after the other: the median wall time call → terminal, CPU per turn (call
   * → end), and the peak RSS of the process.
   */
  async plainTurn({ events, turns }) {
    const walls = []
    const server = fakeServer({ events })
    const cpu0 = process.cpuUsage()
    for (let i = 0; i < turns; i++) {
      const t0 = process.hrtime.bigint()
      let terminalAt = null
      let last = null
      let deltas = 0
      for await (const ev of fakeTurn(server)) {
        last = ev
        if (ev.type === 'messageDelta') deltas++
        if (ev.type === 'terminal') terminalAt = process.hrtime.bigint()
      }
      expectTerminal(last, 'completed', 'plainTurn')
      if (deltas !== events) errors.push(`plainTurn: ${deltas} deltas of ${events}`)
      if (terminalAt !== null) walls.push(Number(terminalAt - t0) / 1e6)
    }
    const cpu = process.cpuUsage(cpu0)
    walls.sort((a, b) => a - b)
    return { wallMs: percentile(walls, 50), cpuMs: (cpu.user + cpu.system) / 1000 / turns, peakRssMb: memoryMb('VmHWM') }
  },

  async concurrency({ turns, events }) {
    const servers = Array.from({ length: turns }, (_, k) => fakeServer({ events, tag: String(k) }))
    const startedAt = process.hrtime.bigint()
    const cpu0 = process.cpuUsage()
    const results = await Promise.all(servers.map((server, k) => consumeStream(fakeTurn(server), { events, tag: String(k) })))
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

  /** The full event list of a mixed stream, for comparing both clients' shapes. */
  async shapes({ events }) {
    const list = []
    for await (const ev of fakeTurn(fakeServer({ events, mixed: true }))) list.push(ev)
    return { events: list }
  },
}

const measure = measures[config.measure]
if (!measure) throw new Error(`unknown measurement ${config.measure}`)
const result = await measure(config)
process.stdout.write(JSON.stringify({ ...result, errors }) + '\n')
