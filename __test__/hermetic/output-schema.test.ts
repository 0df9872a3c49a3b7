// outputSchema: JSON Schema drafts by `$schema`, Standard Schemas (zod, valibot, arktype) with
// their own validation, and the strict-mode check that turns a schema the model would refuse
// into a TypeError before anything is spawned. The turns run against the test kit's fake,
// whose `minimal` scenario answers the text it is given.
import { toStandardJsonSchema } from '@valibot/to-json-schema'
import { type } from 'arktype'
import * as v from 'valibot'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { runTurn, runUtility, UtilityError } from '../../index.js'
import type { UtilityOptions, UtilityResult } from '../../index.js'
import { cleanupFakes, fakeRun, scenarios, tempDir, writeFake } from '../support/fake.js'
import { BOUND_MS, eventually, leftByFake } from '../support/procs.js'

afterEach(cleanupFakes)

const closed = (properties: Record<string, unknown>) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
})

/** runUtility against the fake answering `text`; the fake's log shows what it was sent. */
async function utility<T>(outputSchema: UtilityOptions<T>['outputSchema'], text: string) {
  const dir = tempDir()
  const { codexPath, log } = writeFake(scenarios.minimal(text), {}, dir)
  const settled = await runUtility<T>({
    prompt: 'x',
    cwd: dir,
    codexPath,
    outputSchema,
  }).then(
    (result: UtilityResult<T>) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error: error as UtilityError }),
  )
  for (const start of log.starts()) expect(await eventually(() => leftByFake(start.pid).length === 0, BOUND_MS)).toBe(true)
  return { ...settled, log, sent: () => log.request('turn/start')?.params.outputSchema }
}

/** The TypeError runUtility rejects with for `schema`, after checking that nothing was spawned. */
async function refused(schema: object): Promise<TypeError> {
  const dir = tempDir()
  const { codexPath, log } = writeFake('minimal', {}, dir)
  const error = await runUtility({ prompt: 'x', cwd: dir, codexPath, outputSchema: schema }).catch((e: unknown) => e)
  expect(error).toBeInstanceOf(TypeError)
  expect(log.runs(), 'the fake was started').toEqual([])
  // runTurn refuses the same schema, synchronously.
  expect(() => runTurn({ prompt: 'x', cwd: dir, codexPath, outputSchema: schema })).toThrow(TypeError)
  return error as TypeError
}

