// The calls' promise about bad input: they never throw; they reject with a TypeError that names
// what was wrong.
import { expect, it } from 'vitest'

/** A case: its name, the call, and what the TypeError's message is or matches. */
export type BadCall = [what: string, call: () => unknown, message: string | RegExp]

/** One test per case: calling does not throw, and the result rejects with a TypeError saying `message`. */
export function itRejectsWithTypeErrors(cases: BadCall[]): void {
  for (const [what, call, message] of cases) {
    it(what, async () => {
      let result: unknown
      expect(() => (result = call())).not.toThrow()
      await expect(result).rejects.toThrow(TypeError)
      await expect(result).rejects.toThrow(message)
    })
  }
}
