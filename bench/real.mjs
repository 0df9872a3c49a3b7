// The real suite of `pnpm bench`: the pinned `codex app-server` (and, for the SDK, `codex exec`)
// against the loopback mock Responses server, driven by three clients side by side:
//
//   addon     this package's runTurn()
//   baseline  the plain Node app-server client of baseline-client.mjs
//   sdk       @openai/codex-sdk (pinned devDependency), codexPathOverride = the pinned CLI
//
// Every run is a fresh Node process (real-worker.mjs) with a fresh CODEX_HOME, HOME and git
// cwd; the clients alternate (the order rotates each round). The mock runs here, in the
// runner, and stamps its writes on the monotonic clock the worker also reads, so model-side
// moments (request arrived, first delta written, response ended) and client-side ones (call,
// first text seen, terminal) can be subtracted. The workers run on the host network: inside a
// loopback-only namespace `codex exec` waits seconds for DNS at exit, which would measure the
// namespace.
//
// Scenarios: a turn whose model streams DELTAS deltas DELTA_MS ms apart; the same stream
// hanging after ABORT_AFTER deltas, aborted then; and N turns at once (held mid-stream until
// all stream) for RSS per concurrent turn. After each run nothing carrying the run's marker
// variable may be left running.

import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { checkpoint, hang, messageResponse, sse, start, usage } from '../testing/mock-responses.js'
import { codexBinaryPath, createCodexHome, createGitCwd } from '../testing/codex-home.js'
import { describeProcess, liveWithEnv, median, timeProcScan, workerResult } from './common.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const WORKER = join(here, 'real-worker.mjs')

export const CLIENTS = ['addon', 'baseline', 'sdk']
const LABELS = { addon: 'this package', baseline: 'plain client', sdk: 'codex-sdk' }
const SIZES = {
  full: { runs: 20, concurrency: [1, 8, 32], concurrencyRuns: 3 },
  smoke: { runs: 1, concurrency: [1, 2], concurrencyRuns: 1 },
}
const DELTAS = 20
const DELTA_MS = 10
const ABORT_AFTER = 3
const PROMPT = 'Say hello.'
const MARK = 'RENNET_BENCH_RUN'

const deltas = Array.from({ length: DELTAS }, (_, i) => `w${i} `)
const EXPECT_TEXT = deltas.join('')
const message = messageResponse(deltas, { usage: usage({ input: 3, output: DELTAS }) })
/** Deltas DELTA_MS apart; everything else without a pause. */
const pace = (ev) => (ev.type === 'response.output_text.delta' ? DELTA_MS : 0)
const isDelta = (s) => s.type === 'response.output_text.delta'

/** The mock's SSE body per scenario; `signal(name)` reaches the worker over IPC. */
const RESPONSES = {
  turn: () => sse(message, { delayMs: pace }),
  // created, the item, ABORT_AFTER deltas, then the stream hangs and the worker aborts.
  abort: (signal) => hang([...message.slice(0, 2 + ABORT_AFTER), checkpoint(() => signal('hang'))], { delayMs: pace }),
  // One delta, then held until every turn of the run streams; then the rest at once.
  concurrent: (signal, released) => sse([...message.slice(0, 3), checkpoint(() => released), ...message.slice(3)]),
}

function spawnWorker(config, ipc, wrapper = []) {
  const [command, ...args] = [...wrapper, process.execPath, WORKER, JSON.stringify(config)]
  const child = spawn(command, args, {
    cwd: dirname(here),
    stdio: ['ignore', 'pipe', 'inherit', ...(ipc ? ['ipc'] : [])],
  })
  return { child, result: workerResult(child) }
}

/**
 * One worker run: its own mock, homes, cwds and marker; cleaned up whatever happens.
 * `wrapper`: an argv prefix the worker runs under (a tracer, for trace-end.mjs).
 */
