// Every message hearth sends an ACP client, checked against the official ACP
// schema: the JSON Schema the @agentclientprotocol/sdk package ships
// (schema/v1/schema.json), with ajv. The method → type map is the schema's
// own (each request, response and notification type names its method and
// side: x-method, x-side). The check sits on the byte streams between the
// client under test and `hearth acp`, so it sees exactly what hearth wrote,
// beside whatever the SDK itself checks.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

import Ajv2020 from 'ajv/dist/2020.js';

// The package does not export its schema: it is read from where npm put it.
// schema.json is the stable protocol; schema.unstable.json adds the unstable
// methods (session/fork, session/status), checked when a SchemaCheck asks.
const schemaDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules/@agentclientprotocol/sdk/schema/v1');
const schemaPath = path.join(schemaDir, 'schema.json');

const ints = { int32: 2 ** 31, int64: 2 ** 63, uint16: 2 ** 16, uint32: 2 ** 32, uint64: 2 ** 64 };

/** One schema file compiled: its validators and its method → type map. */
function compile(file) {
  const schema = JSON.parse(readFileSync(file, 'utf8'));
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const [name, bound] of Object.entries(ints)) {
    const min = name.startsWith('u') ? 0 : -bound;
    const max = name.startsWith('u') ? bound - 1 : bound - 1;
    ajv.addFormat(name, { type: 'number', validate: (n) => Number.isInteger(n) && n >= min && n <= max });
  }
  ajv.addFormat('double', { type: 'number', validate: (n) => Number.isFinite(n) });
  ajv.addFormat('uri', {
    type: 'string',
    validate: (s) => {
      try {
        new URL(s);
        return true;
      } catch {
        return false;
      }
    },
  });
  ajv.addSchema(schema, 'acp');
  const validators = new Map();
  const validator = (def) => {
    let v = validators.get(def);
    if (!v) {
      v = ajv.getSchema(`acp#/$defs/${def}`);
      if (!v) throw new Error(`the ACP schema has no ${def}`);
      validators.set(def, v);
    }
    return v;
  };
  /** The schema's type for (side, method, kind): kind is Request, Response or Notification. */
  const typeOf = new Map();
  for (const [name, def] of Object.entries(schema.$defs)) {
    if (!def['x-method']) continue;
    const kind = ['Request', 'Response', 'Notification'].find((k) => name.endsWith(k));
    if (kind) typeOf.set(`${def['x-side']} ${def['x-method']} ${kind}`, name);
  }
  return { validator, typeOf };
}

const compiled = new Map(); // file → compile(file)
function schemaFor(unstable) {
  const file = unstable ? path.join(schemaDir, 'schema.unstable.json') : schemaPath;
  if (!compiled.has(file)) compiled.set(file, compile(file));
  return compiled.get(file);
}

/** The schema's version, for test diagnostics. */
export const schemaFile = schemaPath;

/**
 * SchemaCheck watches one ACP connection. `streams(stdin, stdout)` wraps a
 * child's stdio (node streams) into the web streams acp.ndJsonStream takes,
 * checking every line on the way; `violations` lists what broke the schema,
 * `checked` counts what was checked per type.
 */
export class SchemaCheck {
  constructor(name = 'hearth', { unstable = false } = {}) {
    this.name = name;
    this.schema = schemaFor(unstable); // unstable: schema.unstable.json, with session/fork and session/status
    this.violations = [];
    this.checked = new Map(); // type → count
    this.methods = new Map(); // id of a client request → its method
    this.lines = { in: '', out: '' };
  }

  streams(stdin, stdout) {
    const up = Writable.toWeb(stdin);
    const down = Readable.toWeb(stdout);
    const self = this;
    const writer = up.getWriter();
    const writable = new WritableStream({
      async write(chunk) {
        self.#feed('out', chunk);
        await writer.write(chunk);
      },
      async close() {
        await writer.close();
      },
      async abort(reason) {
        await writer.abort(reason);
      },
    });
    const readable = down.pipeThrough(
      new TransformStream({
        transform(chunk, controller) {
          self.#feed('in', chunk);
          controller.enqueue(chunk);
        },
      }),
    );
    return { writable, readable };
  }

  #feed(dir, chunk) {
    this.lines[dir] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    for (let i = this.lines[dir].indexOf('\n'); i >= 0; i = this.lines[dir].indexOf('\n')) {
      const line = this.lines[dir].slice(0, i).trim();
      this.lines[dir] = this.lines[dir].slice(i + 1);
      if (!line) continue;
      if (dir === 'out') this.#sent(line);
      else this.check(line);
    }
  }

  /**
   * Checks a recorded conversation, for a client whose streams cannot be
   * wrapped (one that starts `hearth acp` itself): `sent` is what the
   * client wrote, `received` what hearth wrote, each newline-delimited.
   */
  transcript(sent, received) {
    this.#feed('out', sent.endsWith('\n') ? sent : sent + '\n');
    this.#feed('in', received.endsWith('\n') ? received : received + '\n');
  }

  /** A line the client sent: its requests' ids name the methods hearth answers. */
  #sent(line) {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (msg && typeof msg.method === 'string' && msg.id !== undefined) this.methods.set(JSON.stringify(msg.id), msg.method);
  }

  /** Checks one line hearth sent. */
  check(line) {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (err) {
      return this.#violation(`not JSON: ${line.slice(0, 200)}`);
    }
    if (msg === null || typeof msg !== 'object' || msg.jsonrpc !== '2.0') {
      return this.#violation(`not a JSON-RPC 2.0 message: ${line.slice(0, 200)}`);
    }
    if (typeof msg.method === 'string') {
      if (msg.method.startsWith('_')) return; // an extension: no schema
      const kind = msg.id === undefined ? 'Notification' : 'Request';
      return this.#validate(this.schema.typeOf.get(`client ${msg.method} ${kind}`), msg.params, `${msg.method} ${kind.toLowerCase()}`);
    }
    const method = this.methods.get(JSON.stringify(msg.id));
    if (msg.error !== undefined) {
      if ('result' in msg) this.#violation(`a response with both result and error: ${line.slice(0, 200)}`);
      return this.#validate('Error', msg.error, `error answering ${method ?? 'an unknown request'}`);
    }
    if (!('result' in msg)) return this.#violation(`neither request, notification nor response: ${line.slice(0, 200)}`);
    if (method === undefined) return this.#violation(`a response to no request the client sent: ${line.slice(0, 200)}`);
    if (method.startsWith('_')) return;
    this.#validate(this.schema.typeOf.get(`agent ${method} Response`), msg.result, `${method} response`);
  }

  #validate(type, value, what) {
    if (!type) return this.#violation(`${what}: not a method of the ACP schema`);
    const v = this.schema.validator(type);
    if (!v(value)) {
      const errs = v.errors.slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
      this.#violation(`${what} is not a valid ${type}: ${errs}\n  ${JSON.stringify(value).slice(0, 400)}`);
    }
    this.checked.set(type, (this.checked.get(type) ?? 0) + 1);
  }

  #violation(text) {
    this.violations.push(`${this.name}: ${text}`);
  }

  /** "Type ×n" for each type checked, for diagnostics. */
  summary() {
    return [...this.checked].map(([t, n]) => `${t} ×${n}`).join(', ');
  }
}
