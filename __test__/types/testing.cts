// Compiled, never run (`pnpm test:types`): the CommonJS view of the test kit's types.
import kit = require('@rennet/codex/testing')

export const codexPath: string = kit.writeFakeCodex({ steps: [{ type: 'hang' }], interrupt: 'exit' })
// @ts-expect-error a delay needs its length
kit.writeFakeCodex({ steps: [{ type: 'delay' }] })
export const start: Promise<kit.MockModel> = kit.startMockModel([kit.jsonMessageResponse({ a: 1 })])
