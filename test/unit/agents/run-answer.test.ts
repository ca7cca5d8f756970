// A run's answer: messages in their dict form ({...toDict().data, type}), as the official servers send
// them, whether computed from the messages or taken from the forms its final checkpoint was written with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph-checkpoint';
import { CheckpointSerializer } from '../../../src/modules/agents/checkpoint-serde.ts';
import { serialize } from '../../../src/modules/agents/run-stream.ts';

function state() {
  return {
    messages: [
      new HumanMessage({ content: 'hi', id: 'h1', name: 'ann' }),
      new AIMessage({ content: '', id: 'a1', tool_calls: [{ id: 'c1', name: 'search', args: { q: 'x' }, type: 'tool_call' }], usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } }),
      new ToolMessage({ content: 'found', tool_call_id: 'c1', artifact: { rows: 1 } }),
    ],
    last: new AIMessage({ content: 'single', id: 'a2' }),
    note: 'plain',
  };
}

test('messages are sent as toDict() data with their type, lists and single values alike', () => {
  const value = state();
  const expected = {
    messages: value.messages.map((message) => ({ ...message.toDict().data, type: message.toDict().type })),
    last: { ...value.last.toDict().data, type: 'ai' },
    note: 'plain',
  };
  assert.deepEqual(JSON.parse(serialize(value)), JSON.parse(JSON.stringify(expected)));
});

test('with the final checkpoint\'s forms the answer is the same, and is taken from them', async () => {
  const value = state();
  const forms = new WeakMap<object, unknown>();
  await new CheckpointSerializer(new MemorySaver().serde).dumpsTyped({ channel_values: value }, forms);
  for (const message of [...value.messages, value.last]) assert.ok(forms.has(message), 'recorded while written');
  assert.equal(serialize(value, forms), serialize(value));
  // Proof that the recorded form is what is sent (a form no message would produce).
  const marked = value.messages[0]!;
  forms.set(marked, { lc: 1, type: 'constructor', id: ['x'], kwargs: { content: 'from the checkpoint' } });
  assert.equal(JSON.parse(serialize(value, forms)).messages[0].content, 'from the checkpoint');
});
