#!/usr/bin/env node
// pnpm bench [--smoke] [--only a,b] [--runs N]
//     (names: the keys of MEASUREMENTS, real, edges, calls and tools)
//
// Four suites. The fake suite measures `runTurn()` on the test kit's fake in its fast mode,
// side by side with the yardstick (yardstick-client.mjs: the least a plain Node client does per
// event) and, where a measurement needs what only it has (aborts, the shapes of every event),
// the heavier plain client of baseline-client.mjs; the heavier one is also shown beside the
// yardstick. Every run of every measurement starts a fresh Node process per client
// (worker.mjs), and the clients take turns going first; `hostGuard` measures the addon against
// itself with its host-death guard off, `yardstickCheck` the yardstick against another plain
// client given by BENCH_YARDSTICK (skipped without it). The real suite (`real`, real.mjs) runs
// the pinned Codex against the loopback mock Responses server: its `edges` (also on their own,
// `--only edges`) against the yardstick, the rest with four clients: this package, the heavier
// plain client, @openai/codex-sdk and the AI SDK provider (cold, prepared and failed turns,
// aborts, a waiting prepared turn's cost, account/read). The calls suite (`calls`, calls.mjs)
// times each call around turns against a plain one-shot client. The tools suite (`tools`,
// tools.mjs) times an app tool's call (the app's function → the model's next request) against
// a plain client answering the same call. Prints tables of medians and
// ratios and writes everything to bench/results/latest.json.
//
// BENCH_ADDON=<path of another build's index.js> measures that build as the addon instead,
// for before/after comparisons under the same conditions.
//
// --smoke runs every measurement at a tiny size: it checks that the bench works (no event
// lost or reordered, the right terminal, no child left behind) and asserts nothing about
// speed. The exit status is non-zero when a client got something wrong.

import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem, release } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import { median, workerResult } from './common.mjs'
import { realSuite } from './real.mjs'
import { callsSuite } from './calls.mjs'
import { toolsSuite } from './tools.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const root = dirname(here)
const WORKER = join(here, 'worker.mjs')

const argv = process.argv.slice(2)
const smoke = argv.includes('--smoke')
const flag = (name) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const only = flag('--only')?.split(',')
const runsOverride = flag('--runs') ? Number(flag('--runs')) : undefined

