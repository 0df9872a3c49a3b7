// The real suite of `pnpm bench`: the pinned `codex app-server` (and, for the SDK, `codex exec`)
// against the loopback mock Responses server, driven by these clients side by side:
//
//   addon     this package's runTurn() (and prepareTurn())
//   yardstick the least a plain Node client does per event (yardstick-client.mjs): the edges'
//             reference
//   baseline  the heavier plain Node app-server client of baseline-client.mjs
//   sdk       @openai/codex-sdk (pinned devDependency), codexPathOverride = the pinned CLI
//   aisdk     ai-sdk-provider-codex-cli (pinned devDependency) in its app-server mode, codexPath
//             = the pinned CLI, its LanguageModel's doStream
//
// Every run is a fresh Node process (real-worker.mjs) with a fresh CODEX_HOME, HOME and git
// cwd; the clients alternate (the order rotates each round). The mock runs here, in the
// runner, and stamps its writes on the monotonic clock the worker also reads, so model-side
// moments (request arrived, first delta written, response ended) and client-side ones (call,
// first text seen, terminal) can be subtracted. The workers run on the host network: inside a
// loopback-only namespace `codex exec` waits seconds for DNS at exit, which would measure the
// namespace.
//
// The edges (`edges`, also on their own: `pnpm bench --only edges`): the model writes an
// assistant item and its first delta at once, so that Codex writes item/started right before
// the delta (the first delta after a burst of other frames, which a coalescing window would
// hold), and the other deltas DELTA_MS apart; the first delta and the response's end →
// turnCompleted (the yardstick's terminal comes at turn/completed) of this package against the
// yardstick, the heavier client beside them.
//
// Scenarios: a turn whose model streams DELTAS deltas DELTA_MS ms apart; the same turn
// prepared ahead (this package's prepareTurn, the plain client holding turn/start back on its
// started thread) and started PAUSE_MS after it is ready; a turn whose model answers HTTP 401;
// the stream hanging after ABORT_AFTER deltas, aborted then; the round trip of account/read
// after initialize; a prepared turn left waiting (the host's CPU over the wait, against the
// same worker preparing nothing); and N turns at once (held mid-stream until all stream) for
// RSS per concurrent turn. After each run nothing carrying the run's marker variable may be
// left running.

import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { checkpoint, hang, httpError, messageResponse, sse, start, usage } from '../testing/mock-responses.js'
import { codexBinaryPath, createCodexHome, createGitCwd } from '../testing/codex-home.js'
import { describeProcess, liveWithEnv, median, monotonicMs, timeProcScan, workerResult } from './common.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const WORKER = join(here, 'real-worker.mjs')

export const CLIENTS = ['addon', 'baseline', 'sdk', 'aisdk']
/** The clients that can hold a turn back until the app starts it. */
const PREPARING = ['addon', 'baseline']
const LABELS = { addon: 'this package', yardstick: 'yardstick', baseline: 'plain client', sdk: 'codex-sdk', aisdk: 'AI SDK provider' }
const SIZES = {
  full: { runs: 20, edgeRuns: 20, concurrency: [1, 8, 32], concurrencyRuns: 3, idleRuns: 3, idleMs: 60_000 },
  smoke: { runs: 1, edgeRuns: 1, concurrency: [1, 2], concurrencyRuns: 1, idleRuns: 1, idleMs: 1000 },
}
/** The edges' clients: this package, the yardstick its goals are judged against, the heavier plain client beside. */
const EDGE_CLIENTS = ['addon', 'yardstick', 'baseline']
/** The edges' goal: this package's median within this factor of the yardstick's. */
const EDGE_GOAL = 1.15
const DELTAS = 20
const DELTA_MS = 10
const ABORT_AFTER = 3
const PROMPT = 'Say hello.'
/** How long a prepared turn waits between ready and start (the user typing). */
const PAUSE_MS = 300
/** After ready, before the idle window: the start-up's own work is not the wait's. */
const SETTLE_MS = 2000
const MARK = 'RENNET_BENCH_RUN'

