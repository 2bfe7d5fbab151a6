// hearth's Responses simulator (`hearth sim`) held against a real client:
// the official `openai` npm package's Responses WebSocket support
// (`ResponsesWS` from openai/resources/responses/ws, with the SDK's
// `ResponsesWebSocketSession` lane helper to send on and read one lane).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';

import OpenAI from 'openai';
import { ResponsesWebSocketSession } from 'openai/lib/responses/responses-websocket-session';
import { ResponsesWS } from 'openai/resources/responses/ws';

import { freePort, hearthBin, startChild, stopChild, waitForListener, withTimeout } from './helpers.mjs';

const API_KEY = 'sk-sim-' + randomBytes(6).toString('hex');
const MODEL = 'interop-sim-model';
const INSTRUCTIONS = 'You are a test model. Answer briefly.';
const TOOLS = [
  {
    type: 'function',
    name: 'list_dir',
    description: 'List a directory of the workspace.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    strict: false,
  },
];
const STEP_MS = 10_000;

let sim;
let baseURL;
let rws; // the SDK's ResponsesWS
let session; // the SDK's lane router on it

before(async () => {
  const port = await freePort();
  sim = startChild(hearthBin(), ['sim', '--addr', `127.0.0.1:${port}`, '--api-key', API_KEY]);
  await sim.spawned;
  const diag = () => `hearth sim stdout:\n${sim.out.stdout}\nstderr:\n${sim.out.stderr}`;
  // `hearth sim` prints its banner before it listens, so readiness is a
  // successful TCP connect, not the banner.
  await waitForListener(port, sim.exited, 10_000, diag);
  baseURL = `http://127.0.0.1:${port}/v1`;

  const client = new OpenAI({ apiKey: API_KEY, baseURL, maxRetries: 0 });
  rws = new ResponsesWS(client);
  rws.on('error', () => {}); // API errors are asserted per lane below; transport errors fail the lanes
  await withTimeout(
    (async () => {
      for await (const m of rws.stream()) {
        if (m.type === 'open') return;
        if (m.type === 'error') throw m.error;
        if (m.type === 'close') throw new Error(`socket closed before opening: ${m.code} ${m.reason}`);
      }
      throw new Error('socket stream ended before opening');
    })(),
    STEP_MS,
    `the SDK's WebSocket to ${baseURL} to open`,
    diag,
  );
  session = new ResponsesWebSocketSession(rws, { maxLanes: 8, maxBufferedEvents: 10_000, maxBufferedBytes: 8 << 20 });
});

after(async () => {
  session?.close();
  if (rws) {
    const closed = new Promise((resolve) => rws.on('close', resolve));
    rws.close({ code: 1000, reason: 'done' });
    await withTimeout(closed, 5000, 'the SDK socket to close').catch(() => {});
  }
  await stopChild(sim);
});

/** Reads one response's raw events from a lane, through its terminal event. */
async function readResponse(lane) {
  const events = [];
  for (;;) {
    const e = await withTimeout(lane.receive(), STEP_MS, `an event on lane ${lane.streamID ?? '(default)'} after ${events.map((x) => x.type).join(',')}`);
    events.push(e);
    if (['response.completed', 'response.failed', 'response.incomplete', 'error'].includes(e.type)) return events;
  }
}

/** sequence_number counts 0, 1, 2, … within one response. */
function assertSequence(events) {
  assert.deepEqual(
    events.map((e) => e.sequence_number),
    events.map((_, i) => i),
    `sequence numbers of ${events.map((e) => e.type).join(',')}`,
  );
}

const userMessage = (text) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
const settings = { model: MODEL, instructions: INSTRUCTIONS, tools: TOOLS, store: false };

