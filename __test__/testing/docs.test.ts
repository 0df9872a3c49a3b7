// The documentation's examples, run as written there: the transcript adapter of docs/events.md
// verbatim, the test kit's two vitest examples of docs/testing-your-app.md with the same scripts
// and expectations (each line of them checked to be in the page), its app tools examples verbatim
// (the regions between `docs:` markers below are the page's code blocks), and the JSON Schema of
// docs/utility-calls.md through the strict-mode check.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { runTurn, runUtility } from '../../index.js'
import type { HarnessEvent } from '../../index.js'
import {
  codexBinaryPath,
  createGitCwd,
  fakeCodexRuns,
  jsonMessageResponse,
  messageResponse,
  offeredTool,
  removeFakeCodexes,
  startMockModel,
  toolCallResponse,
  toolOutput,
  writeFakeCodex,
} from '../../testing/index.js'
import { docBlock, docSection } from '../support/docs.js'
import { BOUND_MS, eventually, liveInGroup } from '../support/procs.js'
import { Transcript } from './docs-transcript.js'

afterAll(removeFakeCodexes)

const KIT = 'docs/testing-your-app.md'

/** The lines between `// docs:begin <name>` and `// docs:end` in this file, without their indent. */
function region(name: string): string {
  const source = readFileSync(__filename, 'utf8')
  const match = new RegExp(`\\n( *)// docs:begin ${name}\\n([\\s\\S]*?)\\n *// docs:end`).exec(source)
  if (!match) throw new Error(`no docs region ${name}`)
  const [, indent, body] = match
  return body.split('\n').map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line)).join('\n') + '\n'
}

/** Each of `lines` (trimmed) is a line of `block`: the test runs what the page shows. */
function expectLines(block: string, lines: string[]) {
  const shown = new Set(block.split('\n').map((l) => l.trim()))
  for (const line of lines) expect(shown.has(line.trim()), `the example shows: ${line.trim()}`).toBe(true)
}

describe("request()'s door, said plainly", () => {
  const pinned = new Set(
    [...readFileSync(join(__dirname, '..', '..', 'types', 'codex', 'ClientRequestMap.d.ts'), 'utf8').matchAll(/"([^"]+)": \{ params/g)].map((m) => m[1]),
  )

  it('docs/calls.md lists the methods that write the config or files, run commands or change the account: each one of the pinned protocol', () => {
    const section = docSection('docs/calls.md', 'What `request()` can change')
    const named = [...section.matchAll(/`([a-zA-Z]+(?:\/[a-zA-Z_]+)+)`/g)].map((m) => m[1])
    expect(named.filter((method) => !pinned.has(method))).toEqual([])
    expect(named).toEqual(
      expect.arrayContaining(['config/value/write', 'config/batchWrite', 'command/exec', 'fs/writeFile', 'thread/shellCommand', 'account/login/start']),
    )
  })

  it("docs/agent-loop.md's approval handler is the one the types project compiles (approvals.mts), verbatim", () => {
    const compiled = readFileSync(join(__dirname, '..', 'types', 'approvals.mts'), 'utf8')
    const between = compiled.slice(compiled.indexOf('// --- docs/agent-loop.md\n') + '// --- docs/agent-loop.md\n'.length, compiled.indexOf('  // --- end'))
    expect(docBlock('docs/agent-loop.md', "Reading an approval's command")).toBe(between)
  })

  it("the README's promise names request() as the app's explicit door", () => {
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8')
    const promise = readme.split('\n- ').find((bullet) => bullet.includes('never written behind your back'))
    expect(promise).toContain('`request()`')
    expect(promise).toContain('docs/calls.md#what-request-can-change')
  })
})

describe('what docs/testing-your-app.md says of the kit', () => {
  it("codexBinaryPath() is the installed @openai/codex's binary, whatever RENNET_CODEX_BIN says", () => {
    const installed = codexBinaryPath()
    const before = process.env.RENNET_CODEX_BIN
    process.env.RENNET_CODEX_BIN = '/nonexistent/codex'
    try {
      expect(codexBinaryPath()).toBe(installed)
    } finally {
      if (before === undefined) delete process.env.RENNET_CODEX_BIN
      else process.env.RENNET_CODEX_BIN = before
    }
    expect(installed).toMatch(/@openai[\\/]codex/)
  })
})

