// Steering on the wire, held against a client the project did not write:
// the official `openai` npm package's Responses WebSocket client
// (`ResponsesWS`, with its `ResponsesWebSocketSession` lane helper) sends
// `response.steer` to hearth's simulator while a response streams, and
// reads the sequence the SDK's types document: `response.steer.accepted`,
// the response ending `response.incomplete` with reason `steered` (its
// partial text kept), then an automatic successor `response.created` chained
// on it that answers the steering input. A steer aimed at a response that
// has completed is refused with `response.steer.failed`
// (`response_already_completed`), its input handed back; one aimed at a
// response that waits for client-owned tool output is held
// (`response.steer.pending` with the `required_input` stubs) for the one
// explicit continuation that carries the saved output.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';

import OpenAI from 'openai';
import { ResponsesWebSocketSession } from 'openai/lib/responses/responses-websocket-session';
import { ResponsesWS } from 'openai/resources/responses/ws';

import { startSim, stopChild, withTimeout } from './helpers.mjs';

const API_KEY = 'sk-sim-steer-' + randomBytes(6).toString('hex');
const STEP_MS = 10_000;
const settings = { model: 'interop-sim-model', instructions: 'You are a test model. Answer briefly.', store: false };
const userMessage = (text) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });

let sim;
let simDiag = () => '';
let rws;
let session;

