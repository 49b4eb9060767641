// Query strings and form bodies are split by hand on the hot path (src/http/params.ts); whatever
// the input, the result must be what URLSearchParams (the WHATWG parser) gives, last value winning.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseUrlEncoded } from '../../src/http/params.ts';

function expected(text: string): [string, string][] {
  const map = new Map<string, string>();
  for (const [k, v] of new URLSearchParams(text)) map.set(k, v);
  return [...map];
}

const cases = [
  '',
  'queue_id=abc&last_event_id=5&dont_block=false',
  'a=1&a=2&b',
  '&&a=&=b&c==d',
  'name=J%C3%BCrgen+M%C3%BCller&topic=a%2Bb+c',
  'bad=%&worse=%zz&ok=1',
  'utf=%C3%28&x=%E2%82',
  'emoji=%F0%9F%98%80&plus=%2B%2b',
  'narrow=%5B%7B%22operator%22%3A%22stream%22%7D%5D',
  'k%3Dey=v%26al',
  'sp ace=a b',
];

test('known inputs: the same pairs as URLSearchParams', () => {
  for (const text of cases) assert.equal([...parseUrlEncoded(text)], expected(text), text);
});

test('random inputs from a hostile alphabet: the same pairs as URLSearchParams', () => {
  const alphabet = ['a', 'b', '=', '&', '+', '%', '%2', '%41', '%C3', '%A9', '%FF', '%2B', '%26', '%3D', ' ', 'é', '😀', '\uD800'];
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  for (let i = 0; i < 20_000; i++) {
    let text = '';
    const length = next() % 12;
    for (let j = 0; j < length; j++) text += alphabet[next() % alphabet.length];
    assert.equal([...parseUrlEncoded(text)], expected(text), JSON.stringify(text));
  }
});

test('values already given are overwritten, as the later parameter wins', () => {
  const into = new Map([['a', 'old']]);
  assert.equal([...parseUrlEncoded('a=new&b=%', into)], [...new Map([['a', 'new'], ...expected('b=%')])]);
});

test.run();
