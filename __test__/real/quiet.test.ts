// The package writes nothing to the app's console: an app (__test__/fixtures/quiet-app.mjs)
// runs real Codex turns whose server requests it answers itself (an approval under
// access 'ask', a plan-mode question: each answer is checked against the method's response
// schema), a structured call and a call around turns, in a Node process of its own whose
// stdout and stderr must stay empty. Logging is off (RENNET_LOG empty), as it is by default.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { codexUnderTest } from '../../testing/codex-home.js'

const APP = join(__dirname, '..', 'fixtures', 'quiet-app.mjs')

interface TurnResult {
  status: string
  failure: string | null
  asked: string[]
  replies: string[]
}

interface AppResult {
  ask?: TurnResult & { written: boolean }
  plan?: TurnResult
  utility?: unknown
  account?: unknown
  error?: string
}

/** Runs the app to its end: what it reported, and everything it wrote to stdout and stderr. */
async function runApp(): Promise<{ result: AppResult; stdout: string; stderr: string; code: number | null }> {
  const dir = mkdtempSync(join(tmpdir(), 'rennet-quiet-result-'))
  try {
    const resultFile = join(dir, 'result.json')
    const child = spawn(process.execPath, [APP], {
      env: { ...process.env, QUIET_CODEX: codexUnderTest().path, QUIET_RESULT: resultFile, RENNET_LOG: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject)
      child.on('close', resolve)
    })
    return { result: JSON.parse(readFileSync(resultFile, 'utf8')) as AppResult, stdout, stderr, code }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('the package is quiet', { timeout: 180_000 }, () => {
  it("an app answering server requests itself sees nothing of the package on its stdout or stderr", async () => {
    const { result, stdout, stderr, code } = await runApp()
    expect(result.error).toBeUndefined()
    // The turns ran, and the app's answers were the ones sent (each checked against its schema).
    expect(result.ask).toMatchObject({ status: 'completed', asked: ['item/commandExecution/requestApproval'], replies: ['app'], written: true })
    expect(result.plan).toMatchObject({ status: 'completed', asked: ['item/tool/requestUserInput'], replies: ['app'] })
    expect(result.utility).toEqual({ answer: 42 })
    expect(result.account).toMatchObject({ ready: true })
    expect(code).toBe(0)
    expect(stderr).toBe('')
    expect(stdout).toBe('')
  })
})
