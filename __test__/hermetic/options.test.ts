// Programming errors that are visible synchronously throw a TypeError naming the option.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runTurn } from '../../index.js'
import type { RunTurnOptions } from '../../index.js'
import { cleanupFakes, collect, fakeCodexPath, tempDir, writeFake } from '../support/fake.js'

afterEach(cleanupFakes)

function expectTypeError(options: unknown, names: RegExp) {
  let thrown: unknown
  try {
    runTurn(options as RunTurnOptions)
  } catch (e) {
    thrown = e
  }
  expect(thrown, 'runTurn should throw synchronously').toBeInstanceOf(TypeError)
  expect((thrown as Error).message).toMatch(names)
}

describe('runTurn option validation', () => {
  it('throws when prompt is missing', () => {
    const dir = tempDir()
    const { codexPath, log } = writeFake('minimal', {}, dir)
    expectTypeError({ cwd: dir, codexPath }, /prompt/)
    expect(log.runs()).toEqual([])
  })

  it('throws when cwd is relative', () => {
    const { codexPath, log } = writeFake()
    expectTypeError({ prompt: 'hi', cwd: 'relative/dir', codexPath }, /cwd/)
    expect(log.runs()).toEqual([])
  })

  it('throws when an option has the wrong type', () => {
    const dir = tempDir()
    expectTypeError({ prompt: 'hi', cwd: dir, codexPath: fakeCodexPath(dir), interruptGraceMs: 'x' }, /interruptGraceMs/)
    expectTypeError({ prompt: 'hi', cwd: dir, codexPath: fakeCodexPath(dir), requestTimeoutMs: 'soon' }, /requestTimeoutMs/)
    expectTypeError({ prompt: 42, cwd: dir, codexPath: fakeCodexPath(dir) }, /prompt/)
  })

  it('throws on an unknown access mode', () => {
    const dir = tempDir()
    expectTypeError({ prompt: 'hi', cwd: dir, codexPath: fakeCodexPath(dir), access: 'everything' }, /access/)
  })

  it('throws without options', () => {
    expect(() => (runTurn as unknown as () => unknown)()).toThrow(TypeError)
  })

  it('throws on a grace or timeout that is not an integer in range (NaN, Infinity and 2^31 included)', () => {
    const dir = tempDir()
    for (const value of [-1, 1.5, 2 ** 31, 3e9, Number.MAX_SAFE_INTEGER, null]) {
      expectTypeError({ prompt: 'hi', cwd: dir, codexPath: fakeCodexPath(dir), interruptGraceMs: value }, /^options\.interruptGraceMs must be an integer number of milliseconds from 0 to 2147483647/)
      expectTypeError({ prompt: 'hi', cwd: dir, codexPath: fakeCodexPath(dir), requestTimeoutMs: value }, /^options\.requestTimeoutMs must be an integer number of milliseconds from 1 to 2147483647/)
    }
    // What JSON cannot carry is refused as it is read, before the core's range.
    for (const value of [NaN, Infinity, -Infinity]) {
      expectTypeError({ prompt: 'hi', cwd: dir, codexPath: fakeCodexPath(dir), interruptGraceMs: value }, /^options\.interruptGraceMs must be a finite number/)
      expectTypeError({ prompt: 'hi', cwd: dir, codexPath: fakeCodexPath(dir), requestTimeoutMs: value }, /^options\.requestTimeoutMs must be a finite number/)
    }
  })

  it('names a string cut through a character plainly, outside the prompt', () => {
    const dir = tempDir()
    const cut = '😀'.slice(0, 1)
    expectTypeError({ prompt: 'hi', cwd: dir, codexPath: fakeCodexPath(dir), env: { A: `x${cut}` } }, /^options\.env\.A: contains an unpaired UTF-16 surrogate/)
  })
})

describe('runTurn inputs that are not programming errors', () => {
  it('sends a prompt cut through a character with U+FFFD in place of the lone half', async () => {
    const dir = tempDir()
    const { codexPath, log } = writeFake('minimal', {}, dir)
    const prompt = `Say ${'😀'.slice(0, 1)}hello${'😀'.slice(1)}`
    const events = await collect(runTurn({ prompt, cwd: dir, codexPath }))
    expect(events.at(-1)).toMatchObject({ type: 'terminal', status: 'completed' })
    expect(log.request('turn/start').params.input[0].text).toBe('Say \uFFFDhello\uFFFD')
  })

  it('ends with CWD_NOT_FOUND saying that a cwd naming a file is not a directory', async () => {
    const dir = tempDir()
    const file = join(dir, 'a-file')
    writeFileSync(file, 'x')
    const events = await collect(runTurn({ prompt: 'hi', cwd: file, codexPath: fakeCodexPath(dir) }))
    expect(events.at(-1)).toMatchObject({
      type: 'terminal',
      status: 'failed',
      failure: { source: 'spawn', code: 'CWD_NOT_FOUND', message: `working directory ${file} is not a directory` },
    })
  })

  it('starts nothing for a signal that is already aborted', async () => {
    const dir = tempDir()
    const { codexPath, log } = writeFake('minimal', {}, dir)
    const events = await collect(runTurn({ prompt: 'hi', cwd: dir, codexPath, signal: AbortSignal.abort() }))
    expect(events).toEqual([expect.objectContaining({ type: 'terminal', status: 'cancelled', cancellation: 'killed' })])
    expect(log.starts()).toEqual([])
  })
})
