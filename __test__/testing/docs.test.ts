// The README's examples of the test kit, run as written there (the adapter verbatim, the two
// vitest examples with the same scripts and expectations).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { runTurn, runUtility } from '../../index.js'
import { codexBinaryPath, createGitCwd, fakeCodexRuns, jsonMessageResponse, removeFakeCodexes, startMockModel, writeFakeCodex } from '../../testing/index.js'
import { eventually, liveInGroup } from '../support/procs.js'
import { Transcript } from './readme-transcript.js'

afterAll(removeFakeCodexes)

const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8')
const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])

describe('README examples', () => {
  it('readme-transcript.ts is the README adapter, verbatim', () => {
    const copy = readFileSync(join(__dirname, 'readme-transcript.ts'), 'utf8').split('\n').slice(2).join('\n')
    expect(blocks.find((b) => b.includes('export class Transcript'))).toBe(copy)
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
    expect(await eventually(() => liveInGroup(run.pid).length === 0, 5000)).toBe(true)
  })

  it('the mock model example, with the zod schema of "Utility calls"', async () => {
    // As in the README's utility example.
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
    expect(blocks.some((b) => b.includes('framework: z.string().nullable(),') && b.includes('confidence: z.number().min(0).max(1),'))).toBe(true)
  })

  it("the README's JSON Schemas pass the strict-mode check", () => {
    const { strictProblem } = require('../../output-schema.js')
    const utility = blocks.find((b) => b.includes('runUtility<{ language: string }>'))!
    const literal = utility.slice(utility.indexOf('outputSchema: {') + 'outputSchema: '.length, utility.lastIndexOf('},\n})') + 1)
    const schema = Function(`return (${literal})`)()
    expect(schema.additionalProperties).toBe(false)
    expect(strictProblem(schema, 'options.outputSchema')).toBeNull()
  })
})
