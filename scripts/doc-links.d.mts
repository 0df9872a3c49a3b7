// Types for doc-links.mjs.

export function anchors(text: string): Set<string>
export function brokenLinks(shipped: string[], read: (file: string) => string): string[]
