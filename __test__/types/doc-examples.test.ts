// The docs' examples that `pnpm test:types` compiles are the pages' blocks, verbatim: a page
// changed without its copy (or the other way round) fails here.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { docBlock } from '../support/docs.js'

describe('the docs examples compiled by pnpm test:types', () => {
  it("prepared-turns-doc.mts is docs/prepared-turns.md's first block but its import", () => {
    const block = docBlock('docs/prepared-turns.md', 'Prepared turns: the child starts while the user types')
    const copy = readFileSync(join(__dirname, 'prepared-turns-doc.mts'), 'utf8')
    const body = copy.split('  // ---- the page\'s block\n')[1]!.split('  return send\n')[0]
    expect(body).toBe(block.replace("import { prepareTurn } from '@rennet/codex'\n", ''))
  })
})