// A measurement: its worker config per size, the numbers it reports and the goal on them, and
// its clients: the one measured, the reference its goals are judged against, and any shown
// beside (default: the addon against the heavier plain client).
const MEASUREMENTS = {
  throughput: {
    clients: ['addon', 'yardstick', 'baseline'],
    full: { events: 200_000, runs: 9 },
    smoke: { events: 5_000, runs: 1 },
    metrics: [
      { key: 'eventsPerSec', label: 'events/s', goal: { ratioAtLeast: 1.5 } },
      { key: 'cpuSecondsPer100k', label: 'CPU s per 100k events', goal: { ratioAtMost: 0.8 } },
    ],
  },
  // The same stream cut into messages of 10 deltas: an item started and completed (JSON events)
  // every 10 deltas, and every item's first delta crosses at once. No goal: what the events
  // that are not deltas cost (BENCHMARKS.md, "Where the time goes").
  messages: {
    // Not the heavier client: its routing rescans every message it kept (minutes at this size).
    clients: ['addon', 'yardstick'],
    full: { measure: 'throughput', events: 200_000, perMessage: 10, runs: 5 },
    smoke: { measure: 'throughput', events: 5_000, perMessage: 10, runs: 1 },
    metrics: [
      { key: 'eventsPerSec', label: 'events/s' },
      { key: 'cpuSecondsPer100k', label: 'CPU s per 100k events' },
    ],
  },
  yardstickCheck: {
    // This bench's yardstick against another plain client doing the same work (BENCH_YARDSTICK:
    // its module, exporting baselineTurn like the yardstick): the two within 5 %.
    clients: ['yardstick', 'external'],
    needs: 'BENCH_YARDSTICK',
    full: { measure: 'throughput', events: 200_000, runs: 9 },
    smoke: { measure: 'throughput', events: 5_000, runs: 1 },
    metrics: [
      { key: 'eventsPerSec', label: 'events/s', goal: { ratioWithin: 0.05 } },
      { key: 'cpuSecondsPer100k', label: 'CPU s per 100k events', goal: { ratioWithin: 0.05 } },
    ],
  },
  latency: {
    clients: ['addon', 'yardstick', 'baseline'],
    full: { events: 400, intervalMs: 5, warmup: 20, runs: 3 },
    smoke: { events: 30, intervalMs: 5, warmup: 5, runs: 1 },
    metrics: [
      { key: 'p50Ms', label: 'delta latency p50 (ms)' },
      { key: 'p99Ms', label: 'delta latency p99 (ms)', goal: { aboveBaselineAtMost: 1 } },
    ],
  },
  slowConsumer: {
    // A long turn of many messages: the final item of one 1M-delta message alone would be a
    // 6 MB frame, whose copies would hide what the pause costs.
    full: { events: 1_000_000, pauseMs: 10_000, perMessage: 1000, runs: 3 },
    smoke: { events: 20_000, pauseMs: 300, perMessage: 1000, runs: 1 },
    metrics: [
      { key: 'peakRssGrowthMb', label: 'peak RSS growth (MB)', goal: { addonBelow: 32 } },
      { key: 'pausedRssGrowthMb', label: 'RSS growth at the end of the pause (MB)' },
    ],
  },
  abortHonoured: {
    full: { measure: 'abort', interrupt: 'honour', reps: 20, graceMs: 2000, afterEvents: 20, runs: 3 },
    smoke: { measure: 'abort', interrupt: 'honour', reps: 2, graceMs: 2000, afterEvents: 5, runs: 1 },
    metrics: [
      { key: 'p50Ms', label: 'abort → terminal p50 (ms)' },
      { key: 'p99Ms', label: 'abort → terminal p99 (ms)' },
    ],
  },
  abortIgnored: {
    full: { measure: 'abort', interrupt: 'ignore', reps: 3, graceMs: 500, afterEvents: 20, runs: 2 },
    smoke: { measure: 'abort', interrupt: 'ignore', reps: 1, graceMs: 300, afterEvents: 5, runs: 1 },
    metrics: [
      { key: 'p50Ms', label: 'abort → terminal p50 (ms)' },
      { key: 'maxMs', label: 'abort → terminal max (ms)', goal: { graceMarginAtMost: 100 } },
    ],
  },
  concurrency: {
    clients: ['addon', 'yardstick', 'baseline'],
    full: { turns: 16, events: 50_000, runs: 3 },
    smoke: { turns: 4, events: 2_000, runs: 1 },
    metrics: [
      { key: 'eventsPerSec', label: 'aggregate events/s', goal: { ratioAtLeast: 1 } },
      { key: 'cpuSecondsPer100k', label: 'CPU s per 100k events' },
    ],
  },
  abortWedged: {
    // The interrupt, SIGTERM and EOF on stdin are all ignored: only SIGKILL ends the server.
    full: { measure: 'abort', interrupt: 'ignore', wedged: true, reps: 3, graceMs: 500, afterEvents: 20, runs: 2 },
    smoke: { measure: 'abort', interrupt: 'ignore', wedged: true, reps: 1, graceMs: 500, afterEvents: 5, runs: 1 },
    metrics: [
      { key: 'overGraceP50Ms', label: 'abort → terminal p50 minus the grace (ms), grace 500' },
      { key: 'maxMs', label: 'abort → terminal max (ms)' },
    ],
  },
  hostGuard: {
    // The addon with its host-death guard against the addon without it (RENNET_HOST_GUARD=off).
    clients: ['addon', 'addonGuardOff'],
    full: { measure: 'plainTurn', events: 200, turns: 10, runs: 12 },
    smoke: { measure: 'plainTurn', events: 20, turns: 2, runs: 1 },
    metrics: [
      // Judged on the median of each run minus the run next to it: a turn's wall time moves by
      // tens of ms on a loaded machine, more than the 5 ms looked for.
      { key: 'wallMs', label: 'turn call → terminal, median of a run (ms)', goal: { pairedAboveAtMost: 5 } },
      { key: 'cpuMs', label: 'client CPU per turn (ms)', goal: { pairedAboveAtMost: 5 } },
      { key: 'peakRssMb', label: 'peak RSS (MB)', goal: { pairedAboveAtMost: 2 } },
    ],
  },
}
const LABEL = { addon: 'addon', yardstick: 'yardstick', baseline: 'heavier plain client', addonGuardOff: 'addon, guard off', external: 'BENCH_YARDSTICK client' }

function runWorker(config) {
  return workerResult(spawn(process.execPath, [WORKER, JSON.stringify(config)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] }))
}

