// The documentation's code blocks, for the tests that run them: each found by the heading it
// sits under (and, where a section holds several, by a line it contains), so that a block that
// moves to another page or section fails its test by name instead of being checked nowhere.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const root = join(__dirname, '..', '..')

interface Block {
  /** The headings it sits under, outermost first (`['Testing your app', 'Without Codex: …']`). */
  headings: string[]
  lang: string
  /** Its lines, each with its newline, without the fences. */
  text: string
}

/** The fenced blocks of `file` (a path from the repository root), with the headings above each. */
function blocks(file: string): Block[] {
  const found: Block[] = []
  const headings: string[] = []
  let open: { lang: string; lines: string[]; fence: string } | null = null
  for (const line of readFileSync(join(root, file), 'utf8').split('\n')) {
    if (open !== null) {
      if (line.trimEnd() === open.fence) {
        found.push({ headings: [...headings], lang: open.lang, text: open.lines.map((l) => `${l}\n`).join('') })
        open = null
      } else {
        open.lines.push(line)
      }
      continue
    }
    const fence = /^(`{3,})(\S*)/.exec(line)
    if (fence) {
      open = { lang: fence[2], lines: [], fence: fence[1] }
      continue
    }
    const heading = /^(#{1,6}) (.+)$/.exec(line)
    if (heading) {
      headings.length = heading[1].length - 1
      headings[heading[1].length - 1] = heading[2].trim()
    }
  }
  return found
}

/**
 * The text of the fenced block (` ```ts ` unless `lang` says otherwise) under the heading
 * `heading` in `file` — directly under it, not under a sub-heading — and, with `containing`,
 * the first such block that contains that text. Throws naming the file and the heading when
 * there is none.
 */
export function docBlock(file: string, heading: string, options: { containing?: string; lang?: string } = {}): string {
  const { containing, lang = 'ts' } = options
  const block = blocks(file).find(
    (b) => b.headings.at(-1) === heading && b.lang === lang && (containing === undefined || b.text.includes(containing)),
  )
  if (block === undefined) {
    const which = containing === undefined ? '' : ` containing ${JSON.stringify(containing)}`
    throw new Error(`${file} has no \`\`\`${lang} block${which} under the heading "${heading}"`)
  }
  return block.text
}

/**
 * The text under the heading `heading` of `file` (from the repository root), up to the next
 * heading of the same or a higher level. Throws naming the file and the heading when there is none.
 */
export function docSection(file: string, heading: string): string {
  const lines = readFileSync(join(root, file), 'utf8').split('\n')
  const start = lines.findIndex((line) => /^#{1,6} /.test(line) && line.replace(/^#+ /, '').trim() === heading)
  if (start < 0) throw new Error(`${file} has no heading "${heading}"`)
  const level = /^#+/.exec(lines[start])![0].length
  const end = lines.findIndex((line, i) => i > start && new RegExp(`^#{1,${level}} `).test(line))
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n')
}
