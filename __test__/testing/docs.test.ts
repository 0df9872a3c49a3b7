// The documentation's examples, run as written there: the transcript adapter of docs/events.md
// verbatim, the test kit's two vitest examples of docs/testing-your-app.md with the same scripts
// and expectations (each line of them checked to be in the page), and the JSON Schema of
// docs/utility-calls.md through the strict-mode check.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { runTurn, runUtility } from '../../index.js'
import type { HarnessEvent } from '../../index.js'
import { codexBinaryPath, createGitCwd, fakeCodexRuns, jsonMessageResponse, removeFakeCodexes, startMockModel, writeFakeCodex } from '../../testing/index.js'
import { docBlock } from '../support/docs.js'
import { BOUND_MS, eventually, liveInGroup } from '../support/procs.js'
import { Transcript } from './docs-transcript.js'

afterAll(removeFakeCodexes)

const KIT = 'docs/testing-your-app.md'

/** Each of `lines` (trimmed) is a line of `block`: the test runs what the page shows. */
function expectLines(block: string, lines: string[]) {
  const shown = new Set(block.split('\n').map((l) => l.trim()))
  for (const line of lines) expect(shown.has(line.trim()), `the example shows: ${line.trim()}`).toBe(true)
}

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

  it('the JSON Schema of docs/utility-calls.md passes the strict-mode check', () => {
    const { strictProblem } = require('../../output-schema.js')
    const utility = docBlock('docs/utility-calls.md', 'A JSON Schema', { containing: 'runUtility<{ language: string }>' })
    const literal = utility.slice(utility.indexOf('outputSchema: {') + 'outputSchema: '.length, utility.lastIndexOf('},\n})') + 1)
    const schema = Function(`return (${literal})`)()
    expect(schema.additionalProperties).toBe(false)
    expect(strictProblem(schema, 'options.outputSchema')).toBeNull()
  })
})