describe('JSON Schema drafts', () => {
  it("accepts zod 4's z.toJSONSchema() output (2020-12 $schema)", async () => {
    const schema = z.toJSONSchema(z.strictObject({ language: z.string() }))
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
    const { result, sent } = await utility(schema, '{"language":"Rust"}')
    expect(result?.output).toEqual({ language: 'Rust' })
    expect(sent()).toEqual(schema)
  })

  // Before, only draft-07 compiled ("no schema with key or ref …2020-12/schema").
  it('compiles and validates each draft its $schema names, and 2020-12 without one', async () => {
    const drafts = [
      'http://json-schema.org/draft-07/schema#',
      'http://json-schema.org/draft-07/schema',
      'https://json-schema.org/draft/2019-09/schema',
      'https://json-schema.org/draft/2020-12/schema',
      undefined,
    ]
    for (const draft of drafts) {
      const schema = {
        ...(draft ? { $schema: draft } : {}),
        type: 'object',
        properties: { n: { $ref: '#/$defs/count' } },
        required: ['n'],
        additionalProperties: false,
        $defs: { count: { type: 'integer', maximum: 3 } },
      }
      const good = await utility(schema, '{"n":2}')
      expect(good.result?.output, String(draft)).toEqual({ n: 2 })
      expect(good.sent()).toEqual(schema)
      const bad = await utility(schema, '{"n":5}')
      expect(bad.error?.code, String(draft)).toBe('STRUCTURED_OUTPUT_MISMATCH')
      expect(bad.error?.message).toBe('the final message does not match outputSchema: data/n must be <= 3')
    }
  })

  it('a JSON Schema changed between calls is the one the next call sends and checks (never served stale)', async () => {
    const schema = closed({ n: { type: 'integer', maximum: 3 } })
    expect((await utility(schema, '{"n":5}')).error?.code).toBe('STRUCTURED_OUTPUT_MISMATCH')
    ;(schema.properties.n as { maximum: number }).maximum = 10
    const again = await utility(schema, '{"n":5}')
    expect(again.result?.output).toEqual({ n: 5 })
    expect(again.sent().properties.n.maximum).toBe(10)
  })

  it('validates formats (ajv-formats) and reports every error', async () => {
    const schema = closed({ email: { type: 'string', format: 'email' }, day: { type: 'string', format: 'date' } })
    const { error } = await utility(schema, '{"email":"nobody","day":"yesterday"}')
    expect(error?.code).toBe('STRUCTURED_OUTPUT_MISMATCH')
    const errors = (error?.detail as { errors: Array<{ instancePath: string }> }).errors
    expect(errors.map((e) => e.instancePath).sort()).toEqual(['/day', '/email'])
    expect((error?.detail as { text: string }).text).toBe('{"email":"nobody","day":"yesterday"}')
  })

  it('refuses a draft it does not know, naming $schema', async () => {
    const error = await refused({ ...closed({ a: { type: 'string' } }), $schema: 'http://json-schema.org/draft-04/schema#' })
    expect(error.message).toMatch(/^options\.outputSchema\.\$schema "http:\/\/json-schema\.org\/draft-04\/schema#" is not a JSON Schema draft/)
  })

  it('refuses a schema that is not valid JSON Schema', async () => {
    const error = await refused(closed({ a: { type: 'string', pattern: '(' } }))
    expect(error.message).toMatch(/^options\.outputSchema is not a valid JSON Schema \(2020-12\)/)
  })
})

