// Types of the ESM entry (index.mjs): the same API as index.d.ts.
export * from './index.js'
import * as api from './index.js'
export default api
