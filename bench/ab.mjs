#!/usr/bin/env node
// node bench/ab.mjs [--rounds 3] [--runs N] [--only throughput,latency,edges] [--beside '<command>'] <name>=<index.js> ...
//
// Builds side by side: each round runs the chosen measurements (`bench/run.mjs --only …`, with
// `--runs N` when given, else each measurement's full size) once per build, in an order that
// rotates from round to round, so that every build meets the same stretch of machine weather.
// Each build is measured as run.mjs measures it, against the yardstick in the same minute;
// what is compared across builds is that ratio (throughput: the median of each run's addon
// against the yardstick's run of the same round; the edges: the ratio of the medians), never
// absolute speed. One build is allowed: the rounds of the final record. `--beside` runs a
// shell command over and over (in its own process group, ended with the rounds) for rounds
// with a build beside the bench. Prints one row per build and round, the median over rounds,
// and the goals of the yardstick issue round by round; writes everything to bench/results/ab.json.
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { median } from './common.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const argv = process.argv.slice(2)
const flag = (name, fallback) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv.splice(i, 2)[1] : fallback
}
const rounds = Number(flag('--rounds', '3'))
const runs = flag('--runs', undefined)
const only = flag('--only', 'throughput,latency')
const beside = flag('--beside', undefined)
const builds = argv.map((arg) => {
  const at = arg.indexOf('=')
  if (at <= 0) throw new TypeError(`a build is <name>=<path of its index.js>, not ${JSON.stringify(arg)}`)
  return { name: arg.slice(0, at), index: resolve(arg.slice(at + 1)) }
})
if (builds.length < 1 || !(rounds >= 1)) {
  console.error("usage: node bench/ab.mjs [--rounds 3] [--runs N] [--only a,b] [--beside '<command>'] <name>=<index.js> ...")
  process.exit(2)
}

// What each row shows: the ratio of a metric against the yardstick, or the addon's median and
// the yardstick's; `goal`: the yardstick issue's.
const COLUMNS = [
  { measurement: 'throughput', metric: 'eventsPerSec', label: 'events/s ×', show: 'ratio', goal: (x) => x >= 1.5, goalText: '≥ 1.5' },
  { measurement: 'throughput', metric: 'cpuSecondsPer100k', label: 'CPU/event ×', show: 'ratio', goal: (x) => x <= 0.8, goalText: '≤ 0.8' },
  { measurement: 'edges', metric: 'firstTextMs', label: 'first delta ×', show: 'ratio', goal: (x) => x <= 1.15, goalText: '≤ 1.15' },
  { measurement: 'edges', metric: 'doneMs', label: 'turnCompleted ×', show: 'ratio', goal: (x) => x <= 1.15, goalText: '≤ 1.15' },
  { measurement: 'edges', metric: 'firstTextMs', label: 'first delta ms (yardstick)', show: 'both' },
  { measurement: 'edges', metric: 'doneMs', label: 'turnCompleted ms (yardstick)', show: 'both' },
  { measurement: 'latency', metric: 'p50Ms', label: 'latency p50 ms (yardstick)', show: 'both' },
  { measurement: 'latency', metric: 'p99Ms', label: 'latency p99 ms (yardstick)', show: 'both' },
].filter((c) => only.split(',').includes(c.measurement))

/** A measurement's summary row for a metric: `{ ratio, addon, baseline }` against the yardstick. */
function valueOf(latest, c) {
  if (c.measurement === 'edges') {
    const row = latest.real.edges.find((x) => x.key === c.metric)
    return { ratio: row.ratio, addon: row.addon?.median ?? null, baseline: row.yardstick?.median ?? null }
  }
  const s = latest.measurements[c.measurement].summary.find((x) => x.metric === c.metric)
  return { ratio: s.pairedRatio, addon: s.addon, baseline: s.baseline }
}

// A build beside the bench: the command again whenever it ends (a shell loop: the rounds block
// this script's event loop), until the rounds are over; its whole process group is ended then,
// or when this script is ended.
let besideChild = null
const stopBeside = () => {
  const child = besideChild
  besideChild = null
  try {
    if (child) process.kill(-child.pid, 'SIGKILL')
  } catch {}
}
if (beside) {
  besideChild = spawn('sh', ['-c', `while :; do ${beside}\ndone`], { stdio: 'ignore', detached: true })
  process.on('exit', stopBeside)
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130))
}

