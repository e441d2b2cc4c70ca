/**
 * Rules that relate two fields are in the OpenAPI document, where a reader and a tool can see them. A
 * route whose query schema relates its parameters has them as one object parameter (`form`, exploded,
 * so the wire is the same query) whose schema keeps the rules; every other route keeps one parameter per
 * property. A body's rule between two fields is a JSON Schema keyword of the body.
 */
import { servedOpenApi, type Schema } from '../helpers/openapi-doc';

type Parameter = { in: string; name: string; style?: string; explode?: boolean; schema: Schema };

let doc: Schema;
beforeAll(async () => {
  doc = await servedOpenApi();
});

const parametersOf = (path: string, method = 'get'): Parameter[] =>
  ((doc.paths as Record<string, Record<string, { parameters?: Parameter[] }>>)[path]![method]!.parameters ??
    []) as Parameter[];

test('listing events: session_id or subscription_id, and one cursor at most, stated in the schema', () => {
  const query = parametersOf('/v1/events').filter((p) => p.in === 'query');
  expect(query).toHaveLength(1);
  expect(query[0]).toMatchObject({ name: 'query', style: 'form', explode: true });
  const schema = query[0]!.schema;
  expect(Object.keys(schema.properties as Schema)).toEqual(
    expect.arrayContaining(['session_id', 'subscription_id', 'after', 'starting_after', 'ending_before']),
  );
  expect(schema.allOf).toEqual(
    expect.arrayContaining([
      { not: { required: ['session_id', 'subscription_id'] } },
      { not: { required: ['after', 'starting_after'] } },
      { not: { required: ['after', 'ending_before'] } },
      { not: { required: ['starting_after', 'ending_before'] } },
    ]),
  );
});

test('a query without such rules keeps one parameter per property', () => {
  const names = parametersOf('/v1/sessions')
    .filter((p) => p.in === 'query')
    .map((p) => p.name);
  expect(names).toEqual(expect.arrayContaining(['created_from', 'created_to', 'amount_min', 'amount_max']));
});

test('every body with a subPartner says what extraInfo beside it must be', () => {
  const bodies = (doc.components as { schemas: Record<string, Schema> }).schemas;
  const withSubPartner = Object.entries(bodies).filter(
    ([, body]) => body.properties && 'subPartner' in (body.properties as Schema),
  );
  expect(withSubPartner.map(([name]) => name)).toEqual(expect.arrayContaining(['CardCheckoutRequest']));
  for (const [name, body] of withSubPartner)
    expect([name, (body.dependentSchemas as Schema | undefined)?.subPartner]).toEqual([
      name,
      {
        properties: {
          extraInfo: {
            type: 'object',
            not: { anyOf: [{ required: ['merchant'] }, { required: ['submerchant'] }] },
          },
        },
      },
    ]);
});

test('every object of a JSON request body refuses a __proto__ key in its propertyNames', () => {
  const noProto = { not: { const: '__proto__' } };
  const schemas = (doc.components as { schemas: Record<string, Schema> }).schemas;
  const checkout = schemas.CardCheckoutRequest!;
  expect(checkout.propertyNames).toEqual(noProto);
  const props = checkout.properties as Record<string, Schema>;
  // typed objects, and free-form values (any JSON) alike
  expect((props.customer as Schema).propertyNames).toEqual(noProto);
  expect((props.extraInfo as Schema).propertyNames).toEqual(noProto);
  const body = schemas.CodecPayloads!;
  const payload = ((body.properties as Record<string, Schema>).payloads as Schema).items as Schema;
  expect(((payload.properties as Record<string, Schema>).metadata as Schema).propertyNames).toEqual(noProto);
});