describe('documentation examples', () => {
  it('docs-transcript.ts is the adapter of docs/events.md, verbatim', () => {
    const copy = readFileSync(join(__dirname, 'docs-transcript.ts'), 'utf8').split('\n').slice(2).join('\n')
    expect(docBlock('docs/events.md', 'An adapter: harness events to a UI transcript')).toBe(copy)
  })

  it('the scripted fake example', async () => {
    const codexPath = writeFakeCodex({
      steps: [
        { type: 'command', command: 'cargo build', output: ['Compiling app\n', 'error[E0308]\n'], exitCode: 101 },
        { type: 'message', text: ['The build ', 'fails.'] },
        { type: 'fail', message: 'Quota exceeded. Check your plan and billing details.', codexErrorInfo: 'usageLimitExceeded' },
      ],
    })
    const transcript = new Transcript()
    for await (const event of runTurn({ prompt: 'Fix the build', cwd: process.cwd(), codexPath })) transcript.apply(event)

    expect(transcript.entries).toEqual([
      { kind: 'command', id: 'call_1', command: 'cargo build', output: 'Compiling app\nerror[E0308]\n', exitCode: 101 },
      { kind: 'assistant', id: 'msg_1', text: 'The build fails.' },
      { kind: 'note', text: 'TURN_FAILED: Quota exceeded. Check your plan and billing details.' },
    ])
    const [run] = fakeCodexRuns(codexPath)
    expect(run.requests('turn/start')[0].input[0].text).toBe('Fix the build')
    expect(await eventually(() => liveInGroup(run.pid).length === 0, BOUND_MS)).toBe(true)

    expectLines(docBlock(KIT, 'Without Codex: a scripted fake app-server', { containing: 'new Transcript()' }), [
      "{ type: 'command', command: 'cargo build', output: ['Compiling app\\n', 'error[E0308]\\n'], exitCode: 101 },",
      "{ type: 'message', text: ['The build ', 'fails.'] },",
      "{ type: 'fail', message: 'Quota exceeded. Check your plan and billing details.', codexErrorInfo: 'usageLimitExceeded' },",
      "for await (const event of runTurn({ prompt: 'Fix the build', cwd: process.cwd(), codexPath })) transcript.apply(event)",
      "{ kind: 'command', id: 'call_1', command: 'cargo build', output: 'Compiling app\\nerror[E0308]\\n', exitCode: 101 },",
      "{ kind: 'assistant', id: 'msg_1', text: 'The build fails.' },",
      "{ kind: 'note', text: 'TURN_FAILED: Quota exceeded. Check your plan and billing details.' },",
      "expect(fakeCodexRuns(codexPath)[0].requests('turn/start')[0].input[0].text).toBe('Fix the build')",
    ])
  })

  it('the adapter builds the whole output of commands Codex did not stream whole', async () => {
    const codexPath = writeFakeCodex({
      steps: [
        // A fast command: 0.171.0 streams none of its output.
        { type: 'command', command: 'make', aggregatedOutput: 'out\nerr\n', exitCode: 2 },
        // What it printed before its item/started never streamed.
        { type: 'command', command: 'make test', output: ['line-3\n'], aggregatedOutput: 'line-1\nline-2\nline-3\n' },
        // Streamed in part.
        { type: 'command', command: 'make doc', output: ['a\n'], aggregatedOutput: 'a\nb\n' },
        { type: 'message', text: 'Built.' },
      ],
    })
    const transcript = new Transcript()
    const events: HarnessEvent[] = []
    for await (const event of runTurn({ prompt: 'Build it', cwd: process.cwd(), codexPath })) {
      events.push(event)
      transcript.apply(event)
    }
    expect(transcript.entries).toEqual([
      { kind: 'command', id: 'call_1', command: 'make', output: 'out\nerr\n', exitCode: 2 },
      { kind: 'command', id: 'call_2', command: 'make test', output: 'line-1\nline-2\nline-3\n', exitCode: 0 },
      { kind: 'command', id: 'call_3', command: 'make doc', output: 'a\nb\n', exitCode: 0 },
      { kind: 'assistant', id: 'msg_1', text: 'Built.' },
    ])
    const output = events.filter((e) => e.type === 'commandOutput')
    expect(output).toEqual([
      { type: 'commandOutput', itemId: 'call_1', delta: 'out\nerr\n' },
      { type: 'commandOutput', itemId: 'call_2', delta: 'line-3\n' },
      { type: 'commandOutput', itemId: 'call_2', delta: 'line-1\nline-2\nline-3\n', replace: true },
      { type: 'commandOutput', itemId: 'call_3', delta: 'a\n' },
      { type: 'commandOutput', itemId: 'call_3', delta: 'b\n' },
    ])
  })

  it('the mock model example, with the zod schema of docs/utility-calls.md', async () => {
    // As in the utility example.
    const Language = z.object({
      language: z.string(),
      confidence: z.number().min(0).max(1),
      framework: z.string().nullable(),
    })
    const model = await startMockModel([jsonMessageResponse({ language: 'Rust', confidence: 0.9, framework: null })])
    const repo = createGitCwd({ files: { 'src/main.rs': 'fn main() {}\n' } })
    try {
      const { output } = await runUtility({
        prompt: 'Name the main language of this repository.',
        cwd: repo.path,
        codexPath: codexBinaryPath(),
        env: model.env,
        outputSchema: Language,
      })
      expect(output).toEqual({ language: 'Rust', confidence: 0.9, framework: null })
      expect(model.requests[0].body.text.format).toMatchObject({ type: 'json_schema', strict: true })
    } finally {
      await model.close()
      repo.cleanup()
    }
    expectLines(docBlock('docs/utility-calls.md', 'With a schema library', { containing: 'z.object' }), [
      'language: z.string(),',
      'confidence: z.number().min(0).max(1),',
      'framework: z.string().nullable(),   // "optional" in strict mode: required, but may be null',
    ])
    expectLines(docBlock(KIT, 'With the real Codex CLI: a scripted model'), [
      "const model = await startMockModel([jsonMessageResponse({ language: 'Rust', confidence: 0.9, framework: null })])",
      "const repo = createGitCwd({ files: { 'src/main.rs': 'fn main() {}\\n' } })",
      "prompt: 'Name the main language of this repository.',",
      'cwd: repo.path,',
      'codexPath: codexBinaryPath(),',
      'env: model.env,',
      'outputSchema: Language,',
      "expect(output).toEqual({ language: 'Rust', confidence: 0.9, framework: null })",
      "expect(model.requests[0].body.text.format).toMatchObject({ type: 'json_schema', strict: true })",
    ])
  })

  it('app tools: the fake plays a call of a tool the thread was started with, answered in onServerRequest', async () => {
    // docs:begin app-tools-fake
    const codexPath = writeFakeCodex({
      // A thread started earlier with the app's tool: a resume keeps it.
      threadTools: {
        'weather-thread': [{ type: 'function', name: 'get_weather', description: 'Weather for a city', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } }],
      },
      steps: [
        { type: 'toolCall', tool: 'get_weather', arguments: { city: 'Oslo' }, callId: 'call_w' },
        { type: 'message', text: 'Sunny in Oslo.' },
      ],
    })
    const turn = runTurn({
      prompt: 'Weather in Oslo?',
      cwd: process.cwd(),
      codexPath,
      threadId: 'weather-thread',
      onServerRequest: (request) => (request.method === 'item/tool/call' ? { contentItems: [{ type: 'inputText', text: 'Sunny, 21C' }], success: true } : undefined),
    })
    expect((await turn.outcome).finalMessage).toBe('Sunny in Oslo.')
    // What the model got for the call, as Codex passes it on: one text is the plain string.
    const [call] = fakeCodexRuns(codexPath)[0].toolCalls
    expect(call).toMatchObject({ tool: 'get_weather', arguments: { city: 'Oslo' }, status: 'completed', output: 'Sunny, 21C' })
    // docs:end
    expect(await eventually(() => liveInGroup(fakeCodexRuns(codexPath)[0].pid).length === 0, 5000)).toBe(true)
    expect(docBlock(KIT, 'App tools', { containing: 'threadTools' })).toBe(region('app-tools-fake'))
  })

  it('app tools: the mock model calls a tool, and tells what it was offered and given back', async () => {
    // docs:begin app-tools-mock
    const model = await startMockModel([
      toolCallResponse('get_weather', { city: 'Oslo' }, { callId: 'call_w' }),
      (request) => messageResponse(`The app said: ${toolOutput(request.body, 'call_w')}`),
    ])
    const repo = createGitCwd()
    try {
      const terminal = await runTurn({ prompt: 'Weather in Oslo?', cwd: repo.path, codexPath: codexBinaryPath(), env: model.env }).outcome
      // The thread has no such tool: Codex did not offer it, and asked the app nothing.
      expect(offeredTool(model.requests[0].body, 'get_weather')).toBeUndefined()
      expect(terminal.finalMessage).toBe('The app said: unsupported call: get_weather')
    } finally {
      await model.close()
      repo.cleanup()
    }
    // docs:end
    expect(docBlock(KIT, 'App tools', { containing: 'toolCallResponse' })).toBe(region('app-tools-mock'))
  })

  it('the JSON Schema of docs/utility-calls.md passes the strict-mode check', () => {
    const { strictProblem } = require('../../lib/output-schema.js')
    const utility = docBlock('docs/utility-calls.md', 'A JSON Schema', { containing: 'runUtility<{ language: string }>' })
    const literal = utility.slice(utility.indexOf('outputSchema: {') + 'outputSchema: '.length, utility.lastIndexOf('},\n})') + 1)
    const schema = Function(`return (${literal})`)()
    expect(schema.additionalProperties).toBe(false)
    expect(strictProblem(schema, 'options.outputSchema')).toBeNull()
  })
})