const deltas = Array.from({ length: DELTAS }, (_, i) => `w${i} `)
const EXPECT_TEXT = deltas.join('')
const message = messageResponse(deltas, { usage: usage({ input: 3, output: DELTAS }) })
const edgeMessage = messageResponse(deltas, { usage: usage({ input: 3, output: DELTAS }) })
/** Deltas DELTA_MS apart; everything else without a pause. */
const pace = (ev) => (ev.type === 'response.output_text.delta' ? DELTA_MS : 0)
const isDelta = (s) => s.type === 'response.output_text.delta'

/**
 * The mock's response per scenario; `signal(name)` reaches the worker over IPC, `stamps`
 * takes moments the mock does not record itself.
 */
const RESPONSES = {
  turn: () => sse(message, { delayMs: pace }),
  prepared: () => sse(message, { delayMs: pace }),
  accountRead: () => sse(message, { delayMs: pace }),
  idle: () => sse(message, { delayMs: pace }),
  // The mock writes an HTTP error at once after computing it: the stamp is the answer's moment.
  failure: (signal, released, stamps) => () => {
    stamps.respondedAtMs = monotonicMs()
    return httpError(401, { error: { message: 'bench: invalid key', type: 'invalid_request_error', code: null } })
  },
  // created, the item, ABORT_AFTER deltas, then the stream hangs and the worker aborts.
  abort: (signal) => hang([...message.slice(0, 2 + ABORT_AFTER), checkpoint(() => signal('hang'))], { delayMs: pace }),
  // One delta, then held until every turn of the run streams; then the rest at once.
  concurrent: (signal, released) => sse([...message.slice(0, 3), checkpoint(() => released), ...message.slice(3)]),
  // The item and its first delta at once (Codex then writes item/started right before the
  // delta), the other deltas DELTA_MS apart: the first delta after a burst of other frames.
  edges: () => sse(edgeMessage, { delayMs: (ev) => (isDelta(ev) && ev !== edgeMessage.find(isDelta) ? DELTA_MS : 0) }),
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
export async function oneRun({ client, scenario, turns = 1, wrapper, extra = {} }) {
  let worker = null
  let release
  const released = new Promise((resolve) => (release = resolve))
  const toWorker = (name) => worker?.connected && worker.send(name)
  const stamps = {}
  const response = RESPONSES[scenario](toWorker, released, stamps)
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
      pauseMs: PAUSE_MS,
      settleMs: SETTLE_MS,
      ...extra,
    }
    const loadAverage = loadavg()[0]
    const spawned = spawnWorker(config, scenario === 'abort' || scenario === 'concurrent', wrapper)
    worker = spawned.child
    worker.on('message', (m) => m === 'streaming' && release())
    const result = await spawned.result
    release()
    const left = await leftovers(marker)
    const requests = mock.requests.map(timesOf)
    if (requests[0] && stamps.respondedAtMs !== undefined) requests[0].respondedAtMs = stamps.respondedAtMs
    return { client, scenario, loadAverage, ...extra, ...result, requests, left }
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
  const steps = run.steps ?? {}
  const completedAt = sent((s) => s.type === 'response.completed')
  // The end of a turn, from the model's end of the response (its completion, or the 401).
  const end = (modelEndAt) => ({
    terminalMs: diff(run.terminalAt, modelEndAt),
    // The plain client emits no such event; the moment it read turn/completed stands in.
    doneMs: diff(run.doneAt ?? steps.turnCompleted, modelEndAt),
    lastEventToTerminalMs: diff(run.terminalAt, run.lastEventAt),
    doneToTerminalMs: diff(run.terminalAt, run.doneAt),
    completedToStdinClosedMs: diff(steps.stdinClosed, steps.turnCompleted),
    stdinClosedToExitMs: diff(steps.exited, steps.stdinClosed),
    exitToTerminalMs: diff(run.terminalAt, steps.exited),
    turnCompletedToTerminalMs: diff(run.terminalAt, steps.turnCompleted),
  })
  switch (run.scenario) {
    case 'edges':
      return { firstTextMs: diff(run.firstTextAt, sent(isDelta)), doneMs: diff(run.doneAt, completedAt), cpuMs: run.cpuMs ?? null }
    case 'turn':
      return {
        requestMs: diff(r?.arrivedAtMs, run.callAt),
        turnStartToRequestMs: diff(r?.arrivedAtMs, steps.turnStartSent),
        firstTextMs: diff(run.firstTextAt, sent(isDelta)),
        ...end(completedAt),
        cpuMs: run.cpuMs ?? null,
        peakRssMb: run.peakRssMb ?? null,
      }
    case 'failure':
      return { requestMs: diff(r?.arrivedAtMs, run.callAt), ...end(r?.respondedAtMs) }
    case 'prepared':
      return {
        readyMs: diff(run.readyAt, run.callAt),
        // The plain client's own moment of writing turn/start; this package's is start() called.
        requestMs: diff(r?.arrivedAtMs, steps.turnStartSent ?? run.startAt),
        startToFirstTextMs: diff(run.firstTextAt, run.startAt),
        startToTerminalMs: diff(run.terminalAt, run.startAt),
        firstTextMs: diff(run.firstTextAt, sent(isDelta)),
        terminalMs: diff(run.terminalAt, completedAt),
      }
    case 'abort':
      return {
        abortMs: diff(run.terminalAt, run.abortedAt),
        abortToDoneMs: diff(run.doneAt ?? steps.turnCompleted, run.abortedAt),
        abortToModelClosedMs: diff(r?.connectionClosedAtMs, run.abortedAt),
      }
    case 'idle':
      return { cpuMsPerMinute: run.cpuMsPerMinute ?? null, wakeupsPerMinute: run.wakeupsPerMinute ?? null }
    case 'accountRead':
      return { accountReadMs: run.accountReadMs ?? null, initializeMs: run.initializeMs ?? null, answerToThreadStartMs: run.answerToThreadStartMs ?? null }
    default:
      return { streamingPerTurnMb: run.streamingPerTurnMb ?? null, peakPerTurnMb: run.peakPerTurnMb ?? null }
  }
}