function judge(goal, addon, baseline, config, pairedDifference) {
  if (!goal || addon === null) return null
  if (goal.pairedAboveAtMost !== undefined) return pairedDifference === null ? null : pairedDifference <= goal.pairedAboveAtMost
  if (goal.ratioAtLeast !== undefined) return baseline ? addon / baseline >= goal.ratioAtLeast : null
  if (goal.ratioAtMost !== undefined) return baseline ? addon / baseline <= goal.ratioAtMost : null
  if (goal.ratioWithin !== undefined) return baseline ? Math.abs(addon / baseline - 1) <= goal.ratioWithin : null
  if (goal.aboveBaselineAtMost !== undefined) return baseline === null ? null : addon - baseline <= goal.aboveBaselineAtMost
  if (goal.addonBelow !== undefined) return addon < goal.addonBelow
  if (goal.graceMarginAtMost !== undefined) return addon - config.graceMs <= goal.graceMarginAtMost
  return null
}

function goalText(goal) {
  if (!goal) return ''
  if (goal.ratioAtLeast !== undefined) return `ratio ≥ ${goal.ratioAtLeast}`
  if (goal.ratioAtMost !== undefined) return `ratio ≤ ${goal.ratioAtMost}`
  if (goal.ratioWithin !== undefined) return `ratio within 1 ± ${goal.ratioWithin}`
  if (goal.aboveBaselineAtMost !== undefined) return `≤ baseline + ${goal.aboveBaselineAtMost}`
  if (goal.pairedAboveAtMost !== undefined) return `paired difference ≤ ${goal.pairedAboveAtMost}`
  if (goal.addonBelow !== undefined) return `addon < ${goal.addonBelow}`
  if (goal.graceMarginAtMost !== undefined) return `≤ grace + ${goal.graceMarginAtMost}`
  return ''
}

function machine() {
  const version = (cmd, args) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8' })
    return r.status === 0 ? r.stdout.trim() : null
  }
  let load = null
  try {
    load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  } catch {}
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? null,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    rustc: version('rustc', ['--version']),
    loadAverageAtStart: load,
  }
}

/** Timestamps and process ids differ between any two runs; everything else must match. */
/** Events without what differs between two runs of the same stream: times, pids, each worker's own fake. */
function normalizeShapes(events) {
  return JSON.parse(JSON.stringify(events), (key, value) =>
    ['emittedAtMs', 'startedAtMs', 'completedAtMs', 'startedAt', 'completedAt', 'pid', 'codexPath'].includes(key) ? 0 : value,
  )
}