export async function oneRun({ client, scenario, turns = 1, wrapper }) {
  let worker = null
  let release
  const released = new Promise((resolve) => (release = resolve))
  const toWorker = (name) => worker?.connected && worker.send(name)
  const response = RESPONSES[scenario](toWorker, released)
  const mock = await start(Array.from({ length: turns }, () => response))
  const marker = randomUUID()
  const homes = []
  const cwds = []
  try {
    for (let i = 0; i < turns; i++) {
      homes.push(createCodexHome({ baseUrl: mock.url, prefix: 'rennet-bench-' }))
      cwds.push(createGitCwd({ prefix: 'rennet-bench-cwd-' }))
    }
    const config = {
      client,
      scenario,
      prompt: PROMPT,
      expectText: EXPECT_TEXT,
      codexPath: codexBinaryPath(),
      turns: homes.map((home, i) => ({ cwd: cwds[i].path, env: { ...home.env, [MARK]: marker } })),
    }
    const loadAverage = loadavg()[0]
    const spawned = spawnWorker(config, scenario !== 'turn', wrapper)
    worker = spawned.child
    worker.on('message', (m) => m === 'streaming' && release())
    const result = await spawned.result
    release()
    const left = await leftovers(marker)
    return { client, scenario, loadAverage, ...result, requests: mock.requests.map(timesOf), left }
  } finally {
    release()
    await mock.close()
    for (const h of homes) h.cleanup()
    for (const c of cwds) c.cleanup()
  }
}

const timesOf = (r) => ({ arrivedAtMs: r.arrivedAtMs, connectionClosedAtMs: r.connectionClosedAtMs, sent: r.sent, clientClosed: r.clientClosed })

/**
 * Processes of the run still alive after its worker ended: described, then killed (so the
 * next run starts clean) and waited for.
 */
async function leftovers(marker) {
  const pids = liveWithEnv(`${MARK}=${marker}`)
  if (pids.length === 0) return []
  const described = pids.map(describeProcess)
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
  for (let i = 0; i < 100 && liveWithEnv(`${MARK}=${marker}`).length > 0; i++) await sleep(20)
  return described
}

/** What one run measured, in ms from the model's or the client's moments. */
function metricsOf(run) {
  const r = run.requests?.[0]
  const sent = (pred) => r?.sent.find(pred)?.atMs ?? null
  const diff = (a, b) => (typeof a === 'number' && typeof b === 'number' ? a - b : null)
  if (run.scenario === 'turn') {
    const completedAt = sent((s) => s.type === 'response.completed')
    const steps = run.steps ?? {}
    return {
      requestMs: diff(r?.arrivedAtMs, run.callAt),
      firstTextMs: diff(run.firstTextAt, sent(isDelta)),
      terminalMs: diff(run.terminalAt, completedAt),
      // The plain client emits no such event; the moment it read turn/completed stands in.
      doneMs: diff(run.doneAt ?? steps.turnCompleted, completedAt),
      cpuMs: run.cpuMs ?? null,
      peakRssMb: run.peakRssMb ?? null,
      lastEventToTerminalMs: diff(run.terminalAt, run.lastEventAt),
      doneToTerminalMs: diff(run.terminalAt, run.doneAt),
      completedToStdinClosedMs: diff(steps.stdinClosed, steps.turnCompleted),
      stdinClosedToExitMs: diff(steps.exited, steps.stdinClosed),
      exitToTerminalMs: diff(run.terminalAt, steps.exited),
      turnCompletedToTerminalMs: diff(run.terminalAt, steps.turnCompleted),
    }
  }
  if (run.scenario === 'abort') {
    return {
      abortMs: diff(run.terminalAt, run.abortedAt),
      abortToDoneMs: diff(run.doneAt ?? run.steps?.turnCompleted, run.abortedAt),
      abortToModelClosedMs: diff(r?.connectionClosedAtMs, run.abortedAt),
    }
  }
  return { streamingPerTurnMb: run.streamingPerTurnMb ?? null, peakPerTurnMb: run.peakPerTurnMb ?? null }
}

/** The rows of the main table: [metric key, label, unit]. */
const MAIN_ROWS = [
  ['requestMs', 'call → model request reaches the mock', 'ms'],
  ['firstTextMs', "model's first delta → consumer sees it (codex-sdk: the whole message)", 'ms'],
  ['terminalMs', 'model ends the response → terminal event (codex-sdk: its stream ends)', 'ms'],
  ['doneMs', 'model ends the response → turn done (turnCompleted event; plain client: turn/completed read; codex-sdk: turn.completed)', 'ms'],
  ['abortMs', 'abort → end seen by the consumer (stream hangs)', 'ms'],
  ['cpuMs', 'client CPU, call → end', 'ms'],
  ['peakRssMb', 'peak RSS', 'MB'],
]