/** The rows of the main table: [scenario, metric key, label, unit]. */
const MAIN_ROWS = [
  ['turn', 'requestMs', 'cold: runTurn() → model request reaches the mock', 'ms'],
  ['prepared', 'readyMs', 'prepared: prepareTurn() → ready (plain client: thread/start answered)', 'ms'],
  ['prepared', 'requestMs', 'prepared: start() → model request (plain client: turn/start sent on its started thread, the floor)', 'ms'],
  ['prepared', 'startToFirstTextMs', 'prepared: start() → consumer sees the first delta', 'ms'],
  ['prepared', 'startToTerminalMs', 'prepared: start() → terminal', 'ms'],
  ['turn', 'firstTextMs', "model's first delta → consumer sees it (codex-sdk: the whole message)", 'ms'],
  ['prepared', 'firstTextMs', "prepared: model's first delta → consumer sees it", 'ms'],
  ['turn', 'terminalMs', 'model ends the response → terminal event (SDKs: their stream ends)', 'ms'],
  ['turn', 'doneMs', 'model ends the response → turn done (turnCompleted; plain client: turn/completed read; codex-sdk: turn.completed; AI SDK: finish part)', 'ms'],
  ['failure', 'terminalMs', 'HTTP 401: the model answers → terminal event (SDKs: their stream ends)', 'ms'],
  ['failure', 'doneMs', 'HTTP 401: the model answers → turn done (turnCompleted; plain client: turn/completed read; codex-sdk: turn.failed; AI SDK: error part)', 'ms'],
  ['abort', 'abortMs', 'abort → end seen by the consumer (stream hangs)', 'ms'],
  ['turn', 'cpuMs', 'client CPU, call → end', 'ms'],
  ['turn', 'peakRssMb', 'peak RSS', 'MB'],
]

/** Where the end goes (evidence), per client where it applies: for a completed and a failed turn. */
const END_STEPS = [
  ['lastEventToTerminalMs', 'last event before the terminal → terminal'],
  ['turnCompletedToTerminalMs', 'plain client: turn/completed read → terminal'],
  ['completedToStdinClosedMs', 'plain client: turn/completed read → stdin closed'],
  ['stdinClosedToExitMs', "plain client: stdin closed → child's exit seen"],
  ['exitToTerminalMs', "plain client: child's exit seen → terminal"],
  ['doneToTerminalMs', 'turn done event → end of the stream (SDKs: turn.completed / finish → loop ends)'],
]
const END_ROWS = [
  ['turn', 'turnStartToRequestMs', 'plain client, cold turn: turn/start sent → model request', 'ms'],
  ...['turn', 'failure'].flatMap((scenario) => END_STEPS.map(([key, label]) => [scenario, key, `${scenario === 'turn' ? 'completed' : 'HTTP 401'}: ${label}`, 'ms'])),
  ['abort', 'abortToDoneMs', 'abort → turn done (turnCompleted event; plain client: turn/completed read)', 'ms'],
  ['abort', 'abortToModelClosedMs', 'abort → Codex closes the model connection', 'ms'],
]

