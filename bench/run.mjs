#!/usr/bin/env node
// pnpm bench [--smoke] [--only a,b] [--runs N]     (names: the keys of MEASUREMENTS, real and calls)
//
// Two suites. The fake suite measures `runTurn()` against the plain Node client of
// baseline-client.mjs on the test kit's fake in its fast mode, side by side: every run of every
// measurement starts a fresh Node process per client (worker.mjs), and the two clients
// alternate (addon first on even runs, baseline first on odd ones); `hostGuard` measures the
// addon against itself with its host-death guard off. The real suite (`real`, real.mjs) runs
// the pinned Codex against the loopback mock Responses server with four clients: this
// package, the plain client, @openai/codex-sdk and the AI SDK provider (cold, prepared and
// failed turns, aborts, a waiting prepared turn's cost, account/read). The calls suite
// (`calls`, calls.mjs) times each call around turns against a plain one-shot client. Prints
// tables of medians and ratios and
// writes everything to bench/results/latest.json.
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

// A measurement: its worker config per size, the numbers it reports and the goal on them.
const MEASUREMENTS = {
  throughput: {
    full: { events: 200_000, runs: 5 },
    smoke: { events: 5_000, runs: 1 },
    metrics: [
      { key: 'eventsPerSec', label: 'events/s', goal: { ratioAtLeast: 1.5 } },
      { key: 'cpuSecondsPer100k', label: 'CPU s per 100k events', goal: { ratioAtMost: 0.67 } },
    ],
  },
  latency: {
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
const REFERENCE_LABEL = { baseline: 'plain client', addonGuardOff: 'addon, guard off' }

function runWorker(config) {
  return workerResult(spawn(process.execPath, [WORKER, JSON.stringify(config)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] }))
}

function judge(goal, addon, baseline, config, pairedDifference) {
  if (!goal || addon === null) return null
  if (goal.pairedAboveAtMost !== undefined) return pairedDifference === null ? null : pairedDifference <= goal.pairedAboveAtMost
  if (goal.ratioAtLeast !== undefined) return baseline ? addon / baseline >= goal.ratioAtLeast : null
  if (goal.ratioAtMost !== undefined) return baseline ? addon / baseline <= goal.ratioAtMost : null
  if (goal.aboveBaselineAtMost !== undefined) return baseline === null ? null : addon - baseline <= goal.aboveBaselineAtMost
  if (goal.addonBelow !== undefined) return addon < goal.addonBelow
  if (goal.graceMarginAtMost !== undefined) return addon - config.graceMs <= goal.graceMarginAtMost
  return null
}

function goalText(goal) {
  if (!goal) return ''
  if (goal.ratioAtLeast !== undefined) return `ratio ≥ ${goal.ratioAtLeast}`
  if (goal.ratioAtMost !== undefined) return `ratio ≤ ${goal.ratioAtMost}`
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
  const selected = Object.keys(MEASUREMENTS).filter((name) => !only || only.includes(name))

  // Both clients must produce the same events from the same stream before their speed means
  // anything.
  if (selected.length > 0) {
    const [addonShapes, baselineShapes] = await Promise.all([
      runWorker({ client: 'addon', measure: 'shapes', events: 5 }),
      runWorker({ client: 'baseline', measure: 'shapes', events: 5 }),
    ])
    const same = isDeepStrictEqual(normalizeShapes(addonShapes.events), normalizeShapes(baselineShapes.events))
    results.shapes = { same, addon: addonShapes.events, baseline: baselineShapes.events }
    if (!same) problems.push('shapes: the two clients produced different events from the same stream (see latest.json)')
    console.log(`event shapes: ${same ? 'identical' : 'DIFFERENT'} (${addonShapes.events?.length} events)`)
  }

  for (const name of selected) {
    const spec = MEASUREMENTS[name]
    const { runs: defaultRuns, ...config } = spec[size]
    const runs = runsOverride ?? defaultRuns
    const measure = config.measure ?? name
    // The addon, and what it is measured against.
    const [first, reference] = spec.clients ?? ['addon', 'baseline']
    const record = { config: { ...config, runs }, clients: [first, reference], runs: [] }
    for (let r = 0; r < runs; r++) {
      const order = r % 2 === 0 ? [first, reference] : [reference, first]
      for (const client of order) {
        const loadAverage = loadavg()[0]
        const result = await runWorker({ ...config, measure, client })
        record.runs.push({ run: r, client, loadAverage, ...result })
        for (const e of result.errors ?? []) problems.push(`${name} (${client}, run ${r}): ${e}`)
        process.stdout.write(`${name} run ${r + 1}/${runs} ${client}: ${summaryLine(spec.metrics, result)}\n`)
      }
    }
    record.summary = spec.metrics.map((m) => {
      const of = (client) => record.runs.filter((x) => x.client === client).map((x) => x[m.key])
      const addon = median(of(first))
      const baseline = median(of(reference))
      const addonRuns = of(first)
      const baselineRuns = of(reference)
      const paired = (f) => median(addonRuns.map((a, i) => (typeof a === 'number' && typeof baselineRuns[i] === 'number' ? f(a, baselineRuns[i]) : null)))
      // Each run's addon against the baseline next to it: steadier on a shared machine.
      const pairedRatio = paired((a, b) => (b ? a / b : null))
      const pairedDifference = paired((a, b) => a - b)
      return {
        metric: m.key,
        label: m.label,
        addon,
        baseline,
        ratio: addon !== null && baseline ? addon / baseline : null,
        pairedRatio,
        pairedDifference,
        goal: goalText(m.goal) + (m.goal?.pairedAboveAtMost !== undefined && pairedDifference !== null ? ` (${fmt(pairedDifference)})` : ''),
        met: judge(m.goal, addon, baseline, config, pairedDifference),
      }
    })
    results.measurements[name] = record
  }
  if (selected.length > 0) printTable(results)

  if (!only || only.includes('real')) results.real = await realSuite({ smoke, runs: runsOverride, problems })
  if (!only || only.includes('calls')) results.calls = callsSuite({ smoke, runs: runsOverride, problems })

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
  const rows = [['measurement', 'metric', 'addon (median)', 'reference (median)', 'ratio of medians', 'median paired ratio', 'goal', 'met']]
  const ratio = (x) => (x === null ? '–' : x.toFixed(2))
  for (const [name, record] of Object.entries(results.measurements)) {
    const title = `${name} (vs ${REFERENCE_LABEL[record.clients[1]]})`
    for (const s of record.summary) {
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
