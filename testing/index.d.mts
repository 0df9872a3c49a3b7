// Types of the ESM entry of @rennet/codex/testing (index.mjs): the same API as index.d.ts.
export * from './index.js'
import * as kit from './index.js'
export default kit