/** Median, p90 and range of the finite numbers among `values`. */
const summarize = (values) => {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b)
  return v.length ? { median: median(v), p90: v[Math.min(v.length - 1, Math.ceil(0.9 * v.length) - 1)], min: v[0], max: v.at(-1), n: v.length } : null
}

/**
 * Runs the real suite. `problems` collects correctness failures (the bench's exit status);
 * returns the record for latest.json.
 */
export async function realSuite({ smoke, runs: runsOverride, problems, parts = ['edges', 'real'] }) {
  const size = SIZES[smoke ? 'smoke' : 'full']
  const runs = runsOverride ?? size.runs
  const edgeRuns = runsOverride ?? size.edgeRuns
  const record = {
    config: { runs, edgeRuns, deltas: DELTAS, deltaMs: DELTA_MS, abortAfter: ABORT_AFTER, pauseMs: PAUSE_MS, concurrency: size.concurrency, concurrencyRuns: size.concurrencyRuns, idleRuns: size.idleRuns, idleMs: size.idleMs, settleMs: SETTLE_MS },
    runs: [],
  }
  const note = (run) => {
    record.runs.push(run)
    for (const e of run.errors ?? []) problems.push(`real ${run.scenario} (${run.client}${run.turns ? `, ${run.turns} turns` : ''}): ${e}`)
    if (run.left.length > 0) {
      // The other clients promise nothing about their child's tree; say so, but only this
      // package fails the bench for it.
      const text = `real ${run.scenario} (${run.client}): left running after the end: ${run.left.join('; ')}`
      if (run.client === 'addon') problems.push(text)
      else console.log(`  note: ${text}`)
    }
  }
  const measure = async (what, options) => {
    const run = await oneRun(options)
    run.metrics = metricsOf(run)
    note(run)
    console.log(`real ${what}: ${line(run)}`)
  }
  const rotate = (list, r) => [...list.slice(r % list.length), ...list.slice(0, r % list.length)]

  if (parts.includes('edges')) {
    for (let r = 0; r < edgeRuns; r++) {
      for (const client of rotate(EDGE_CLIENTS, r)) await measure(`edges ${r + 1}/${edgeRuns} ${client}`, { client, scenario: 'edges' })
    }
    record.edges = edgesSummary(record.runs.filter((x) => x.scenario === 'edges'))
    printEdges(record.edges, edgeRuns)
    if (!parts.includes('real')) return record
  }

  for (let r = 0; r < runs; r++) {
    for (const scenario of ['turn', 'prepared', 'failure', 'abort', 'accountRead']) {
      for (const client of rotate(scenario === 'prepared' || scenario === 'accountRead' ? PREPARING : CLIENTS, r)) {
        await measure(`${scenario} ${r + 1}/${runs} ${client}`, { client, scenario })
      }
    }
  }
  // A prepared turn left waiting, against the same worker preparing nothing.
  for (let r = 0; r < size.idleRuns; r++) {
    for (const prepare of r % 2 === 0 ? [true, false] : [false, true]) {
      const label = prepare ? 'prepared' : 'control'
      await measure(`idle ${r + 1}/${size.idleRuns} ${label}`, { client: 'addon', scenario: 'idle', extra: { prepare, idleMs: size.idleMs } })
    }
  }
  for (const turns of size.concurrency) {
    for (let r = 0; r < size.concurrencyRuns; r++) {
      for (const client of rotate(PREPARING, r)) await measure(`concurrent ${turns} turns ${r + 1}/${size.concurrencyRuns} ${client}`, { client, scenario: 'concurrent', turns })
    }
  }

  const scans = Array.from({ length: 20 }, timeProcScan)
  record.procScan = { processes: median(scans.map((s) => s.processes)), ms: median(scans.map((s) => s.ms)) }

  const of = (client, key, scenario, pick = () => true) =>
    summarize(record.runs.filter((x) => x.client === client && x.scenario === scenario && pick(x)).map((x) => x.metrics[key]))
  const table = (rows) =>
    rows.map(([scenario, key, label, unit]) => ({ scenario, key, label, unit, ...Object.fromEntries(CLIENTS.map((c) => [c, of(c, key, scenario)])) }))
  const idle = (prepare) => ({
    cpuMsPerMinute: of('addon', 'cpuMsPerMinute', 'idle', (x) => x.prepare === prepare),
    wakeupsPerMinute: of('addon', 'wakeupsPerMinute', 'idle', (x) => x.prepare === prepare),
  })
  record.summary = {
    main: table(MAIN_ROWS),
    end: table(END_ROWS),
    idle: { prepared: idle(true), control: idle(false) },
    accountRead: {
      baseline: { accountReadMs: of('baseline', 'accountReadMs', 'accountRead'), initializeMs: of('baseline', 'initializeMs', 'accountRead') },
      addon: { accountReadMs: of('addon', 'accountReadMs', 'accountRead'), answerToThreadStartMs: of('addon', 'answerToThreadStartMs', 'accountRead') },
    },
    concurrency: size.concurrency.map((turns) => ({
      turns,
      ...Object.fromEntries(PREPARING.map((c) => [c, { peak: of(c, 'peakPerTurnMb', 'concurrent', (x) => x.turns === turns), streaming: of(c, 'streamingPerTurnMb', 'concurrent', (x) => x.turns === turns) }])),
    })),
  }
  record.goals = goals(record.summary)
  printReal(record)
  return record
}

