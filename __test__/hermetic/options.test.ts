// Programming errors that are visible synchronously throw a TypeError naming the option.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runTurn } from '../../index.js'
import type { RunTurnOptions } from '../../index.js'
import { FAKE, cleanupFakes, tempDir } from '../support/fake.js'

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
    const log = join(dir, 'fake.log')
    expectTypeError({ cwd: dir, codexPath: FAKE, env: { FAKE_LOG: log } }, /prompt/)
    expect(existsSync(log)).toBe(false)
  })

  it('throws when cwd is relative', () => {
    const dir = tempDir()
    const log = join(dir, 'fake.log')
    expectTypeError({ prompt: 'hi', cwd: 'relative/dir', codexPath: FAKE, env: { FAKE_LOG: log } }, /cwd/)
    expect(existsSync(log)).toBe(false)
  })

  it('throws when an option has the wrong type', () => {
    const dir = tempDir()
    expectTypeError({ prompt: 'hi', cwd: dir, codexPath: FAKE, interruptGraceMs: 'x' }, /interruptGraceMs/)
    expectTypeError({ prompt: 'hi', cwd: dir, codexPath: FAKE, requestTimeoutMs: 'soon' }, /requestTimeoutMs/)
    expectTypeError({ prompt: 42, cwd: dir, codexPath: FAKE }, /prompt/)
  })

  it('throws on an unknown access mode', () => {
    const dir = tempDir()
    expectTypeError({ prompt: 'hi', cwd: dir, codexPath: FAKE, access: 'everything' }, /access/)
  })

  it('throws without options', () => {
    expect(() => (runTurn as unknown as () => unknown)()).toThrow(TypeError)
  })
})