/** Where the end goes (evidence), per client where it applies. */
const END_ROWS = [
  ['lastEventToTerminalMs', 'last event before the terminal → terminal', 'ms'],
  ['turnCompletedToTerminalMs', 'plain client: turn/completed read → terminal', 'ms'],
  ['completedToStdinClosedMs', 'plain client: turn/completed read → stdin closed', 'ms'],
  ['stdinClosedToExitMs', "plain client: stdin closed → child's exit seen", 'ms'],
  ['exitToTerminalMs', "plain client: child's exit seen → terminal", 'ms'],
  ['doneToTerminalMs', 'turn done event → end of the stream (codex-sdk: turn.completed → loop ends)', 'ms'],
  ['abortToDoneMs', 'abort → turn done (turnCompleted event; plain client: turn/completed read)', 'ms'],
  ['abortToModelClosedMs', 'abort → Codex closes the model connection', 'ms'],
]

const summarize = (values) => {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x))
  return v.length ? { median: median(v), min: Math.min(...v), max: Math.max(...v), n: v.length } : null
}

/**
 * Runs the real suite. `problems` collects correctness failures (the bench's exit status);
 * returns the record for latest.json.
 */
export async function realSuite({ smoke, runs: runsOverride, problems }) {
  const size = SIZES[smoke ? 'smoke' : 'full']
  const runs = runsOverride ?? size.runs
  const record = { config: { runs, deltas: DELTAS, deltaMs: DELTA_MS, abortAfter: ABORT_AFTER, concurrency: size.concurrency, concurrencyRuns: size.concurrencyRuns }, runs: [] }
  const note = (run) => {
    record.runs.push(run)
    for (const e of run.errors ?? []) problems.push(`real ${run.scenario} (${run.client}${run.turns ? `, ${run.turns} turns` : ''}): ${e}`)
    if (run.left.length > 0) {
      // The plain client and the SDK promise nothing about their child's tree; say so, but
      // only this package fails the bench for it.
      const text = `real ${run.scenario} (${run.client}): left running after the end: ${run.left.join('; ')}`
      if (run.client === 'addon') problems.push(text)
      else console.log(`  note: ${text}`)
    }
  }

  for (let r = 0; r < runs; r++) {
    const order = [...CLIENTS.slice(r % CLIENTS.length), ...CLIENTS.slice(0, r % CLIENTS.length)]
    for (const scenario of ['turn', 'abort']) {
      for (const client of order) {
        const run = await oneRun({ client, scenario })
        run.metrics = metricsOf(run)
        note(run)
        console.log(`real ${scenario} ${r + 1}/${runs} ${client}: ${line(run)}`)
      }
    }
  }
  for (const turns of size.concurrency) {
    for (let r = 0; r < size.concurrencyRuns; r++) {
      for (const client of r % 2 === 0 ? ['addon', 'baseline'] : ['baseline', 'addon']) {
        const run = await oneRun({ client, scenario: 'concurrent', turns })
        run.metrics = metricsOf(run)
        note(run)
        console.log(`real concurrent ${turns} turns ${r + 1}/${size.concurrencyRuns} ${client}: ${line(run)}`)
      }
    }
  }

  const scans = Array.from({ length: 20 }, timeProcScan)
  record.procScan = { processes: median(scans.map((s) => s.processes)), ms: median(scans.map((s) => s.ms)) }

  const of = (client, key, scenario, turns) =>
    summarize(record.runs.filter((x) => x.client === client && (scenario === undefined || x.scenario === scenario) && (turns === undefined || x.turns === turns)).map((x) => x.metrics[key]))
  const table = (rows) =>
    rows.map(([key, label, unit]) => ({ key, label, unit, ...Object.fromEntries(CLIENTS.map((c) => [c, of(c, key)])) }))
  record.summary = {
    main: table(MAIN_ROWS),
    end: table(END_ROWS),
    concurrency: size.concurrency.map((turns) => ({
      turns,
      addon: { peak: of('addon', 'peakPerTurnMb', 'concurrent', turns), streaming: of('addon', 'streamingPerTurnMb', 'concurrent', turns) },
      baseline: { peak: of('baseline', 'peakPerTurnMb', 'concurrent', turns), streaming: of('baseline', 'streamingPerTurnMb', 'concurrent', turns) },
    })),
  }
  record.goals = goals(record.summary.main)
  printReal(record)
  return record
}