test('openai ResponsesWS: warm-up, then a chained text turn, on the default lane', { timeout: 30_000 }, async () => {
  const lane = session.lane();

  lane.create({ ...settings, generate: false, input: [] });
  const warm = await readResponse(lane);
  assert.deepEqual(warm.map((e) => e.type), ['response.created', 'response.completed']);
  assertSequence(warm);
  const warmResp = warm.at(-1).response;
  assert.equal(warmResp.status, 'completed');
  assert.deepEqual(warmResp.output, []);
  assert.match(warmResp.id, /\S/);
  assert.equal(warm[0].response.id, warmResp.id);
  for (const e of warm) assert.equal(e.stream_id, undefined, 'default-lane events carry no stream_id');

  lane.create({ ...settings, previous_response_id: warmResp.id, input: [userMessage('hello from the openai SDK')] });
  const turn = await readResponse(lane);
  const types = turn.map((e) => e.type);
  assertSequence(turn);
  assert.equal(types[0], 'response.created');
  assert.equal(types[1], 'response.in_progress');
  assert.equal(types.at(-1), 'response.completed', `events: ${types.join(',')}`);
  // The sim's model reasons, like the real default models: a reasoning item opens the output,
  // then the message.
  for (const t of ['response.output_item.added', 'response.output_item.done']) {
    assert.equal(types.filter((x) => x === t).length, 2, `two ${t} (reasoning, message): ${types.join(',')}`);
  }
  assert.equal(turn.find((e) => e.type === 'response.output_item.added').item.type, 'reasoning');
  for (const t of ['response.content_part.added', 'response.output_text.done', 'response.content_part.done']) {
    assert.equal(types.filter((x) => x === t).length, 1, `one ${t}: ${types.join(',')}`);
  }
  assert.ok(types.indexOf('response.output_text.delta') > types.indexOf('response.content_part.added'));

  const resp = turn.at(-1).response;
  assert.notEqual(resp.id, warmResp.id, 'a fresh id');
  assert.equal(resp.previous_response_id, warmResp.id, 'the ids chain');
  assert.ok(turn.every((e) => !e.response || e.response.id === resp.id), 'every event is about one response');

  const streamed = turn.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
  assert.equal(streamed, 'You said: hello from the openai SDK');
  assert.equal(turn.find((e) => e.type === 'response.output_text.done').text, streamed);
  assert.equal(resp.output[0].type, 'reasoning');
  assert.match(resp.output[0].id, /^rs_/);
  const message = resp.output.find((o) => o.type === 'message');
  assert.equal(message.role, 'assistant');
  assert.equal(message.content.map((c) => c.text).join(''), streamed);
  lane.close();
});

test('openai ResponsesWS: a stream_id lane chains a tool call, its output and a long answer; a bad parent is refused', { timeout: 30_000 }, async () => {
  const lane = session.lane('interop-lane-1');

  lane.create({ ...settings, generate: false, input: [] });
  const warm = await readResponse(lane);
  assertSequence(warm);
  assert.ok(warm.every((e) => e.stream_id === 'interop-lane-1'), 'every event echoes stream_id');
  const warmId = warm.at(-1).response.id;

  // "list" makes the scripted model call list_dir.
  lane.create({ ...settings, previous_response_id: warmId, input: [userMessage('list the files')] });
  const callEvents = await readResponse(lane);
  assertSequence(callEvents);
  const callTypes = callEvents.map((e) => e.type);
  assert.ok(callTypes.includes('response.function_call_arguments.delta'), callTypes.join(','));
  assert.ok(callTypes.includes('response.function_call_arguments.done'), callTypes.join(','));
  const callResp = callEvents.at(-1).response;
  assert.equal(callResp.previous_response_id, warmId);
  const call = callResp.output.find((o) => o.type === 'function_call');
  assert.ok(call, `a function call: ${JSON.stringify(callResp.output)}`);
  assert.equal(call.name, 'list_dir');
  assert.deepEqual(JSON.parse(call.arguments), { path: '.' });
  const streamedArgs = callEvents.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.delta).join('');
  assert.equal(streamedArgs, call.arguments);

  // The tool's output, then a 12-word answer read with the SDK's accumulator.
  // This one asks for a reasoning summary and the encrypted reasoning, as Codex does.
  lane.create({
    ...settings,
    reasoning: { effort: 'low', summary: 'auto' },
    include: ['reasoning.encrypted_content'],
    previous_response_id: callResp.id,
    input: [{ type: 'function_call_output', call_id: call.call_id, output: 'a.txt\nb.txt' }, userMessage('now sim:tokens=12')],
  });
  const final = await withTimeout(lane.finalResponse(), STEP_MS, 'finalResponse');
  assert.equal(final.status, 'completed');
  assert.equal(final.previous_response_id, callResp.id, 'the ids chain');
  const words = final.output_text.trim().split(/\s+/);
  assert.equal(words.length, 12, `12 words: ${JSON.stringify(final.output_text)}`);
  const reasoning = final.output.find((o) => o.type === 'reasoning');
  assert.ok(reasoning, `a reasoning item: ${JSON.stringify(final.output)}`);
  assert.equal(reasoning.summary.length, 1, `a summary: ${JSON.stringify(reasoning)}`);
  assert.match(reasoning.summary[0].text, /^Thinking about: /);
  assert.equal(typeof reasoning.encrypted_content, 'string');

  // A parent this connection never produced: previous_response_not_found, on this lane.
  lane.create({ ...settings, previous_response_id: 'resp_does_not_exist', input: [userMessage('hello?')] });
  const refused = await readResponse(lane);
  assert.equal(refused.length, 1);
  assert.equal(refused[0].type, 'error');
  assert.equal(refused[0].stream_id, 'interop-lane-1');
  assert.equal(refused[0].status, 400);
  assert.equal(refused[0].error.code, 'previous_response_not_found');
  assert.equal(refused[0].error.param, 'previous_response_id');

  // The failed continuation evicted the lane's parent: chaining from the
  // last good response is refused too.
  lane.create({ ...settings, previous_response_id: final.id, input: [userMessage('and again')] });
  const evicted = await readResponse(lane);
  assert.equal(evicted.at(-1).type, 'error');
  assert.equal(evicted.at(-1).error.code, 'previous_response_not_found');
  lane.close();
});

