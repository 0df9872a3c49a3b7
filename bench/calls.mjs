// The calls suite of `pnpm bench`: each call around turns (readAccount, listModels, listThreads,
// readThread, forkThread) against the pinned `codex app-server`, this package beside the plain
// one-shot client of baseline-call.mjs (spawn, `initialize`, the request, exit). Every run is a
// fresh Node process (calls-worker.mjs) and the clients alternate; wall time is call → settled
// (the child has exited for both), CPU is the client process's own. One Codex home for all
// runs, with one thread made by a real turn against the loopback mock model first (for
// readThread and forkThread). Everything runs in a loopback-only network namespace where the
// machine allows (scripts/netns.mjs): nothing reaches beyond 127.0.0.1.
//
// Goal (issue 25): ≤ 1.2× the plain client's wall time, ≤ 1.0× its CPU, on the medians.

import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isolatedSuite, liveWithEnv, median } from './common.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const CALLS = ['readAccount', 'listModels', 'listThreads', 'readThread', 'forkThread']
const MARK = 'RENNET_BENCH_RUN'

/** Runs the suite inside the namespace (this file as a program) and returns its record. */
export function callsSuite(options) {
  return isolatedSuite('calls', fileURLToPath(import.meta.url), options)
}

function worker(config) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(here, 'calls-worker.mjs'), JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let text = ''
    child.stdout.on('data', (d) => (text += d))
    child.on('exit', (code, signal) => {
      try {
        resolve(JSON.parse(text.trim().split('\n').at(-1)))
      } catch {
        resolve({ errors: [`the worker ended (${code ?? signal}) without a result: ${text.slice(-300)}`] })
      }
    })
  })
}

async function suite({ smoke, runs: runsOverride }) {
  const { start, messageResponse } = await import('../testing/mock-responses.js')
  const { createCodexHome, createGitCwd } = await import('../testing/codex-home.js')
  const { runTurn } = await import(process.env.BENCH_ADDON || '../index.js')
  const runs = runsOverride ?? (smoke ? 1 : 10)
  const problems = []
  const mock = await start([messageResponse('Hello.')])
  const home = createCodexHome({ baseUrl: mock.url })
  const cwd = createGitCwd()
  const record = { config: { runs }, runs: [], summary: [] }
  try {
    const terminal = await runTurn({ prompt: 'Say hello.', cwd: cwd.path, codexPath: home.codexPath, env: home.env }).outcome
    if (terminal.status !== 'completed') throw new Error(`the setup turn ended ${terminal.status}: ${terminal.failure?.message}`)
    for (let r = 0; r < runs; r++) {
      for (const call of CALLS) {
        for (const client of r % 2 === 0 ? ['addon', 'baseline'] : ['baseline', 'addon']) {
          const mark = `${call}-${client}-${r}-${process.pid}`
          const env = { ...home.env, [MARK]: mark }
          const result = await worker({ client, call, codexPath: home.codexPath, env, cwd: cwd.path, threadId: terminal.threadId })
          for (const e of result.errors ?? []) problems.push(`calls ${call} (${client}, run ${r}): ${e}`)
          const left = liveWithEnv(`${MARK}=${mark}`)
          if (left.length > 0) problems.push(`calls ${call} (${client}, run ${r}): left running: ${left.join(', ')}`)
          record.runs.push({ run: r, call, client, ...result })
          console.log(`calls ${call} ${r + 1}/${runs} ${client}: ${result.wallMs?.toFixed(1)} ms wall, ${result.cpuMs?.toFixed(1)} ms CPU`)
        }
      }
    }
  } finally {
    await mock.close()
    home.cleanup()
    cwd.cleanup()
  }
  for (const call of CALLS) {
    const of = (client, key) => median(record.runs.filter((x) => x.call === call && x.client === client).map((x) => x[key]))
    const row = { call, addonWallMs: of('addon', 'wallMs'), baselineWallMs: of('baseline', 'wallMs'), addonCpuMs: of('addon', 'cpuMs'), baselineCpuMs: of('baseline', 'cpuMs') }
    row.wallRatio = row.addonWallMs / row.baselineWallMs
    row.cpuRatio = row.addonCpuMs / row.baselineCpuMs
    row.met = row.wallRatio <= 1.2 && row.cpuRatio <= 1.0
    record.summary.push(row)
  }
  const f = (x) => x.toFixed(1)
  console.log('\n| call | wall: this package | wall: plain client | ratio | CPU: this package | CPU: plain client | ratio | goal met |')
  console.log('|---|---|---|---|---|---|---|---|')
  for (const s of record.summary) {
    console.log(`| ${s.call} | ${f(s.addonWallMs)} ms | ${f(s.baselineWallMs)} ms | ${s.wallRatio.toFixed(2)} | ${f(s.addonCpuMs)} ms | ${f(s.baselineCpuMs)} ms | ${s.cpuRatio.toFixed(2)} | ${s.met ? 'yes' : 'NO'} |`)
  }
  record.problems = problems
  return record
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { smoke, runs, out } = JSON.parse(process.argv[2])
  const record = await suite({ smoke, runs })
  const { writeFileSync } = await import('node:fs')
  writeFileSync(out, JSON.stringify(record))
}