/** The goals of the issue that asked for this suite, judged on the medians. */
function goals(main) {
  const row = (key) => main.find((r) => r.key === key)
  const m = (key, client) => row(key)[client]?.median ?? null
  const judge = (a, b, ok) => (a === null || b === null ? null : ok(a, b))
  // The moment the app can show the turn is done: the earlier turn-done event once there is one.
  const addonDone = m('doneMs', 'addon') ?? m('terminalMs', 'addon')
  return [
    { goal: "first delta: this package ≤ the plain client's median", met: judge(m('firstTextMs', 'addon'), m('firstTextMs', 'baseline'), (a, b) => a <= b) },
    { goal: "the end: the app sees the turn done (turnCompleted, else the terminal) no later than the plain client's terminal", met: judge(addonDone, m('terminalMs', 'baseline'), (a, b) => a <= b) },
    { goal: "abort → end within 1.2 × codex-sdk's (SIGTERM)", met: judge(m('abortMs', 'addon'), m('abortMs', 'sdk'), (a, b) => a <= 1.2 * b) },
    { goal: "peak RSS within 2 MB of the plain client's", met: judge(m('peakRssMb', 'addon'), m('peakRssMb', 'baseline'), (a, b) => a - b <= 2) },
  ]
}

function fmt(x) {
  if (x === null || x === undefined) return '–'
  if (Math.abs(x) >= 100) return x.toFixed(0)
  if (Math.abs(x) >= 10) return x.toFixed(1)
  return x.toFixed(2)
}

const cell = (s) => (s ? (s.n > 1 ? `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})` : fmt(s.median)) : '–')
const ratio = (a, b) => (a && b && b.median ? (a.median / b.median).toFixed(2) : '–')

function line(run) {
  if (run.errors?.length) return `ERRORS: ${run.errors.join('; ')}`
  const m = run.metrics
  const parts = Object.entries(m)
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `${k} ${fmt(v)}`)
  return parts.join(', ')
}

function printTable(header, rows) {
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => String(r[i]).length)))
  const out = (r) => console.log(`| ${r.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`)
  out(header)
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`)
  rows.forEach(out)
}

function printReal(record) {
  const { runs, deltas, deltaMs } = record.config
  console.log(`\nreal: codex-cli of @openai/codex against the loopback mock (${deltas} deltas ${deltaMs} ms apart), ${runs} runs per client, medians (min–max)`)
  printTable(
    ['', ...CLIENTS.map((c) => LABELS[c]), 'package / plain', 'package / sdk'],
    record.summary.main.map((row) => [`${row.label} (${row.unit})`, ...CLIENTS.map((c) => cell(row[c])), ratio(row.addon, row.baseline), ratio(row.addon, row.sdk)]),
  )
  // A median of fewer runs than this says nothing about a goal (the smoke run has one).
  const enough = runs >= 5
  for (const g of record.goals) {
    const verdict = !enough ? `– (${runs} run${runs === 1 ? '' : 's'} per client: too few to judge)` : g.met === null ? '–' : g.met ? 'met' : 'NOT met'
    console.log(`goal: ${g.goal}: ${verdict}`)
  }
  console.log('\nreal: where the end of a turn goes (ms)')
  printTable(
    ['', ...CLIENTS.map((c) => LABELS[c])],
    record.summary.end.filter((row) => CLIENTS.some((c) => row[c])).map((row) => [row.label, ...CLIENTS.map((c) => cell(row[c]))]),
  )
  console.log(`one look at /proc (every /proc/<pid>/stat, from Node): ${fmt(record.procScan.ms)} ms for ${record.procScan.processes} processes`)
  console.log('\nreal: RSS per concurrent turn (MB): (peak − idle) / turns, and while all turns stream')
  printTable(
    ['turns', 'this package: peak', 'plain client: peak', 'this package: streaming', 'plain client: streaming'],
    record.summary.concurrency.map((row) => [row.turns, cell(row.addon.peak), cell(row.baseline.peak), cell(row.addon.streaming), cell(row.baseline.streaming)]),
  )
}
