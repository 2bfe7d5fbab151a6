// The one case the real `hearth acp` cannot produce, against a stand-in agent
// built on the same SDK (fixtures/fake-agent.ts): the relay exiting mid-turn
// with a non-zero code and a message on stderr. Permissions, modes and diffs
// are tested against the real daemon in permissions.test.ts.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { HearthClient } from "../src/acp/client.js";
import { HearthGoneError } from "../src/acp/errors.js";
import { within } from "./helpers.js";

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "fake-agent.js");

describe("a relay that dies mid-turn (stand-in ACP agent on the SDK)", () => {
  let dir: string;
  let client: HearthClient;

  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "hv-fake-"));
    client = new HearthClient({ path: process.execPath, args: [AGENT] });
  });

  after(() => {
    client.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test("HearthGoneError with its exit code and stderr; the next call reconnects", async () => {
    const s = await client.newSession(dir);
    await assert.rejects(within(client.prompt(s.sessionId, "die"), 10_000, "the turn"), (e: unknown) => {
      assert.ok(e instanceof HearthGoneError, String(e));
      assert.match(e.message, /exited with code 3/);
      assert.match(e.message, /simulated crash/);
      return true;
    });
    assert.equal(client.connected, false);
    const again = await client.newSession(dir);
    const res = await within(client.prompt(again.sessionId, "hi"), 10_000, "the turn");
    assert.equal(res.stopReason, "end_turn");
  });
});
