// The documents ship, and every link in them leads somewhere inside the package: README.md and
// docs/*.md as an IDE's preview or an offline reader shows them from node_modules, and the
// `docs/…` pages the declaration files name. `pnpm pack:check` checks the same in the installed
// package; this checks what `npm pack` would ship, in every test run.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { anchors, brokenLinks } from '../../scripts/doc-links.mjs'
import { packedFiles } from '../../scripts/npm-pack.mjs'

const root = join(__dirname, '..', '..')

describe('the documentation in the package', { timeout: 60_000 }, () => {
  it('ships docs/, and every relative link of README.md and docs/*.md resolves inside the package', () => {
    const shipped = packedFiles(root)
    expect(shipped).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'docs/calls.md', 'docs/testing-your-app.md']))
    expect(brokenLinks(shipped, (file) => readFileSync(join(root, file), 'utf8'))).toEqual([])
  })

  it('the check finds a missing file, a missing heading and a page a declaration names', () => {
    const files: Record<string, string> = {
      'README.md': '# Title\n\n[ok](docs/a.md#a-heading) [gone](docs/b.md) [no heading](docs/a.md#nope) [out](https://example.com/x.md)\n\n```md\n[in code](docs/c.md)\n```\n',
      'docs/a.md': '# A `heading`\n\n[back](../README.md#title) [self](#a-heading) [repo](../CONTRIBUTING.md)\n',
      'index.d.ts': '/** See docs/a.md and docs/missing.md. */\nexport {}\n',
    }
    expect(brokenLinks(Object.keys(files), (file) => files[file])).toEqual([
      'README.md:3: docs/b.md — docs/b.md is not in the package',
      'README.md:3: docs/a.md#nope — docs/a.md has no heading #nope',
      'docs/a.md:3: ../CONTRIBUTING.md — CONTRIBUTING.md is not in the package',
      'index.d.ts:1: docs/missing.md — docs/missing.md is not in the package',
    ])
    expect([...anchors('# Any other method: `request()`\n## Twice\n## Twice\n')]).toEqual(['any-other-method-request', 'twice', 'twice-1'])
  })
})
