// Every public field has a doc comment: each property of an exported interface, class or type of
// the public declarations (index.d.ts and the generated files it re-exports), inline type literals
// and union members included, carries JSDoc. The Rust doc comment of a generated field is its
// JSDoc, so a field declared in the core without one fails here too. A discriminant (a property
// whose type is one string literal, `type: 'text'`) is the name of its member, not a field to
// describe.
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = join(__dirname, '..', '..')

/** The public declaration files whose fields are checked. */
const FILES = ['index.d.ts', 'types/surface.d.ts', 'types/calls.d.ts']

/** `file:line name` of every property signature (or class property) in `text` without JSDoc. */
export function undocumented(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true)
  const missing: string[] = []
  const exported = (node: ts.Node) =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
  const documented = (node: ts.Node) => ts.getJSDocCommentsAndTags(node).length > 0
  const discriminant = (node: ts.PropertySignature | ts.PropertyDeclaration) =>
    node.type !== undefined && ts.isLiteralTypeNode(node.type) && ts.isStringLiteral(node.type.literal)
  const visit = (node: ts.Node, owner: string) => {
    if (ts.isPropertySignature(node) || ts.isPropertyDeclaration(node)) {
      // A field a parent type already documents (`Omit<…> & { … }` members are fields too).
      if (!documented(node) && !discriminant(node)) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source))
        missing.push(`${fileName}:${line + 1} ${owner}.${node.name.getText(source)}`)
      }
    }
    // Function parameters are not fields; their types are declared where they are named.
    if (ts.isFunctionTypeNode(node) || ts.isMethodSignature(node) || ts.isMethodDeclaration(node)) return
    ts.forEachChild(node, (child) => visit(child, owner))
  }
  for (const statement of source.statements) {
    if (!exported(statement)) continue
    if (ts.isInterfaceDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) {
      visit(statement, statement.name?.getText(source) ?? '(anonymous)')
    }
  }
  return missing
}

describe('every public field has a doc comment', () => {
  for (const file of FILES) {
    it(file, () => {
      const text = ts.sys.readFile(join(root, file))
      expect(text, `${file} is not there`).toBeDefined()
      expect(undocumented(file, text!)).toEqual([])
    })
  }

  it('the check sees fields of interfaces, classes, type literals and union members, and no parameters', () => {
    const text = [
      'export interface A {',
      '  /** yes */',
      '  a: string',
      '  b: number',
      '}',
      'export class C {',
      '  readonly c: string',
      '  /** yes */',
      '  d?: number',
      '}',
      'export type T =',
      '  | {',
      '      /** yes */',
      '      e: string',
      '    }',
      "  | { kind: 'f'; f: number; flag?: true }",
      '  | (X & { g: { h: string } })',
      'export function fn(options: { notAField: string }): { r: string }',
      'export type F = (options: { notAField: string }) => void',
      'interface Private { z: string }',
    ].join('\n')
    expect(undocumented('x.d.ts', text)).toEqual(['x.d.ts:4 A.b', 'x.d.ts:7 C.c', 'x.d.ts:16 T.f', 'x.d.ts:16 T.flag', 'x.d.ts:17 T.g', 'x.d.ts:17 T.h'])
  })
})
