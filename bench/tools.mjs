// The app tools suite of `pnpm bench` (`--only tools`): what one call of an app tool costs on top
// of Codex's own round trip (issue 39). The pinned `codex app-server` against the loopback mock
// model, which calls the app's tool once per response; for each call, the time from the app's
// function being called to the model's next request arriving at the mock — this package
// (`runTurn({ tools })`: the core routes `item/tool/call` to JavaScript, the arguments are
// validated, `execute` runs, the answer goes back through the core) against a plain client
// answering the same call with the same function (tools-worker.mjs). Both include Codex's own
// part (reading the answer, completing the item, building and sending the next request); the
// difference is the package's. Every run is a fresh Node process per client, the clients
// alternate who goes first, and everything runs in a loopback-only network namespace where the
// machine allows (scripts/netns.mjs).

import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isolatedSuite, liveWithEnv, median, workerResult } from './common.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const MARK = 'RENNET_BENCH_RUN'
const CLIENTS = ['addon', 'plain']

/** Runs the suite inside the namespace (this file as a program) and returns its record. */
export function toolsSuite(options) {
  return isolatedSuite('tools', fileURLToPath(import.meta.url), options)
}

function worker(config, mark) {
  const child = spawn(process.execPath, [join(here, 'tools-worker.mjs'), JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, [MARK]: mark },
  })
  return workerResult(child)
}

async function suite({ smoke, runs: runsOverride }) {
  const runs = runsOverride ?? (smoke ? 1 : 10)
  const calls = smoke ? 2 : 5
  const problems = []
  const record = { config: { runs, calls }, runs: [], summary: null }
  for (let r = 0; r < runs; r++) {
    for (const client of r % 2 === 0 ? CLIENTS : [...CLIENTS].reverse()) {
      const mark = `tools-${client}-${r}-${process.pid}`
      const result = await worker({ client, calls }, mark)
      for (const e of result.errors ?? []) problems.push(`tools (${client}, run ${r}): ${e}`)
      const left = liveWithEnv(`${MARK}=${mark}`)
      if (left.length > 0) problems.push(`tools (${client}, run ${r}): left running: ${left.join(', ')}`)
      record.runs.push({ run: r, client, ...result })
      const gaps = (result.gapsMs ?? []).map((g) => g.toFixed(1)).join(', ')
      const inbound = (result.inboundMs ?? []).map((g) => g.toFixed(1)).join(', ')
      console.log(`tools ${r + 1}/${runs} ${client}: call → next request ${gaps} ms; response → call ${inbound} ms; turn ${result.wallMs?.toFixed(0)} ms wall, ${result.cpuMs?.toFixed(0)} ms CPU`)
    }
  }
  const all = (client, key) => record.runs.filter((x) => x.client === client).flatMap((x) => x[key] ?? [])
  const one = (client, key) => median(record.runs.filter((x) => x.client === client).map((x) => x[key]))
  const s = {
    addonGapMs: median(all('addon', 'gapsMs')),
    plainGapMs: median(all('plain', 'gapsMs')),
    addonInboundMs: median(all('addon', 'inboundMs')),
    plainInboundMs: median(all('plain', 'inboundMs')),
    addonCalls: all('addon', 'gapsMs').length,
    plainCalls: all('plain', 'gapsMs').length,
    addonWallMs: one('addon', 'wallMs'),
    plainWallMs: one('plain', 'wallMs'),
    addonCpuMs: one('addon', 'cpuMs'),
    plainCpuMs: one('plain', 'cpuMs'),
  }
  // Paired: each run's median for the package against the plain client's of the same round.
  const paired = (key) => {
    const of = (client, r) => median(record.runs.find((x) => x.client === client && x.run === r)?.[key] ?? [])
    return median(Array.from({ length: runs }, (_, r) => (of('addon', r) !== null && of('plain', r) !== null ? of('addon', r) - of('plain', r) : null)))
  }
  s.pairedDifferenceMs = paired('gapsMs')
  s.pairedInboundDifferenceMs = paired('inboundMs')
  record.summary = s
  const f = (x) => (x === null ? '–' : x.toFixed(1))
  console.log('\n| measure | this package | plain client | difference (median of paired runs) |')
  console.log('|---|---|---|---|')
  console.log(`| app tool call → next model request (median of ${s.addonCalls} / ${s.plainCalls} calls) | ${f(s.addonGapMs)} ms | ${f(s.plainGapMs)} ms | ${f(s.pairedDifferenceMs)} ms |`)
  console.log(`| the way in: the response making the call written → the app's function called | ${f(s.addonInboundMs)} ms | ${f(s.plainInboundMs)} ms | ${f(s.pairedInboundDifferenceMs)} ms |`)
  console.log(`| whole turn, ${calls} calls (median of ${runs} runs) | ${f(s.addonWallMs)} ms | ${f(s.plainWallMs)} ms | |`)
  console.log(`| client process CPU over the turn | ${f(s.addonCpuMs)} ms | ${f(s.plainCpuMs)} ms | |`)
  record.problems = problems
  return record
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { smoke, runs, out } = JSON.parse(process.argv[2])
  const record = await suite({ smoke, runs })
  writeFileSync(out, JSON.stringify(record))
}
