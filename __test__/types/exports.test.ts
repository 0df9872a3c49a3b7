// What the types declare is what the modules export: for each entry point of the package (the
// package and its test kit, from CommonJS and from ESM) and for each module of the kit that
// ships its own declarations, the values its declaration file exports (read by the TypeScript
// compiler, re-exports followed) are exactly the names the module exports at run time. A name
// declared and not exported compiles in an app and is `undefined` when it runs; a name exported
// and not declared is a part of the API nobody documented.
import { createRequire } from 'node:module'
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = join(__dirname, '..', '..')
const require = createRequire(__filename)

const FILES = ['index.d.ts', 'index.d.mts', 'testing/index.d.ts', 'testing/index.d.mts', 'testing/mock-responses.d.ts', 'testing/codex-home.d.ts']

/** One program for every declaration file the tests read (building one takes seconds). */
let program: ts.Program | undefined
const programOf = () =>
  (program ??= ts.createProgram(
    FILES.map((file) => join(root, file)),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      types: ['node'],
    },
  ))

/** The values (not types) the declaration file `file` exports, with their JSDoc tags. */
function declarations(file: string): Array<{ name: string; tags: string[] }> {
  const path = join(root, file)
  const program = programOf()
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(path)
  if (source === undefined) throw new Error(`${file} was not read`)
  const module = checker.getSymbolAtLocation(source)
  if (module === undefined) throw new Error(`${file} is not a module`)
  return checker
    .getExportsOfModule(module)
    .filter((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
      return (target.flags & ts.SymbolFlags.Value) !== 0
    })
    .map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
      return { name: symbol.name, tags: target.getJsDocTags(checker).map((tag) => tag.name) }
    })
}

/** The names of the values (not types) the declaration file `file` exports. */
const declaredValues = (file: string) => declarations(file).map((d) => d.name).sort()

const sorted = (names: string[]) => [...names].sort()

describe('declared exports are the runtime exports', () => {
  const commonJs: Array<[declaration: string, module: string]> = [
    ['index.d.ts', 'index.js'],
    ['testing/index.d.ts', 'testing/index.js'],
    ['testing/mock-responses.d.ts', 'testing/mock-responses.js'],
    ['testing/codex-home.d.ts', 'testing/codex-home.js'],
  ]
  for (const [declaration, module] of commonJs) {
    it(`${declaration} declares what require('${module}') exports`, () => {
      expect(declaredValues(declaration)).toEqual(sorted(Object.keys(require(join(root, module)))))
    })
  }

  const esm: Array<[declaration: string, module: string]> = [
    ['index.d.mts', 'index.mjs'],
    ['testing/index.d.mts', 'testing/index.mjs'],
  ]
  for (const [declaration, module] of esm) {
    it(`${declaration} declares what import('${module}') exports`, async () => {
      const loaded = (await import(join(root, module))) as Record<string, unknown>
      expect(declaredValues(declaration)).toEqual(sorted(Object.keys(loaded)))
    })
  }

  // The kit's modules ship their own declarations (the entry point re-exports from them): what
  // they declare beyond the entry point is the kit's own inside, and says so.
  for (const declaration of ['testing/mock-responses.d.ts', 'testing/codex-home.d.ts']) {
    it(`${declaration} declares nothing an app cannot import from @rennet/codex/testing, but what is marked @internal`, () => {
      const kit = Object.keys(require(join(root, 'testing/index.js')))
      const unreachable = declarations(declaration).filter((d) => !kit.includes(d.name) && !d.tags.includes('internal'))
      expect(unreachable.map((d) => d.name)).toEqual([])
    })
  }
})
