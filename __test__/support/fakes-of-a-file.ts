// The test kit's fakes of one test file, and the promise each test makes about them: whatever
// a test started from its fakes is gone once it ends (a failing test's too).
import { afterAll, afterEach, expect } from 'vitest'
import { fakeCodexRuns, removeFakeCodexes, writeFakeCodex } from '../../testing/index.js'
import type { FakeCodexScript } from '../../testing/index.js'
import { BOUND_MS, eventually, killIfAlive, leftByFake } from './procs.js'

/**
 * Registers, for the calling file, a check after each test that whatever its fakes started is
 * gone within `BOUND_MS` (`leftByFake`: a fake's process group; on Windows the fake itself), naming
 * what outlived it and killing it so that the next test starts clean, and the fakes' removal
 * after the file. Returns the writer of a fake.
 */
export function fakesOfThisFile(what = 'their call'): (script: FakeCodexScript, options?: Parameters<typeof writeFakeCodex>[1]) => string {
  const fakes: string[] = []
  afterEach(async () => {
    const left: string[] = []
    const runs = fakes.splice(0).flatMap((codexPath) => fakeCodexRuns(codexPath))
    // One bound for all of them, so that a leak is named before the hook's own timeout.
    await eventually(() => runs.every((run) => leftByFake(run.pid).length === 0), BOUND_MS)
    for (const run of runs) {
      const survivors = leftByFake(run.pid)
      if (survivors.length === 0) continue
      left.push(`${run.pid} ${run.argv.join(' ')}`)
      for (const pid of survivors) killIfAlive(pid)
    }
    expect(left, `processes outlived ${what}`).toEqual([])
  })
  afterAll(() => removeFakeCodexes())
  return (script, options) => {
    const path = writeFakeCodex(script, options)
    fakes.push(path)
    return path
  }
}
