// Berth's checkpoint serializer must write exactly what LangGraph's JsonPlusSerializer writes and read
// back what it reads, for messages of every kind and for the values JSON cannot carry.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import {
  AIMessage, AIMessageChunk, ChatMessage, FunctionMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage,
} from '@langchain/core/messages';
import { Document } from '@langchain/core/documents';
import { MemorySaver } from '@langchain/langgraph-checkpoint';
import { CheckpointSerializer } from '../../../src/modules/agents/checkpoint-serde.ts';

const reference = new MemorySaver().serde;
const serializer = new CheckpointSerializer(reference);
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

function sample(): Record<string, unknown> {
  return {
    messages: [
      new SystemMessage('be brief'),
      new HumanMessage({ content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: 'data:x' }], id: 'h1', name: 'ann' }),
      new AIMessage({
        content: '', id: 'a1', additional_kwargs: { nested: { lc: 3, keep: true } }, response_metadata: { model: 'm' },
        tool_calls: [{ id: 'c1', name: 'search', args: { q: 'x', deep: { list: [1, 2] } }, type: 'tool_call' }],
        usage_metadata: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
      }),
      new ToolMessage({ content: 'found', tool_call_id: 'c1', artifact: { rows: 2 }, status: 'success' }),
      new AIMessageChunk({ content: 'part', id: 'a2' }),
      new FunctionMessage({ content: 'f', name: 'fn' }),
      new ChatMessage({ content: 'c', role: 'critic' }),
      new RemoveMessage({ id: 'h1' }),
    ],
    docs: [new Document({ pageContent: 'page', metadata: { source: 's' } })],
    user_data_shaped_like_lc: { lc: 1, type: 'constructor', note: 'not an id array' },
    missing: undefined,
    set: new Set([1, 'two']),
    map: new Map([['k', { v: 1 }]]),
    pattern: /a+b/gi,
    failure: new Error('bad'),
    typed_failure: new TypeError('kept as its record, as the reference keeps it'),
    bytes: new Uint8Array([0, 1, 255]),
    list: [1, undefined, null, 'x'],
    when: new Date(0),
    deep: { a: { b: { c: [{ d: new AIMessage({ content: 'nested', id: 'n1' }) }] } } },
  };
}

describe('CheckpointSerializer', () => {
  test('writes the same bytes as LangGraph\'s serializer', async () => {
    const value = sample();
    const [refType, refBytes] = await reference.dumpsTyped(value);
    const [type, bytes] = await serializer.dumpsTyped(value);
    assert.equal(type, refType);
    assert.equal(text(bytes), text(refBytes));
  });

  test('reads back what LangGraph\'s serializer reads: same classes, same fields', async () => {
    const [, bytes] = await reference.dumpsTyped(sample());
    const expected = (await reference.loadsTyped('json', bytes)) as Record<string, any>;
    const actual = (await serializer.loadsTyped('json', bytes)) as Record<string, any>;
    assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort());
    for (const [index, message] of (expected.messages as any[]).entries()) {
      const mine = actual.messages[index];
      assert.equal(mine.constructor, message.constructor, `message ${index} class`);
      assert.ok(isDeepStrictEqual({ ...mine }, { ...message }), `message ${index} fields: ${JSON.stringify(mine)} vs ${JSON.stringify(message)}`);
      assert.deepEqual(mine.lc_kwargs, message.lc_kwargs);
    }
    assert.equal(actual.docs[0].constructor, expected.docs[0].constructor);
    assert.deepEqual({ ...actual.docs[0] }, { ...expected.docs[0] });
    for (const key of ['user_data_shaped_like_lc', 'set', 'map', 'pattern', 'bytes', 'list', 'when', 'typed_failure']) {
      assert.deepEqual(actual[key], expected[key], key);
    }
    assert.ok('missing' in actual && actual.missing === undefined);
    assert.ok(actual.failure instanceof Error && actual.failure.message === 'bad');
    assert.equal(actual.deep.a.b.c[0].d.constructor, AIMessage);
    assert.equal(actual.deep.a.b.c[0].d.content, 'nested');
  });

  test('objects escaped by LangChain and secrets are left to load (same result)', async () => {
    const message = new AIMessage({ content: 'x', id: 'e1', additional_kwargs: { lc: 1, type: 'secret', id: ['NOPE'] } as any });
    const [, bytes] = await reference.dumpsTyped({ messages: [message] });
    assert.match(text(bytes), /__lc_escaped__/);
    const expected = (await reference.loadsTyped('json', bytes)) as any;
    const actual = (await serializer.loadsTyped('json', bytes)) as any;
    assert.deepEqual(actual.messages[0].additional_kwargs, expected.messages[0].additional_kwargs);
    assert.deepEqual(actual.messages[0].additional_kwargs, { lc: 1, type: 'secret', id: ['NOPE'] });
  });

  test('values with cycles are written as the reference writes them', async () => {
    const value: Record<string, unknown> = { a: 1 };
    value.self = value;
    const [, bytes] = await serializer.dumpsTyped(value);
    assert.equal(text(bytes), '{"a":1,"self":"[Circular]"}');
  });

  test('bytes stay bytes', async () => {
    const [type, bytes] = await serializer.dumpsTyped(new Uint8Array([1, 2]));
    assert.equal(type, 'bytes');
    assert.deepEqual(await serializer.loadsTyped(type, bytes), new Uint8Array([1, 2]));
  });
});
