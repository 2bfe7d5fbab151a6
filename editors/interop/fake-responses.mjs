// A Responses API WebSocket server written for the interop suite with the
// `ws` package, sharing no code with hearth or its simulator: it speaks the
// API's WebSocket mode (one text frame = one JSON event), keeps the
// connection-local cache a previous_response_id must name (the latest
// response of a lane; a lane may continue another lane's: a fork), and answers
// every user message with a list_dir call and every tool output with text.

import { randomBytes } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import http from 'node:http';

import { WebSocketServer } from 'ws';

import { withTimeout } from './helpers.mjs';

const newId = (prefix) => `${prefix}_${randomBytes(12).toString('hex')}`;

export class FakeResponsesServer extends EventEmitter {
  constructor(apiKey) {
    super();
    this.apiKey = apiKey;
    this.handshakes = []; // every upgrade attempt: {url, authorization, accepted}
    this.httpRequests = []; // plain HTTP requests (hearth should not need any)
    this.received = []; // every client frame: {conn, event}
    this.sent = []; // every server event: {conn, event}
    this.responses = []; // every response created: {conn, lane, request, response}
    this.violations = []; // client frames that break the protocol
    this.http = http.createServer((req, res) => {
      this.httpRequests.push({ method: req.method, url: req.url });
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'this test server only speaks WebSocket' } }));
    });
    this.wss = new WebSocketServer({ noServer: true });
    this.http.on('upgrade', (req, socket, head) => this.#upgrade(req, socket, head));
  }

  async start() {
    this.http.listen(0, '127.0.0.1');
    await once(this.http, 'listening');
    return this.http.address().port;
  }

  // waitFor resolves once pred() holds, re-checking on every frame received.
  async waitFor(pred, ms, what) {
    const deadline = Date.now() + ms;
    while (!pred()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await withTimeout(once(this, 'frame'), left, what);
    }
  }

  // drop closes every live connection without a close handshake.
  drop() {
    for (const c of this.wss.clients) c.terminate();
  }

  async close() {
    for (const c of this.wss.clients) c.terminate();
    this.wss.close();
    this.http.closeAllConnections?.();
    await new Promise((resolve) => this.http.close(resolve));
  }

  #upgrade(req, socket, head) {
    const authorization = req.headers.authorization ?? null;
    const url = new URL(req.url, 'http://x');
    const hs = { url: req.url, authorization, accepted: false };
    this.handshakes.push(hs);
    const refuse = (status, text) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    if (url.pathname !== '/v1/responses') return refuse(404, 'Not Found');
    if (authorization !== `Bearer ${this.apiKey}`) return refuse(401, 'Unauthorized');
    hs.accepted = true;
    this.wss.handleUpgrade(req, socket, head, (ws) => this.#serve(ws, this.handshakes.length));
  }

  #serve(ws, conn) {
    // The connection-local cache: lane → id of the latest response on it.
    const cache = new Map();
    ws.on('message', (data, isBinary) => {
      let event;
      try {
        if (isBinary) throw new Error('binary frame');
        event = JSON.parse(data.toString('utf8'));
        if (event === null || typeof event !== 'object' || typeof event.type !== 'string') {
          throw new Error('frame without a string type');
        }
      } catch (err) {
        this.violations.push(`conn ${conn}: ${err.message}`);
        ws.close(1003, 'out of step');
        return;
      }
      this.received.push({ conn, event });
      this.emit('frame');
      if (event.type !== 'response.create') {
        this.violations.push(`conn ${conn}: unexpected client event ${event.type}`);
        return;
      }
      this.#create(ws, conn, cache, event);
    });
  }

  #create(ws, conn, cache, req) {
    const lane = typeof req.stream_id === 'string' ? req.stream_id : '';
    const echo = lane ? { stream_id: lane } : {};
    let seq = 0;
    const emit = (event) => {
      const framed = { ...event, sequence_number: seq++, ...echo };
      this.sent.push({ conn, event: framed });
      ws.send(JSON.stringify(framed));
    };
    for (const field of ['stream', 'background']) {
      if (field in req) {
        this.violations.push(`conn ${conn}: response.create carries ${field}`);
      }
    }

    const prev = req.previous_response_id ?? null;
    // stream_id routes, previous_response_id is lineage: a request may
    // continue the latest response of any lane of the connection.
    if (prev !== null && cache.get(lane) !== prev && ![...cache.values()].includes(prev)) {
      cache.delete(lane); // a failed continuation evicts its parent
      const error = {
        type: 'error',
        status: 400,
        error: {
          type: 'invalid_request_error',
          code: 'previous_response_not_found',
          message: `Previous response with id '${prev}' not found.`,
          param: 'previous_response_id',
        },
        ...echo,
      };
      this.sent.push({ conn, event: error });
      ws.send(JSON.stringify(error));
      return;
    }

    const response = {
      id: newId('resp'),
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'in_progress',
      model: req.model ?? null,
      instructions: req.instructions ?? null,
      previous_response_id: prev,
      store: req.store ?? false,
      output: [],
      usage: null,
      error: null,
      incomplete_details: null,
    };
    this.responses.push({ conn, lane, request: req, response });
    const snapshot = () => structuredClone(response);
    const complete = () => {
      response.status = 'completed';
      response.usage = { input_tokens: 10, output_tokens: 5, total_tokens: 15 };
      emit({ type: 'response.completed', response: snapshot() });
      cache.set(lane, response.id);
    };

    // Warm-up: no output, just an id to chain from.
    if (req.generate === false) {
      emit({ type: 'response.created', response: snapshot() });
      complete();
      return;
    }

    emit({ type: 'response.created', response: snapshot() });
    emit({ type: 'response.in_progress', response: snapshot() });

    const input = Array.isArray(req.input) ? req.input : [];
    const toolOutput = input.find((it) => it?.type === 'function_call_output');
    const userMessage = input.find((it) => it?.role === 'user' && (it.type ?? 'message') === 'message');
    if (toolOutput) {
      const listing = typeof toolOutput.output === 'string' ? toolOutput.output : JSON.stringify(toolOutput.output);
      this.#text(emit, response, `The workspace holds:\n${listing}\nThat is all.`);
    } else if (userMessage) {
      this.#functionCall(emit, response, 'list_dir', JSON.stringify({ path: '.' }));
    } else {
      this.#text(emit, response, 'Nothing new to answer.');
    }
    complete();
  }

  #functionCall(emit, response, name, args) {
    const item = { type: 'function_call', id: newId('fc'), call_id: newId('call'), name, arguments: '', status: 'in_progress' };
    const output_index = response.output.length;
    emit({ type: 'response.output_item.added', output_index, item: { ...item } });
    const half = Math.ceil(args.length / 2);
    for (const delta of [args.slice(0, half), args.slice(half)]) {
      emit({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index, delta });
    }
    emit({ type: 'response.function_call_arguments.done', item_id: item.id, output_index, name, arguments: args });
    const done = { ...item, arguments: args, status: 'completed' };
    emit({ type: 'response.output_item.done', output_index, item: done });
    response.output.push(done);
  }

  #text(emit, response, text) {
    const item = { type: 'message', id: newId('msg'), role: 'assistant', status: 'in_progress', content: [] };
    const output_index = response.output.length;
    const ids = { item_id: item.id, output_index, content_index: 0 };
    emit({ type: 'response.output_item.added', output_index, item: { ...item } });
    emit({ type: 'response.content_part.added', ...ids, part: { type: 'output_text', text: '', annotations: [] } });
    const n = 4;
    const size = Math.ceil(text.length / n);
    for (let i = 0; i < text.length; i += size) {
      emit({ type: 'response.output_text.delta', ...ids, delta: text.slice(i, i + size), logprobs: [] });
    }
    const part = { type: 'output_text', text, annotations: [] };
    emit({ type: 'response.output_text.done', ...ids, text, logprobs: [] });
    emit({ type: 'response.content_part.done', ...ids, part });
    const done = { ...item, status: 'completed', content: [part] };
    emit({ type: 'response.output_item.done', output_index, item: done });
    response.output.push(done);
  }
}