before(async () => {
  // Paced deltas (20 words a second): a 60-word answer streams for about
  // three seconds, long enough for a steer to land mid-answer.
  const started = await startSim(['--api-key', API_KEY, '--tokens-per-second', '20']);
  sim = started.sim;
  simDiag = started.diag;
  rws = new ResponsesWS(new OpenAI({ apiKey: API_KEY, baseURL: started.baseURL, maxRetries: 0 }));
  rws.on('error', () => {}); // API errors are asserted where they arrive
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
    "the SDK's WebSocket to open",
    simDiag,
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

/** Reads a lane's events until one satisfies stop (included). */
async function readUntil(lane, stop, seen = []) {
  for (;;) {
    const e = await withTimeout(lane.receive(), STEP_MS, `an event on lane ${lane.streamID} after ${seen.map((x) => x.type).join(',')}`, simDiag);
    seen.push(e);
    if (stop(e)) return seen;
  }
}

const text = (events) => events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
const terminal = (e) => ['response.completed', 'response.failed', 'response.incomplete', 'error'].includes(e.type);

test('openai ResponsesWS: response.steer mid-stream is accepted, the response ends steered, a successor answers the input; a steer for a completed response fails', { timeout: 40_000 }, async () => {
  const lane = session.lane('interop-steer');
  lane.create({ ...settings, input: [userMessage('tell me a long story sim:tokens=60')] });
  const first = await readUntil(lane, (e) => e.type === 'response.output_text.delta' || terminal(e));
  assert.equal(first.at(-1).type, 'response.output_text.delta', `the answer streams: ${first.map((e) => e.type).join(',')}`);
  const steeredID = first[0].response.id;
  assert.equal(first[0].type, 'response.created');

  // The steer names only type, previous_response_id and input (no stream_id:
  // the target response determines the lane).
  rws.send({ type: 'response.steer', previous_response_id: steeredID, input: [userMessage('say banana')] });
  const rest = await readUntil(lane, terminal);
  const steered = [...first, ...rest];
  const types = steered.map((e) => e.type);
  const seqs = steered.map((e) => e.sequence_number);
  assert.ok(
    seqs.every((n, i) => Number.isInteger(n) && (i === 0 || n > seqs[i - 1])),
    `sequence numbers rise through the steering events: ${JSON.stringify(seqs)} ${types.join(',')}`,
  );

  const accepted = steered.filter((e) => e.type === 'response.steer.accepted');
  assert.equal(accepted.length, 1, types.join(','));
  assert.equal(accepted[0].steer.previous_response_id, steeredID);
  assert.match(accepted[0].steer.id, /\S/);
  assert.equal(accepted[0].stream_id, 'interop-steer', 'the steering events come on the target response lane');
  assert.ok(types.indexOf('response.steer.accepted') < types.length - 1, 'accepted before the response ends');

  const end = steered.at(-1);
  assert.equal(end.type, 'response.incomplete', `the steered response ends incomplete: ${types.join(',')}`);
  assert.equal(end.response.id, steeredID);
  assert.equal(end.response.status, 'incomplete');
  assert.equal(end.response.incomplete_details?.reason, 'steered');
  const partial = text(steered);
  const words = partial.trim().split(/\s+/);
  assert.ok(words.length >= 1 && words.length < 60, `cut short at a safe boundary: ${JSON.stringify(partial)}`);
  const kept = (end.response.output ?? []).filter((o) => o.type === 'message').flatMap((o) => o.content.map((c) => c.text)).join('');
  assert.equal(kept, partial, 'the partial answer is kept in the steered response');

  // The successor: created by the server, chained on the steered response,
  // on the same lane; it reads the steering input.
  const successor = await readUntil(lane, terminal);
  const sTypes = successor.map((e) => e.type);
  assert.equal(sTypes[0], 'response.created', `an automatic successor: ${sTypes.join(',')}`);
  assert.equal(successor[0].stream_id, 'interop-steer');
  const succ = successor.at(-1).response;
  assert.equal(successor.at(-1).type, 'response.completed', sTypes.join(','));
  assert.notEqual(succ.id, steeredID);
  assert.equal(succ.previous_response_id, steeredID, 'the successor continues the steered response');
  assert.equal(successor[0].response.id, succ.id);
  assert.match(text(successor), /say banana/, 'the successor answers the steering input');

  // A steer for a response that has completed is refused, its input handed back.
  const failed = new Promise((resolve) => rws.once('response.steer.failed', resolve));
  rws.send({ type: 'response.steer', previous_response_id: succ.id, input: [userMessage('too late')] });
  const refusal = await withTimeout(failed, STEP_MS, 'response.steer.failed', simDiag);
  assert.equal(refusal.error.type, 'invalid_request_error');
  assert.equal(refusal.error.code, 'response_already_completed');
  assert.match(refusal.error.message, /\S/);
  assert.equal(refusal.steer.previous_response_id, succ.id);
  assert.equal(refusal.steer.id, undefined, 'no steering id was allocated');
  assert.deepEqual(refusal.steer.input, [userMessage('too late')], 'the input comes back');

  // The lane goes on: the next request chains on the successor.
  lane.create({ ...settings, previous_response_id: succ.id, input: [userMessage('and then')] });
  const next = await withTimeout(lane.finalResponse(), STEP_MS, 'the next response', simDiag);
  assert.equal(next.status, 'completed');
  assert.equal(next.previous_response_id, succ.id);
  lane.close();
});

test('openai ResponsesWS: response.steer with a stream_id, or for a response this connection does not have, is refused', { timeout: 20_000 }, async () => {
  // Each refusal is awaited as the socket's next response.steer.failed.
  const refused = async (send, what) => {
    const failed = new Promise((resolve) => rws.once('response.steer.failed', resolve));
    send();
    return withTimeout(failed, STEP_MS, what, simDiag);
  };
  const notFound = await refused(
    () => rws.send({ type: 'response.steer', previous_response_id: 'resp_not_on_this_connection', input: 'hello' }),
    'response.steer.failed for an unknown response',
  );
  assert.equal(notFound.error.code, 'response_not_found');
  assert.equal(notFound.steer.previous_response_id, 'resp_not_on_this_connection');
  assert.equal(notFound.steer.input, 'hello');
  // The SDK's types forbid stream_id on a steer; sent raw, the server refuses it.
  const withLane = await refused(
    () => rws.sendRaw(JSON.stringify({ type: 'response.steer', stream_id: 'x', previous_response_id: 'resp_x', input: 'hello' })),
    'response.steer.failed for a steer with a stream_id',
  );
  assert.equal(withLane.error.code, 'invalid_input');
});

test('openai ResponsesWS: a steer for a response that waits for tool output is held (response.steer.pending); one explicit continuation carries the saved output', { timeout: 30_000 }, async () => {
  const lane = session.lane('interop-steer-tools');
  const tools = [
    {
      type: 'function',
      name: 'list_dir',
      description: 'List a directory of the workspace.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      strict: false,
    },
  ];
  lane.create({ ...settings, tools, input: [userMessage('list the files')] });
  const called = await readUntil(lane, terminal);
  assert.equal(called.at(-1).type, 'response.completed', called.map((e) => e.type).join(','));
  const callResp = called.at(-1).response;
  const call = callResp.output.find((o) => o.type === 'function_call');
  assert.ok(call, JSON.stringify(callResp.output));

  // The client runs its tool; meanwhile the user steers.
  rws.send({ type: 'response.steer', previous_response_id: callResp.id, input: [userMessage('say banana')] });
  const held = await readUntil(lane, (e) => e.type === 'response.steer.pending' || e.type === 'response.steer.failed');
  const types = held.map((e) => e.type);
  assert.deepEqual(types, ['response.steer.accepted', 'response.steer.pending'], types.join(','));
  const [accepted, pending] = held;
  assert.equal(accepted.steer.previous_response_id, callResp.id);
  assert.equal(pending.steer.id, accepted.steer.id, 'the same submission');
  assert.equal(pending.reason, 'waiting_for_required_input');
  assert.deepEqual(
    pending.required_input.map((r) => [r.type, r.call_id]),
    [['function_call_output', call.call_id]],
    `a stub per outstanding call: ${JSON.stringify(pending.required_input)}`,
  );
  assert.ok(pending.sequence_number > accepted.sequence_number);

  // One explicit continuation with the saved result only: the server prepends the held input.
  const stub = pending.required_input[0];
  lane.create({ ...settings, tools, previous_response_id: callResp.id, input: [{ type: 'function_call_output', call_id: stub.call_id, output: 'a.txt\nb.txt' }] });
  const next = await readUntil(lane, terminal);
  const nTypes = next.map((e) => e.type);
  assert.equal(next.at(-1).type, 'response.completed', nTypes.join(','));
  assert.equal(next.at(-1).response.previous_response_id, callResp.id);
  assert.ok(!nTypes.includes('response.steer.failed'), nTypes.join(','));
  assert.match(text(next), /a\.txt/, 'an answer from the saved result');
  lane.close();
});
