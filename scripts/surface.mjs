#!/usr/bin/env node
// The generated public surface: what the core declares (crates/core/src/surface/) written out as
// the files it names (types/surface.d.ts, lib/surface.js), formatted by prettier.
//
//   pnpm surface:generate           rewrite them
//   pnpm surface:check              exit 1 when a checked-in file differs from the declarations
//
// The declarations are read by running the core's `surface` example (`cargo run`), so a change
// of a doc comment or a field in Rust is a change of these files, and CI fails until they are
// regenerated and committed.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as prettier from 'prettier'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const check = process.argv.includes('--check')

/** How the generated files are laid out (the repository's own style). */
const STYLE = { printWidth: 110, semi: false, singleQuote: true, trailingComma: 'all', proseWrap: 'preserve' }

const raw = execFileSync('cargo', ['run', '--quiet', '-p', 'rennet_codex', '--example', 'surface'], {
  cwd: ROOT,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
  maxBuffer: 64 * 1024 * 1024,
})
const files = JSON.parse(raw)
const problems = []
/** A doc comment of one line on one line (`/** … *\/`), as the hand-written declarations have them. */
const oneLine = (text) => text.replace(/\/\*\*\n[ \t]*\* ([^\n]*)\n[ \t]*\*\//g, (all, line) => (line.includes('*/') ? all : `/** ${line} */`))

for (const [path, text] of Object.entries(files)) {
  const parser = path.endsWith('.ts') ? 'typescript' : 'babel'
  const formatted = await prettier.format(oneLine(text), { ...STYLE, parser })
  const file = join(ROOT, path)
  if (check) {
    if (!existsSync(file)) problems.push(`missing: ${path}`)
    else if (readFileSync(file, 'utf8') !== formatted) problems.push(`differs: ${path}`)
  } else {
    writeFileSync(file, formatted)
    console.log(`surface: wrote ${path}`)
  }
}
if (problems.length > 0) {
  console.error(`The generated surface differs from the core's declarations:\n  ${problems.join('\n  ')}`)
  console.error('Run `pnpm surface:generate` and commit the result.')
  process.exit(1)
}
if (check) console.log(`surface: ${Object.keys(files).length} generated files match the core's declarations`)
