// The package's JavaScript stands where ARCHITECTURE.md puts it: the entry points and the addon's
// loaders at the root, the public API's modules in lib/, the test kit in testing/. This checks
// what `npm pack` would ship, in every test run.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { packedFiles } from '../../scripts/npm-pack.mjs'

const root = join(__dirname, '..', '..')

/** The JavaScript files at the package's root: what `require('@rennet/codex')` starts from. */
const ENTRY_POINTS = ['binding.js', 'index.js', 'index.mjs', 'native.js']

describe('the package layout', { timeout: 60_000 }, () => {
  it('ships its JavaScript in lib/ and testing/, but for the entry points at the root', () => {
    const scripts = packedFiles(root).filter((file: string) => /\.[cm]?js$/.test(file))
    expect(scripts).toEqual(expect.arrayContaining([...ENTRY_POINTS, 'lib/turn.js', 'testing/index.js']))
    const elsewhere = scripts.filter((file: string) => !/^(lib|testing)\//.test(file) && !ENTRY_POINTS.includes(file))
    expect(elsewhere).toEqual([])
  })
})
