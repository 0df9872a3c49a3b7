// ESM entry of @rennet/codex/testing: the same module instance as `require('@rennet/codex/testing')`,
// its names those Node's CommonJS lexer finds in index.js.
import kit from './index.js'

export * from './index.js'
export default kit
