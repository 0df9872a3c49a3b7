// The documents a user reads inside the installed package — README.md and docs/*.md, in an
// IDE's preview or offline — and the `docs/…` pages the shipped declaration files name: every
// relative link must lead to a file the package ships, and an anchor to a heading of that
// file. Links with a scheme (https:, mailto:) are not followed. Shared by `pnpm pack:check`
// (the installed package) and the packaging suite (what `npm pack` would ship).

import { posix } from 'node:path'

/** The Markdown a user reads in the package, of the files it ships. */
const isDocument = (file) => file === 'README.md' || /^docs\/[^/]+\.md$/.test(file)
/** The declaration files whose comments name pages of docs/. */
const isDeclaration = (file) => file.endsWith('.d.ts') || file.endsWith('.d.mts')

/** `text` without fenced code blocks and inline code, whose brackets are no links. */
function prose(text) {
  const lines = []
  let fence = null
  for (const line of text.split('\n')) {
    const opens = /^\s*(`{3,}|~{3,})/.exec(line)
    if (fence !== null) {
      if (opens && opens[1][0] === fence[0] && opens[1].length >= fence.length) fence = null
      lines.push('')
    } else if (opens) {
      fence = opens[1]
      lines.push('')
    } else {
      lines.push(line.replace(/`+[^`]*`+/g, ''))
    }
  }
  return lines.join('\n')
}

/** The anchors of a Markdown file's headings, as GitHub makes them (a repeated one gets -1, -2, …). */
export function anchors(text) {
  const seen = new Map()
  const found = new Set()
  let fence = null
  for (const line of text.split('\n')) {
    const opens = /^\s*(`{3,}|~{3,})/.exec(line)
    if (fence !== null) {
      if (opens && opens[1][0] === fence[0] && opens[1].length >= fence.length) fence = null
      continue
    }
    if (opens) {
      fence = opens[1]
      continue
    }
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line)
    if (!heading) continue
    const words = heading[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    const slug = words
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    found.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return found
}

/** The link targets of a Markdown text's prose, each with its line. */
function links(text) {
  const found = []
  const body = prose(text)
  for (const match of body.matchAll(/!?\[(?:[^\]]|\n)*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    found.push({ target: match[1], line: body.slice(0, match.index).split('\n').length })
  }
  return found
}

/**
 * What is broken, as `file:line: why` lines: `shipped` lists the package's files (paths from
 * its root, `/`-separated), `read(file)` gives one's text.
 */
export function brokenLinks(shipped, read) {
  const files = new Set(shipped)
  const anchorsOf = new Map()
  const headings = (file) => {
    if (!anchorsOf.has(file)) anchorsOf.set(file, anchors(read(file)))
    return anchorsOf.get(file)
  }
  const broken = []
  // `relative`: the target is relative to `from`'s directory (a Markdown link), else to the
  // package's root (a page a comment names).
  const check = (from, line, target, relative = true) => {
    const [path, anchor] = target.split('#', 2)
    const base = relative ? posix.dirname(from) : '.'
    const file = path === '' ? from : posix.normalize(posix.join(base, decodeURI(path)))
    if (!files.has(file)) {
      broken.push(`${from}:${line}: ${target} — ${file} is not in the package`)
    } else if (anchor !== undefined && file.endsWith('.md') && !headings(file).has(decodeURIComponent(anchor))) {
      broken.push(`${from}:${line}: ${target} — ${file} has no heading #${anchor}`)
    }
  }
  for (const file of [...files].sort()) {
    if (isDocument(file)) {
      for (const { target, line } of links(read(file))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
        check(file, line, target)
      }
    } else if (isDeclaration(file)) {
      read(file)
        .split('\n')
        .forEach((text, i) => {
          for (const match of text.matchAll(/\bdocs\/[\w.-]+\.md(?:#[\w-]+)?/g)) check(file, i + 1, match[0], false)
        })
    }
  }
  return broken
}