test('openai ResponsesWS: the hosted web search streams its call and an answer; sent back under store:false it is taken', { timeout: 30_000 }, async () => {
  const lane = session.lane('interop-search');
  const withSearch = { ...settings, tools: [...TOOLS, { type: 'web_search', external_web_access: false }] };

  lane.create({ ...withSearch, input: [userMessage('search sqlite wal mode')] });
  const events = await readResponse(lane);
  assertSequence(events);
  const types = events.map((e) => e.type);
  assert.equal(types.at(-1), 'response.completed', `events: ${types.join(',')}`);
  for (const t of ['response.web_search_call.in_progress', 'response.web_search_call.searching', 'response.web_search_call.completed']) {
    assert.equal(types.filter((x) => x === t).length, 1, `one ${t}: ${types.join(',')}`);
  }
  const resp = events.at(-1).response;
  const call = resp.output.find((o) => o.type === 'web_search_call');
  assert.ok(call, `a web search: ${JSON.stringify(resp.output)}`);
  assert.match(call.id, /^ws_/);
  assert.equal(call.status, 'completed');
  assert.deepEqual(call.action, { type: 'search', query: 'sqlite wal mode' });
  for (const e of events.filter((x) => x.type.startsWith('response.web_search_call.'))) assert.equal(e.item_id, call.id);
  const answer = resp.output.find((o) => o.type === 'message').content.map((c) => c.text).join('');
  assert.match(answer, /for "sqlite wal mode"/);

  // store:false, the whole conversation again: the call without its id is taken, with it refused.
  const { id, ...replayed } = call;
  const assistant = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: answer }] };
  lane.create({ ...withSearch, input: [userMessage('search sqlite wal mode'), replayed, assistant, userMessage('search sqlite checkpoints')] });
  const again = await withTimeout(lane.finalResponse(), STEP_MS, 'finalResponse');
  assert.equal(again.status, 'completed');
  assert.match(again.output_text, /for "sqlite checkpoints"/);
  lane.create({ ...withSearch, input: [userMessage('search sqlite wal mode'), call, assistant, userMessage('thanks')] });
  const refused = await readResponse(lane);
  assert.equal(refused.at(-1).type, 'error');
  assert.equal(refused.at(-1).status, 404);
  assert.match(refused.at(-1).error.message, new RegExp(`Item with id '${id}' not found`));
  lane.close();
});
