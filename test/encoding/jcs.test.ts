// RFC 8785 known-answer vectors: the values/escaping example, the key-ordering example (weird.json
// of the RFC's reference test data), the arrays example, and the Appendix B number samples.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalize } from '../../src/encoding/jcs.ts';

const cases: [string, string, string][] = [
  [
    'values and escaping',
    '{\n  "numbers": [1E30, 4.50, 333333333.33333329, 2e-3, 0.000000000000000000000000001],\n  "escaping": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n  "literals": [null, true, false]\n}',
    '{"escaping":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/","literals":[null,true,false],"numbers":[1e+30,4.5,333333333.3333333,0.002,1e-27]}',
  ],
  [
    'UTF-16 key ordering',
    '{\n  "\\u20ac": "Euro Sign",\n  "1": "One",\n  "\\u0080": "Control\\u007f",\n  "\\ud83d\\ude02": "Smiley",\n  "\\u00f6": "Latin Small Letter O With Diaeresis",\n  "\\ufb33": "Hebrew Letter Dalet With Dagesh",\n  "</script>": "Browser Challenge"\n}',
    '{"1":"One","</script>":"Browser Challenge","\u0080":"Control\u007f","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude02":"Smiley","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
  ],
  ['arrays', '[\n  56,\n  {\n    "d": true,\n    "10": null,\n    "1": [ ]\n  }\n]', '[56,{"1":[],"10":null,"d":true}]'],
  ['nested objects sort at every level', '{"b":{"z":1,"a":[{"y":2,"x":1}]},"a":0}', '{"a":0,"b":{"a":[{"x":1,"y":2}],"z":1}}'],
];

for (const [name, input, expected] of cases) {
  void test(`JCS: ${name}`, () => {
    assert.equal(canonicalize(JSON.parse(input)), expected);
  });
}

// RFC 8785 Appendix B: IEEE-754 bit patterns and their canonical serialization.
const numbers: [string, string][] = [
  ['0000000000000000', '0'],
  ['8000000000000000', '0'],
  ['0000000000000001', '5e-324'],
  ['8000000000000001', '-5e-324'],
  ['7fefffffffffffff', '1.7976931348623157e+308'],
  ['ffefffffffffffff', '-1.7976931348623157e+308'],
  ['4340000000000000', '9007199254740992'],
  ['c340000000000000', '-9007199254740992'],
  ['4430000000000000', '295147905179352830000'],
  ['44b52d02c7e14af5', '9.999999999999997e+22'],
  ['44b52d02c7e14af6', '1e+23'],
  ['44b52d02c7e14af7', '1.0000000000000001e+23'],
  ['444b1ae4d6e2ef4e', '999999999999999700000'],
  ['444b1ae4d6e2ef4f', '999999999999999900000'],
  ['444b1ae4d6e2ef50', '1e+21'],
  ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
  ['3eb0c6f7a0b5ed8d', '0.000001'],
  ['41b3de4355555553', '333333333.3333332'],
  ['41b3de4355555554', '333333333.33333325'],
  ['41b3de4355555555', '333333333.3333333'],
  ['41b3de4355555556', '333333333.3333334'],
  ['41b3de4355555557', '333333333.33333343'],
  ['becbf647612f3696', '-0.0000033333333333333333'],
  ['43143ff3c1cb0959', '1424953923781206.2'],
];

void test('JCS: RFC 8785 Appendix B number serialization', () => {
  for (const [bits, expected] of numbers) {
    const n = Buffer.from(bits, 'hex').readDoubleBE(0);
    assert.equal(canonicalize(n), expected, bits);
  }
});

void test('JCS: refuses values that have no canonical form', () => {
  for (const bad of [NaN, Infinity, -Infinity, 1n, undefined, '\ud800', { k: '\udc00' }, { ['\ud800']: 1 }, new Date(0)]) {
    assert.throws(() => canonicalize(bad), { code: 'jcs_unsupported_value' });
  }
});