describe('the strict-mode check', () => {
  const cases: Array<[string, object, RegExp]> = [
    ['an open nested object', closed({ tags: { type: 'array', items: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] } } }), /^options\.outputSchema\.properties\.tags\.items must set additionalProperties: false/],
    ['an optional property', { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['a'], additionalProperties: false }, /^options\.outputSchema\.properties\.b is optional/],
    ['a required property that is not declared', { type: 'object', properties: {}, required: ['ghost'], additionalProperties: false }, /^options\.outputSchema\.required names "ghost"/],
    ['minLength', closed({ name: { type: 'string', minLength: 1 } }), /^options\.outputSchema\.properties\.name\.minLength: strict structured output does not accept the keyword "minLength"/],
    ['uniqueItems', closed({ ids: { type: 'array', items: { type: 'string' }, uniqueItems: true } }), /^options\.outputSchema\.properties\.ids\.uniqueItems:/],
    ['oneOf', closed({ v: { oneOf: [{ type: 'string' }, { type: 'number' }] } }), /^options\.outputSchema\.properties\.v\.oneOf: .*use anyOf/],
    ['allOf', closed({ v: { allOf: [{ type: 'string' }] } }), /^options\.outputSchema\.properties\.v\.allOf:/],
    ['a format outside the accepted list', closed({ url: { type: 'string', format: 'uri' } }), /^options\.outputSchema\.properties\.url\.format: "uri" is not a format/],
    ['a root that is not an object', { type: 'array', items: { type: 'string' } }, /^options\.outputSchema must describe an object/],
    ['a union at the root', { type: 'object', anyOf: [closed({ a: { type: 'string' } })] }, /^options\.outputSchema\.anyOf: the root of a strict output schema cannot be a union/],
    ['a schema that allows anything', closed({ any: {} }), /^options\.outputSchema\.properties\.any must say what it holds/],
    ['a boolean schema', closed({ yes: true }), /^options\.outputSchema\.properties\.yes must be a schema object/],
    ['tuple items', closed({ pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } }), /^options\.outputSchema\.properties\.pair\.items must be one schema/],
    ['a nested $id', closed({ a: { $id: 'x', type: 'string' } }), /^options\.outputSchema\.properties\.a\.\$id is only accepted at the root/],
    ['a property name that is not an identifier', closed({ 'odd key': { type: 'object', properties: {} } }), /^options\.outputSchema\.properties\["odd key"\] must set additionalProperties: false/],
    ['an open object inside $defs', { ...closed({ a: { $ref: '#/$defs/item' } }), $defs: { item: { type: 'object', properties: {} } } }, /^options\.outputSchema\.\$defs\.item must set additionalProperties: false/],
    ['an object in an anyOf branch', closed({ a: { anyOf: [{ type: 'null' }, { type: 'object', properties: { b: { type: 'string' } } }] } }), /^options\.outputSchema\.properties\.a\.anyOf\[1\] must set additionalProperties: false/],
  ]

  for (const [what, schema, message] of cases) {
    it(`refuses ${what} before anything starts`, async () => {
      expect((await refused(schema)).message).toMatch(message)
    })
  }

  it('refuses values that are not schemas', async () => {
    for (const schema of [null, 'x', 42, [closed({})]]) {
      await expect(runUtility({ prompt: 'x', cwd: '/tmp', outputSchema: schema as never })).rejects.toThrow(
        /^options\.outputSchema must be a JSON Schema object or a Standard Schema/,
      )
    }
    await expect(runUtility({ prompt: 'x', cwd: '/tmp' } as never)).rejects.toThrow(/^options\.outputSchema is required/)
  })

  it('accepts nullable fields, enums, const, anyOf, $defs with $ref, annotations and number and array bounds', async () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: 'Review',
      type: 'object',
      properties: {
        verdict: { type: 'string', enum: ['approve', 'reject'], description: 'what to do' },
        kind: { const: 'review' },
        score: { type: 'integer', minimum: 0, maximum: 10 },
        note: { type: ['string', 'null'] },
        files: { type: 'array', items: { $ref: '#/$defs/file' }, minItems: 0, maxItems: 5 },
        when: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] },
      },
      required: ['verdict', 'kind', 'score', 'note', 'files', 'when'],
      additionalProperties: false,
      $defs: { file: closed({ path: { type: 'string', pattern: '^[^/]' } }) },
    }
    const text = '{"verdict":"approve","kind":"review","score":7,"note":null,"files":[{"path":"a.rs"}],"when":null}'
    const { result, sent } = await utility(schema, text)
    expect(result?.output).toEqual(JSON.parse(text))
    expect(sent()).toEqual(schema)
  })
})

