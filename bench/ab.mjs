#!/usr/bin/env node
// node bench/ab.mjs [--rounds 3] [--runs 9] [--only throughput,latency] <name>=<index.js> ...
//
// Builds side by side: each round runs the fake suite's measurements (`bench/run.mjs --only …
// --runs N`) once per build, in an order that rotates from round to round, so that every build
// meets the same stretch of machine weather. Each build is measured as run.mjs measures it,
// against the plain client in the same minute; what is compared across builds is that ratio
// (the median of each run's addon against the baseline run next to it), never absolute speed.
// Prints one row per build and round and the median over rounds; writes everything to
// bench/results/ab.json.
import { spawnSync } from 'node:child_process'
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
const runs = flag('--runs', '9')
const only = flag('--only', 'throughput,latency')
const builds = argv.map((arg) => {
  const at = arg.indexOf('=')
  if (at <= 0) throw new TypeError(`a build is <name>=<path of its index.js>, not ${JSON.stringify(arg)}`)
  return { name: arg.slice(0, at), index: resolve(arg.slice(at + 1)) }
})
if (builds.length < 2 || !(rounds >= 1)) {
  console.error('usage: node bench/ab.mjs [--rounds 3] [--runs 9] [--only a,b] <name>=<index.js> <name>=<index.js> ...')
  process.exit(2)
}

// What each row shows: the paired ratio of a metric, or the addon's median and the baseline's.
const COLUMNS = [
  { measurement: 'throughput', metric: 'eventsPerSec', label: 'events/s ×', show: 'ratio' },
  { measurement: 'throughput', metric: 'cpuSecondsPer100k', label: 'CPU/event ×', show: 'ratio' },
  { measurement: 'latency', metric: 'p50Ms', label: 'latency p50 ms (client)', show: 'both' },
  { measurement: 'latency', metric: 'p99Ms', label: 'latency p99 ms (client)', show: 'both' },
].filter((c) => only.split(',').includes(c.measurement))

const record = { date: new Date().toISOString(), rounds, runs: Number(runs), only, builds, results: [] }
for (let round = 0; round < rounds; round++) {
  const order = builds.map((_, i) => builds[(i + round) % builds.length])
  for (const build of order) {
    const load = loadavg()[0]
    const run = spawnSync(process.execPath, [join(here, 'run.mjs'), '--only', only, '--runs', runs], {
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
    for (const c of COLUMNS) {
      const s = latest.measurements[c.measurement].summary.find((x) => x.metric === c.metric)
      values[c.label] = { ratio: s.pairedRatio, addon: s.addon, baseline: s.baseline }
    }
    record.results.push({ build: build.name, round, loadAverageAtStart: load, values })
    console.log(`${build.name}, round ${round + 1} (load ${load.toFixed(2)}): ${line(values)}`)
  }
}

function line(values) {
  return COLUMNS.map((c) => {
    const v = values[c.label]
    return c.show === 'ratio' ? `${c.label} ${v.ratio.toFixed(2)}` : `${c.label} ${v.addon.toFixed(2)} (${v.baseline.toFixed(2)})`
  }).join(', ')
}

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
mkdirSync(join(here, 'results'), { recursive: true })
writeFileSync(join(here, 'results', 'ab.json'), JSON.stringify(record, null, 2) + '\n')
console.log(`\nresults: ${join(here, 'results', 'ab.json')}`)