/** The goals of the issues that asked for this suite, judged on the medians. */
function goals(summary) {
  const row = (scenario, key) => summary.main.find((r) => r.scenario === scenario && r.key === key)
  const m = (scenario, key, client) => row(scenario, key)[client]?.median ?? null
  const judge = (a, b, ok) => (a === null || b === null ? null : ok(a, b))
  // The moment the app can show the turn is done: the earlier turn-done event once there is one.
  const addonDone = m('turn', 'doneMs', 'addon') ?? m('turn', 'terminalMs', 'addon')
  const { prepared, control } = summary.idle
  const idleCost = prepared.cpuMsPerMinute && control.cpuMsPerMinute ? prepared.cpuMsPerMinute.median - control.cpuMsPerMinute.median : null
  return [
    { goal: "prepared: start() → model request within 1.2 × the plain client's turn/start → model request", met: judge(m('prepared', 'requestMs', 'addon'), m('prepared', 'requestMs', 'baseline'), (a, b) => a <= 1.2 * b) },
    { goal: 'a waiting prepared turn costs the host ≤ 1 ms CPU per minute (median minus the control’s)', met: idleCost === null ? null : idleCost <= 1 },
    { goal: "first delta: this package ≤ 1.15 × the plain client's median", met: judge(m('turn', 'firstTextMs', 'addon'), m('turn', 'firstTextMs', 'baseline'), (a, b) => a <= 1.15 * b) },
    { goal: "HTTP 401: this package's terminal within 1.5 × its completed turn's (from the model's answer)", met: judge(m('failure', 'terminalMs', 'addon'), m('turn', 'terminalMs', 'addon'), (a, b) => a <= 1.5 * b) },
    { goal: "completed turn: this package's terminal within 1.5 × the plain client's", met: judge(m('turn', 'terminalMs', 'addon'), m('turn', 'terminalMs', 'baseline'), (a, b) => a <= 1.5 * b) },
    { goal: "the end: the app sees the turn done (turnCompleted, else the terminal) no later than the plain client's terminal", met: judge(addonDone, m('turn', 'terminalMs', 'baseline'), (a, b) => a <= b) },
    { goal: "abort → end within 1.2 × codex-sdk's (SIGTERM)", met: judge(m('abort', 'abortMs', 'addon'), m('abort', 'abortMs', 'sdk'), (a, b) => a <= 1.2 * b) },
    { goal: "peak RSS within 2 MB of the plain client's", met: judge(m('turn', 'peakRssMb', 'addon'), m('turn', 'peakRssMb', 'baseline'), (a, b) => a - b <= 2) },
    { goal: 'account/read after initialize costs ≤ 2 ms (median round trip, plain client and this package)', met: judge(summary.accountRead.baseline.accountReadMs?.median ?? null, summary.accountRead.addon.accountReadMs?.median ?? null, (a, b) => a <= 2 && b <= 2) },
  ]
}