describe('Standard Schemas', () => {
  const Review = z.object({
    summary: z.string().min(3),
    score: z.number().int().min(0).max(10),
    tags: z.array(z.string()),
    when: z.string().transform((s) => new Date(s)),
    owner: z.object({ name: z.string() }).nullable(),
  })

  it('zod: sends its JSON Schema closed, validates with zod and resolves to the transformed output', async () => {
    const text = '{"summary":"fine","score":7,"tags":["a"],"when":"2030-01-02T03:04:05Z","owner":{"name":"Ana"}}'
    const { result, sent } = await utility(Review, text)
    expect(result?.output.when).toBeInstanceOf(Date)
    expect(result?.output.when.toISOString()).toBe('2030-01-02T03:04:05.000Z')
    expect(result?.output.owner).toEqual({ name: 'Ana' })
    expect(result?.text).toBe(text)
    const wire = sent()
    expect(wire.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
    expect(wire.additionalProperties).toBe(false)
    expect(wire.properties.owner.anyOf[0].additionalProperties).toBe(false)
    // minLength is refused by strict mode: left out for the model, checked by zod.
    expect(wire.properties.summary).toEqual({ type: 'string' })
    expect(wire.required).toEqual(['summary', 'score', 'tags', 'when', 'owner'])
  })

  it('zod: a reply that breaks a refinement is STRUCTURED_OUTPUT_MISMATCH with the issues', async () => {
    const { error } = await utility(Review, '{"summary":"no","score":11,"tags":[],"when":"x","owner":null}')
    expect(error).toBeInstanceOf(UtilityError)
    expect(error?.code).toBe('STRUCTURED_OUTPUT_MISMATCH')
    expect(error?.message).toMatch(/summary: .*score: /)
    const issues = (error?.detail as { issues: Array<{ path: unknown[] }> }).issues
    expect(issues.map((i) => i.path[0])).toEqual(['summary', 'score'])
  })

  it('zod: .optional(), loose objects and records are TypeErrors naming the path', async () => {
    expect((await refused(z.object({ a: z.string(), b: z.string().optional() }))).message).toMatch(
      /^options\.outputSchema \(as JSON Schema from zod\)\.properties\.b is optional.*\.nullable\(\) rather than \.optional\(\)/,
    )
    expect((await refused(z.object({ inner: z.looseObject({ a: z.string() }) }))).message).toMatch(
      /^options\.outputSchema \(as JSON Schema from zod\)\.properties\.inner must set additionalProperties: false/,
    )
    expect((await refused(z.object({ counts: z.record(z.string(), z.number()) }))).message).toMatch(/\.properties\.counts must set additionalProperties: false/)
    expect((await refused(z.object({ at: z.date() }))).message).toMatch(/^options\.outputSchema \(zod\) cannot be written as JSON Schema: /)
  })

  it('zod: a discriminated union (oneOf) is sent as anyOf', async () => {
    const Shape = z.object({
      shape: z.discriminatedUnion('kind', [z.object({ kind: z.literal('circle'), r: z.number() }), z.object({ kind: z.literal('square'), side: z.number() })]),
    })
    const { result, sent } = await utility(Shape, '{"shape":{"kind":"square","side":2}}')
    expect(result?.output).toEqual({ shape: { kind: 'square', side: 2 } })
    expect(sent().properties.shape.oneOf).toBeUndefined()
    expect(sent().properties.shape.anyOf).toHaveLength(2)
  })

  it('zod: a schema without ~standard.jsonSchema is written through its own toJSONSchema()', async () => {
    const schema = z.object({ n: z.number() })
    const { jsonSchema: _jsonSchema, ...props } = schema['~standard']
    const older = { '~standard': props, toJSONSchema: (params: object) => z.toJSONSchema(schema, params) }
    const { result, sent } = await utility(older, '{"n":1}')
    expect(result?.output).toEqual({ n: 1 })
    expect(sent()).toMatchObject({ type: 'object', required: ['n'], additionalProperties: false })
  })

  it('valibot: through toStandardJsonSchema; a bare valibot schema is a TypeError that says what to do', async () => {
    const Person = v.object({ name: v.pipe(v.string(), v.minLength(2)), age: v.nullable(v.number()) })
    const { result, sent } = await utility(toStandardJsonSchema(Person), '{"name":"Ana","age":null}')
    expect(result?.output).toEqual({ name: 'Ana', age: null })
    expect(sent()).toMatchObject({ additionalProperties: false, required: ['name', 'age'] })
    const short = await utility(toStandardJsonSchema(Person), '{"name":"A","age":3}')
    expect(short.error?.code).toBe('STRUCTURED_OUTPUT_MISMATCH')
    expect((await refused(Person)).message).toMatch(/^options\.outputSchema is a Standard Schema of valibot that offers no JSON Schema.*toStandardJsonSchema\(\) from @valibot\/to-json-schema/)
  })

  it('arktype: a Type (a function) works, morphs applied', async () => {
    const Row = type({ id: 'string.numeric.parse', label: 'string' })
    const { result, sent } = await utility(Row, '{"id":"42","label":"x"}')
    expect(result?.output).toEqual({ id: 42, label: 'x' })
    expect(sent()).toMatchObject({ type: 'object', additionalProperties: false })
  })

  it('runTurn sends the converted schema too; structuredOutput is the parsed reply', async () => {
    const { terminal, log } = await fakeRun(scenarios.minimal('{"a":"b"}'), { outputSchema: z.object({ a: z.string() }) })
    expect(log.request('turn/start').params.outputSchema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
      additionalProperties: false,
    })
    expect(terminal.structuredOutput).toEqual({ a: 'b' })
  })
})
