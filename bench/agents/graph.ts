// The benchmark graph: one node appending an AI message to MessagesAnnotation state (no LLM).
import { AIMessage } from '@langchain/core/messages';
import { MessagesAnnotation, StateGraph, START, END } from '@langchain/langgraph';

export const builder = new StateGraph(MessagesAnnotation)
  .addNode('reply', (state) => ({ messages: [new AIMessage(`reply #${state.messages.length}`)] }))
  .addEdge(START, 'reply')
  .addEdge('reply', END);

export const graph = builder.compile();
