// Types for npm-pack.mjs.

export const npm: string
export const plainEnv: Record<string, string>
export function npmPack(dir: string, destination: string): { tarball: string; files: string[] }
export function packedFiles(dir: string): string[]
