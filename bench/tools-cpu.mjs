#!/usr/bin/env node
// node bench/tools-cpu.mjs (inside a loopback-only namespace: unshare -rn, lo up)
//
// The client process's CPU over each of five real turns in one process, against the pinned CLI
// and the loopback mock: a plain turn, three turns with one app tool the model calls twice, a
// plain turn. The first turn with tools pays what the package loads once per process for them
// (ajv, its formats, the schema's compiled check, cached by schema); the later ones show what a
// turn with tools costs beside one without. BENCHMARKS.md, "App tools: what a call costs".
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { runTurn } = require('../index.js')
const { startMockModel, toolCallResponse, messageResponse, createGitCwd, codexBinaryPath } = require('../testing/index.js')

const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }
const tools = { get_weather: { description: 'Weather for a city', inputSchema: schema, execute: ({ city }) => `Sunny in ${city}` } }

async function turn(withTools) {
  const scenario = withTools
    ? [toolCallResponse('get_weather', { city: 'Oslo' }), toolCallResponse('get_weather', { city: 'Rome' }), messageResponse('ok')]
    : [messageResponse('ok')]
  const model = await startMockModel(scenario)
  const repo = createGitCwd()
  try {
    const started = process.cpuUsage()
    const running = runTurn({ prompt: 'hi', cwd: repo.path, codexPath: codexBinaryPath(), env: model.env, ...(withTools ? { tools } : {}) })
    for await (const _ of running);
    const { status } = await running.outcome
    const cpu = process.cpuUsage(started)
    return { status, cpuMs: (cpu.user + cpu.system) / 1000 }
  } finally {
    await model.close()
    repo.cleanup()
  }
}

for (const withTools of [false, true, true, true, false]) {
  const { status, cpuMs } = await turn(withTools)
  console.log(`${withTools ? 'with tools' : 'plain     '} ${status} ${cpuMs.toFixed(1)} ms CPU`)
}
