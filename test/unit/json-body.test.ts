/**
 * The JSON body parser refuses a `__proto__` key at any depth and names where it is: the walk that
 * finds it, on bodies as JSON.parse makes them (the key an own property).
 */
import { protoKeyField } from '../../api/plugins/json-body';

describe('protoKeyField', () => {
  it('names a __proto__ key by its field path, at the top, in objects and in arrays', () => {
    expect(protoKeyField(JSON.parse('{"__proto__":{"x":1},"amount":1}'))).toBe('__proto__');
    expect(
      protoKeyField(JSON.parse('{"payloads":[{"data":""},{"metadata":{"e":"QQ==","__proto__":"!"}}]}')),
    ).toBe('payloads.1.metadata.__proto__');
    expect(protoKeyField(JSON.parse('[[{"a":{"__proto__":null}}]]'))).toBe('0.0.a.__proto__');
  });

  it('finds nothing in a body without one (an inherited __proto__ is no key of the body)', () => {
    expect(protoKeyField(JSON.parse('{"a":{"b":[1,"__proto__",{"proto":1}]},"c":null}'))).toBeUndefined();
    expect(protoKeyField({ a: {} })).toBeUndefined();
    for (const scalar of [null, 1, 'x', true]) expect(protoKeyField(scalar)).toBeUndefined();
  });

  it('walks a body nested deeper than the call stack goes, and shows a long path by its start', () => {
    const depth = 200_000;
    const deep = JSON.parse(`${'{"a":'.repeat(depth)}{"__proto__":1}${'}'.repeat(depth)}`);
    const field = protoKeyField(deep)!;
    expect(field).toBe(`${'a.'.repeat(16)}….__proto__`);
  });
});
