// `npm pack` of one package directory, as a user's install would receive it: shared by
// `pnpm pack:check` and the suites that load a packed copy.

import { execFileSync } from 'node:child_process'
import { join } from 'node:path'

export const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

/**
 * The environment of a plain shell: without the npm_* variables a `pnpm run` exports (pnpm's
 * own settings, which npm would misread).
 */
export const plainEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)))

/** Packs `dir` into `destination`; returns the tarball's path and the files it holds. */
export function npmPack(dir, destination) {
  const out = execFileSync(npm, ['pack', '--json', '--pack-destination', destination], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    shell: process.platform === 'win32',
    env: { ...plainEnv, npm_config_update_notifier: 'false', npm_config_fund: 'false' },
  })
  const [result] = JSON.parse(out)
  return { tarball: join(destination, result.filename), files: result.files.map((f) => f.path) }
}

/** The files `npm pack` of `dir` would ship (paths from the package's root), without packing it. */
export function packedFiles(dir) {
  const out = execFileSync(npm, ['pack', '--dry-run', '--json'], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    shell: process.platform === 'win32',
    env: { ...plainEnv, npm_config_update_notifier: 'false', npm_config_fund: 'false' },
  })
  return JSON.parse(out)[0].files.map((f) => f.path)
}