const record = { date: new Date().toISOString(), rounds, runs: runs === undefined ? null : Number(runs), only, beside: beside ?? null, builds, results: [] }
for (let round = 0; round < rounds; round++) {
  const order = builds.map((_, i) => builds[(i + round) % builds.length])
  for (const build of order) {
    const load = loadavg()[0]
    const run = spawnSync(process.execPath, [join(here, 'run.mjs'), '--only', only, ...(runs === undefined ? [] : ['--runs', runs])], {
      env: { ...process.env, BENCH_ADDON: build.index },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    const latest = JSON.parse(readFileSync(join(here, 'results', 'latest.json'), 'utf8'))
    // An older build's events may differ in shape from today's plain client (fields added
    // since): named, and the speed still compared, since each delta is checked on its own. Any
    // other problem (a delta lost or out of order, a wrong terminal) ends the comparison.
    const problems = run.status === 0 ? [] : latest.problems ?? [`bench/run.mjs ended with ${run.status ?? run.signal}`]
    const other = problems.filter((p) => !p.startsWith('shapes:'))
    if (run.status !== 0 && (other.length > 0 || problems.length === 0 || latest.addon !== build.index)) {
      console.error(`${build.name}, round ${round + 1}: ${other.join('; ') || `bench/run.mjs ended with ${run.status ?? run.signal}`}`)
      process.exit(1)
    }
    if (problems.length && round === 0) console.log(`${build.name}: its events differ in shape from the plain client's (an older build)`)
    const values = {}
    for (const c of COLUMNS) values[c.label] = valueOf(latest, c)
    record.results.push({ build: build.name, round, loadAverageAtStart: load, loadAverageAtEnd: loadavg()[0], values })
    console.log(`${build.name}, round ${round + 1} (load ${load.toFixed(2)}): ${line(values)}`)
  }
}

function line(values) {
  return COLUMNS.map((c) => {
    const v = values[c.label]
    return c.show === 'ratio' ? `${c.label} ${v.ratio.toFixed(2)}` : `${c.label} ${v.addon.toFixed(2)} (${v.baseline.toFixed(2)})`
  }).join(', ')
}

stopBeside()

console.log(`\n| build | round | load | ${COLUMNS.map((c) => c.label).join(' | ')} |`)
console.log(`|---|---|---|${COLUMNS.map(() => '---').join('|')}|`)
for (const build of builds) {
  const mine = record.results.filter((r) => r.build === build.name)
  const cell = (c, pick) => {
    const v = pick(c)
    return c.show === 'ratio' ? v.ratio.toFixed(2) : `${v.addon.toFixed(2)} (${v.baseline.toFixed(2)})`
  }
  for (const r of mine) {
    console.log(`| ${build.name} | ${r.round + 1} | ${r.loadAverageAtStart.toFixed(2)} | ${COLUMNS.map((c) => cell(c, () => r.values[c.label])).join(' | ')} |`)
  }
  const med = (c, key) => median(mine.map((r) => r.values[c.label][key]))
  console.log(`| ${build.name} | median | | ${COLUMNS.map((c) => cell(c, () => ({ ratio: med(c, 'ratio'), addon: med(c, 'addon'), baseline: med(c, 'baseline') }))).join(' | ')} |`)
}

// The yardstick issue's table: each goal, round by round, per build.
const goals = COLUMNS.filter((c) => c.goal)
if (goals.length) {
  console.log(`\n| build | ${goals.map((c) => `${c.label} (goal ${c.goalText})`).join(' | ')} | load at the rounds' starts and ends |`)
  console.log(`|---|${goals.map(() => '---').join('|')}|---|`)
  for (const build of builds) {
    const mine = record.results.filter((r) => r.build === build.name)
    const cells = goals.map((c) => {
      const values = mine.map((r) => r.values[c.label].ratio)
      const met = values.every((x) => x !== null && c.goal(x))
      return `${values.map((x) => (x === null ? '–' : x.toFixed(2))).join(', ')}: ${met ? 'met' : 'NOT met'}`
    })
    const loads = mine.map((r) => `${r.loadAverageAtStart.toFixed(1)}–${r.loadAverageAtEnd.toFixed(1)}`).join(', ')
    console.log(`| ${build.name} | ${cells.join(' | ')} | ${loads} |`)
  }
}
mkdirSync(join(here, 'results'), { recursive: true })
writeFileSync(join(here, 'results', 'ab.json'), JSON.stringify(record, null, 2) + '\n')
console.log(`\nresults: ${join(here, 'results', 'ab.json')}`)