/** The edges' medians per client, and this package's against the yardstick's (the goal) and the heavier client's. */
function edgesSummary(runs) {
  const rows = [
    ['firstTextMs', "first delta: the model writes it → the consumer's loop sees it (ms)"],
    ['doneMs', 'response end → turnCompleted seen (yardstick: its terminal, at turn/completed) (ms)'],
  ]
  return rows.map(([key, label]) => {
    const of = (client) => summarize(runs.filter((x) => x.client === client).map((x) => x.metrics[key]))
    const clients = Object.fromEntries(EDGE_CLIENTS.map((c) => [c, of(c)]))
    const ratioTo = (other) => (clients.addon && clients[other]?.median ? clients.addon.median / clients[other].median : null)
    const ratio = ratioTo('yardstick')
    return { key, label, ...clients, ratio, heavierRatio: ratioTo('baseline'), goal: EDGE_GOAL, met: ratio === null ? null : ratio <= EDGE_GOAL }
  })
}

function printEdges(rows, runs) {
  console.log(`\nedges: codex-cli against the loopback mock (the item and its first delta at once, then ${DELTAS - 1} deltas ${DELTA_MS} ms apart), ${runs} run${runs === 1 ? '' : 's'} per client, medians (min–max)`)
  printTable(
    ['', LABELS.addon, LABELS.yardstick, 'heavier plain client', 'package / yardstick', `goal ≤ ${EDGE_GOAL}`, 'package / heavier'],
    rows.map((r) => [r.label, cell(r.addon), cell(r.yardstick), cell(r.baseline), r.ratio === null ? '–' : r.ratio.toFixed(2), runs < 5 ? '– (too few runs)' : r.met ? 'met' : 'NOT met', r.heavierRatio === null ? '–' : r.heavierRatio.toFixed(2)]),
  )
}

function fmt(x) {
  if (x === null || x === undefined) return '–'
  if (Math.abs(x) >= 100) return x.toFixed(0)
  if (Math.abs(x) >= 10) return x.toFixed(1)
  return x.toFixed(2)
}

const cell = (s) => (s ? (s.n > 1 ? `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})` : fmt(s.median)) : '–')
const difference = (a, b) => (a && b ? a.median - b.median : null)
const spread = (s) => (s ? [fmt(s.median), fmt(s.p90), `${fmt(s.min)}–${fmt(s.max)}`, s.n] : ['–', '–', '–', 0])
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
    ['', ...CLIENTS.map((c) => LABELS[c]), 'package / plain', 'package / codex-sdk', 'package / AI SDK'],
    record.summary.main.map((row) => [`${row.label} (${row.unit})`, ...CLIENTS.map((c) => cell(row[c])), ratio(row.addon, row.baseline), ratio(row.addon, row.sdk), ratio(row.addon, row.aisdk)]),
  )
  const { prepared, control } = record.summary.idle
  console.log(`\nreal: a prepared turn waiting ${fmt(record.config.idleMs / 1000)} s, the host Node process (this package loaded either way), medians (min–max) of ${record.config.idleRuns} runs`)
  printTable(
    ['', 'prepared turn waiting', 'nothing prepared (control)', 'difference of medians'],
    [
      ['CPU (ms per minute)', cell(prepared.cpuMsPerMinute), cell(control.cpuMsPerMinute), fmt(difference(prepared.cpuMsPerMinute, control.cpuMsPerMinute))],
      ['context switches, all threads (per minute)', cell(prepared.wakeupsPerMinute), cell(control.wakeupsPerMinute), fmt(difference(prepared.wakeupsPerMinute, control.wakeupsPerMinute))],
    ],
  )
  const { baseline: plainRead, addon: addonRead } = record.summary.accountRead
  console.log('\nreal: account/read right after initialize (ms), median / p90 (min–max)')
  printTable(
    ['', 'median', 'p90', 'min–max', 'runs'],
    [
      ['plain client: initialize round trip', ...spread(plainRead.initializeMs)],
      ['plain client: account/read round trip', ...spread(plainRead.accountReadMs)],
      ["this package's turn: account/read request → response (its log)", ...spread(addonRead.accountReadMs)],
      ["this package's turn: account/read response → thread/start request", ...spread(addonRead.answerToThreadStartMs)],
    ],
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