async function main() {
  const size = smoke ? 'smoke' : 'full'
  const results = {
    size,
    date: new Date().toISOString(),
    machine: machine(),
    addon: process.env.BENCH_ADDON || 'index.js',
    measurements: {},
  }
  const problems = []
  // A measurement that needs something given (BENCH_YARDSTICK) runs only when it is.
  const selected = Object.keys(MEASUREMENTS).filter((name) => !only || only.includes(name))
  for (const name of selected.filter((n) => MEASUREMENTS[n].needs && !process.env[MEASUREMENTS[n].needs])) {
    console.log(`${name}: skipped (${MEASUREMENTS[name].needs} is not set)`)
  }
  const runnable = selected.filter((n) => !MEASUREMENTS[n].needs || process.env[MEASUREMENTS[n].needs])

  // Both clients must produce the same events from the same stream before their speed means
  // anything.
  if (runnable.some((name) => (MEASUREMENTS[name].clients ?? ['addon']).includes('addon'))) {
    const [addonShapes, baselineShapes] = await Promise.all([
      runWorker({ client: 'addon', measure: 'shapes', events: 5 }),
      runWorker({ client: 'baseline', measure: 'shapes', events: 5 }),
    ])
    const same = isDeepStrictEqual(normalizeShapes(addonShapes.events), normalizeShapes(baselineShapes.events))
    results.shapes = { same, addon: addonShapes.events, baseline: baselineShapes.events }
    if (!same) problems.push('shapes: the two clients produced different events from the same stream (see latest.json)')
    console.log(`event shapes: ${same ? 'identical' : 'DIFFERENT'} (${addonShapes.events?.length} events)`)
  }

  for (const name of runnable) {
    const spec = MEASUREMENTS[name]
    const { runs: defaultRuns, ...config } = spec[size]
    const runs = runsOverride ?? defaultRuns
    const measure = config.measure ?? name
    // The addon, what it is measured against, and what is shown beside.
    const clients = spec.clients ?? ['addon', 'baseline']
    const [first, reference, ...beside] = clients
    const record = { config: { ...config, runs }, clients, runs: [] }
    for (let r = 0; r < runs; r++) {
      // Each client goes first in turn, so that no client always meets the machine after another.
      const order = [...clients.slice(r % clients.length), ...clients.slice(0, r % clients.length)]
      for (const client of order) {
        const loadAverage = loadavg()[0]
        const result = await runWorker({ ...config, measure, client })
        record.runs.push({ run: r, client, loadAverage, ...result })
        for (const e of result.errors ?? []) problems.push(`${name} (${client}, run ${r}): ${e}`)
        process.stdout.write(`${name} run ${r + 1}/${runs} ${client}: ${summaryLine(spec.metrics, result)}\n`)
      }
    }
    const of = (client, key) => record.runs.filter((x) => x.client === client).map((x) => x[key])
    const compare = (m, other, goal) => {
      const addonRuns = of(first, m.key)
      const otherRuns = of(other, m.key)
      const addon = median(addonRuns)
      const baseline = median(otherRuns)
      const paired = (f) => median(addonRuns.map((a, i) => (typeof a === 'number' && typeof otherRuns[i] === 'number' ? f(a, otherRuns[i]) : null)))
      // Each run's addon against the other client's run of the same round: steadier on a shared machine.
      const pairedRatio = paired((a, b) => (b ? a / b : null))
      const pairedDifference = paired((a, b) => a - b)
      return {
        metric: m.key,
        label: m.label,
        against: other,
        addon,
        baseline,
        ratio: addon !== null && baseline ? addon / baseline : null,
        pairedRatio,
        pairedDifference,
        goal: goalText(goal) + (goal?.pairedAboveAtMost !== undefined && pairedDifference !== null ? ` (${fmt(pairedDifference)})` : ''),
        met: judge(goal, addon, baseline, config, pairedDifference),
      }
    }
    // Against the reference (the goals), then against each client shown beside it.
    record.summary = spec.metrics.map((m) => compare(m, reference, m.goal))
    record.beside = beside.flatMap((other) => spec.metrics.map((m) => compare(m, other, null)))
    results.measurements[name] = record
  }
  if (runnable.length > 0) printTable(results)

  if (!only || only.includes('real') || only.includes('edges')) {
    const parts = !only || only.includes('real') ? ['edges', 'real'] : ['edges']
    results.real = await realSuite({ smoke, runs: runsOverride, problems, parts })
  }
  if (!only || only.includes('calls')) results.calls = callsSuite({ smoke, runs: runsOverride, problems })
  if (!only || only.includes('tools')) results.tools = toolsSuite({ smoke, runs: runsOverride, problems })

  results.problems = problems
  mkdirSync(join(here, 'results'), { recursive: true })
  const file = join(here, 'results', smoke ? 'smoke.json' : 'latest.json')
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n')
  console.log(`\nresults: ${file}`)
  if (problems.length) {
    console.error(`\n${problems.length} correctness problem(s):\n  ${problems.join('\n  ')}`)
    process.exit(1)
  }
}

function fmt(x) {
  if (x === null || x === undefined) return '–'
  if (Math.abs(x) >= 1000) return Math.round(x).toLocaleString('en-US')
  if (Math.abs(x) >= 10) return x.toFixed(1)
  return x.toFixed(3)
}

function summaryLine(metrics, result) {
  if (result.errors?.length) return `ERRORS: ${result.errors.join('; ')}`
  return metrics.map((m) => `${m.label} ${fmt(result[m.key])}`).join(', ')
}

function printTable(results) {
  const rows = [['measurement', 'metric', 'measured (median)', 'against (median)', 'ratio of medians', 'median paired ratio', 'goal', 'met']]
  const ratio = (x) => (x === null ? '–' : x.toFixed(2))
  for (const [name, record] of Object.entries(results.measurements)) {
    for (const s of [...record.summary, ...record.beside]) {
      const title = `${name} (${LABEL[record.clients[0]]} vs ${LABEL[s.against]})`
      rows.push([title, s.label, fmt(s.addon), fmt(s.baseline), ratio(s.ratio), ratio(s.pairedRatio), s.goal, s.met === null ? '' : s.met ? 'yes' : 'NO'])
    }
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)))
  const line = (r) => `| ${r.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`
  console.log(`\n${results.size} size, ${results.machine.cpus} × ${results.machine.cpuModel}, Node ${results.machine.node}`)
  console.log(line(rows[0]))
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`)
  for (const r of rows.slice(1)) console.log(line(r))
}

await main()
