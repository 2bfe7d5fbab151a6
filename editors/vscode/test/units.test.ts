// Pure helpers: finding the binary, summarising status, the inline diff.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";

import { resolveHearthBinary } from "../src/acp/binary.js";
import { HearthNotFoundError } from "../src/acp/errors.js";
import { age, processLabel } from "../src/acp/processes.js";
import { findWorkspace, formatDuration, statusMarkdown, summarize, type HearthStatus, type WorkspaceStatus } from "../src/acp/status.js";
import { configInfo, contextLeft, pickerOption } from "../src/config.js";
import { appendToHistory } from "../src/history.js";
import type { HostMessage } from "../src/protocol.js";
import { diffLines, diffStats, withContext } from "../src/webview/diff.js";
import { thoughtPreview } from "../src/webview/thought.js";

describe("resolveHearthBinary", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "hv-bin-"));
    mkdirSync(path.join(dir, "bin"));
    writeFileSync(path.join(dir, "bin", "hearth"), "#!/bin/sh\n");
    chmodSync(path.join(dir, "bin", "hearth"), 0o755);
    writeFileSync(path.join(dir, "bin", "plain"), "not executable");
    chmodSync(path.join(dir, "bin", "plain"), 0o644);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("a command name is looked up on PATH", () => {
    assert.equal(resolveHearthBinary("hearth", { PATH: `/nonexistent:${path.join(dir, "bin")}` }), path.join(dir, "bin", "hearth"));
    assert.equal(resolveHearthBinary(undefined, { PATH: path.join(dir, "bin") }), path.join(dir, "bin", "hearth"));
    assert.equal(resolveHearthBinary("  ", { PATH: path.join(dir, "bin") }), path.join(dir, "bin", "hearth"));
  });

  test("an absolute or relative path is used as it is", () => {
    const abs = path.join(dir, "bin", "hearth");
    assert.equal(resolveHearthBinary(abs, { PATH: "" }), abs);
    assert.equal(resolveHearthBinary("./bin/hearth", { PATH: "" }, dir), abs);
  });

  test("missing or not executable: HearthNotFoundError naming the setting and the README", () => {
    assert.throws(() => resolveHearthBinary("hearth", { PATH: "/nonexistent" }), (e: unknown) => {
      assert.ok(e instanceof HearthNotFoundError);
      assert.equal(e.configured, "hearth");
      assert.match(e.message, /no executable named "hearth" on PATH/);
      assert.match(e.message, /#readme/);
      return true;
    });
    assert.throws(() => resolveHearthBinary(path.join(dir, "bin", "plain"), {}), /is not an executable file/);
    assert.throws(() => resolveHearthBinary(path.join(dir, "bin"), {}), HearthNotFoundError);
  });
});

function ws(over: Partial<WorkspaceStatus>): WorkspaceStatus {
  return {
    root: "/w",
    state: "ready",
    transport: "ws",
    handshakes: 1,
    warmups: 1,
    fullRequests: 1,
    incrementalRequests: 4,
    bytesSent: 2048,
    bytesSaved: 10240,
    lastTurnMs: 1234,
    ...over,
  };
}

describe("status summaries", () => {
  test("each daemon state maps to what the status bar says", () => {
    const cases: [Partial<WorkspaceStatus>, string, boolean][] = [
      [{ state: "connecting", handshakes: 0 }, "connecting", false],
      [{ state: "connecting", handshakes: 2 }, "reconnecting", true],
      [{ state: "warming" }, "warming", false],
      [{ state: "re-warming" }, "reconnecting", true],
      [{ state: "ready" }, "ready", false],
      [{ state: "streaming" }, "streaming", false],
      [{ state: "http-fallback", transport: "http" }, "http-fallback", true],
      [{ state: "closed" }, "closed", true],
    ];
    for (const [over, label, warning] of cases) {
      const s = summarize(ws(over), true);
      assert.equal(s.label, label, JSON.stringify(over));
      assert.equal(s.warning, warning, JSON.stringify(over));
      assert.equal(s.lastTurn, "1.2 s");
    }
    assert.equal(summarize(undefined, false).label, "reconnecting");
    assert.equal(summarize(undefined, true).label, "idle");
    assert.equal(summarize(ws({ lastTurnMs: 0 }), true).lastTurn, "");
  });

  test("durations", () => {
    assert.equal(formatDuration(0), "");
    assert.equal(formatDuration(87), "87 ms");
    assert.equal(formatDuration(14_300), "14.3 s");
    assert.equal(formatDuration(125_000), "2m 5s");
  });

  test("the workspace is found through symlinks", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "hv-ws-"));
    try {
      const real = path.join(dir, "real");
      mkdirSync(real);
      symlinkSync(real, path.join(dir, "link"));
      const status: HearthStatus = { version: "v", pid: 1, socket: "/s", workspaces: [ws({ root: "/other" }), ws({ root: real })] };
      assert.equal(findWorkspace(status, path.join(dir, "link"))?.root, real);
      assert.equal(findWorkspace(status, real)?.root, real);
      assert.equal(findWorkspace(status, path.join(dir, "nope")), undefined);
      const md = statusMarkdown(status, real);
      assert.match(md, /\*\*.*real\*\* \(this window\) \| ready \| ws \| 1\.2 s \| 4 \| 1 \|/);
      assert.match(md, /\| \/other \| ready/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("processes", () => {
  test("ages in their largest whole unit", () => {
    const now = new Date("2026-12-03T12:00:00Z");
    const ago = (s: number) => age(new Date(now.getTime() - s * 1000), now);
    assert.deepEqual([ago(0), ago(59), ago(60), ago(3599), ago(3600), ago(86399), ago(86400), ago(-5)], ["0s", "59s", "1m", "59m", "1h", "23h", "1d", "0s"]);
  });

  test("a quick-pick line: the command, its id and state, how long it has run", () => {
    const now = new Date("2026-12-03T12:00:00Z");
    const p = { processId: 3, command: "npm run dev", tty: true, startedAt: "2026-12-03T12:04:00+01:00", running: true };
    assert.deepEqual(processLabel(p, now), { label: "npm run dev", description: "3 · running", detail: "running · started 56m ago · terminal" });
    assert.deepEqual(processLabel({ ...p, tty: false, running: false, startedAt: "2026-12-03T11:59:58.123456789Z" }, now), {
      label: "npm run dev",
      description: "3 · exited",
      detail: "exited · started 1s ago",
    });
  });
});

describe("inline diff", () => {
  test("a changed line between unchanged ones", () => {
    const d = diffLines("a\nb\nc\n", "a\nB\nc\n");
    assert.deepEqual(d, [
      { op: " ", text: "a" },
      { op: "-", text: "b" },
      { op: "+", text: "B" },
      { op: " ", text: "c" },
    ]);
    assert.deepEqual(diffStats(d), { added: 1, removed: 1 });
  });

  test("insertions and deletions align on the common lines", () => {
    const d = diffLines("1\n2\n3\n4\n5\n", "0\n1\n3\n4\n4.5\n5\n");
    assert.deepEqual(
      d.map((l) => l.op + l.text),
      ["+0", " 1", "-2", " 3", " 4", "+4.5", " 5"],
    );
  });

  test("a new file is all additions", () => {
    const d = diffLines(null, "x\ny");
    assert.deepEqual(diffStats(d), { added: 2, removed: 0 });
  });

  test("context folds long unchanged runs", () => {
    const old = Array.from({ length: 20 }, (_, i) => `l${i}`).join("\n");
    const neu = old.replace("l10", "L10");
    const h = withContext(diffLines(old, neu), 2);
    assert.deepEqual(h[0], { op: "…", count: 8 });
    assert.deepEqual(h.at(-1), { op: "…", count: 7 });
    assert.equal(h.filter((l) => l.op !== "…").length, 6);
  });
});

describe("screenshot comparison", () => {
  test("decodes a Chromium PNG and counts differing pixels", async () => {
    const { readFileSync } = await import("node:fs");
    const { decodePng, differingPixels } = await import("./png.js");
    const { PACKAGE_DIR } = await import("./helpers.js");
    const shot = decodePng(readFileSync(path.join(PACKAGE_DIR, "screenshot.png")));
    assert.equal(shot.width, 420);
    assert.equal(shot.height, 980);
    assert.equal(differingPixels(shot, shot), 0);
    const copy = { ...shot, data: Buffer.from(shot.data) };
    copy.data[0] ^= 0xff;
    copy.data[shot.data.length - 1] ^= 0x01;
    assert.equal(differingPixels(shot, copy), 2);
    assert.equal(differingPixels(shot, { ...shot, height: 1 }), Infinity);
  });
});

describe("the transcript kept for a re-created chat view", () => {
  const chunk = (sessionUpdate: string, text: string, messageId?: string): HostMessage => ({
    type: "update",
    update: { sessionUpdate, content: { type: "text", text }, ...(messageId ? { messageId } : {}) },
  });

  test("consecutive thought chunks join into one, before the answer that follows", () => {
    const history: HostMessage[] = [];
    const stream: HostMessage[] = [
      { type: "reset", sessionId: "s1" },
      { type: "userPrompt", text: "hi" },
      chunk("agent_thought_chunk", "**Greeting**\n\nThe user"),
      chunk("agent_thought_chunk", " says hi."),
      { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "c1", title: "list_dir" } },
      chunk("agent_thought_chunk", "Now "),
      chunk("agent_thought_chunk", "answer."),
      chunk("agent_message_chunk", "Hello"),
      chunk("agent_message_chunk", " there"),
      chunk("agent_thought_chunk", "Done."),
    ];
    for (const m of stream) appendToHistory(history, m);
    const shown = history.map((m) =>
      m.type === "update" ? `${m.update.sessionUpdate}:${(m.update.content as { text?: string } | undefined)?.text ?? ""}` : m.type,
    );
    assert.deepEqual(shown, [
      "reset",
      "userPrompt",
      "agent_thought_chunk:**Greeting**\n\nThe user says hi.",
      "tool_call:",
      "agent_thought_chunk:Now answer.",
      "agent_message_chunk:Hello there",
      "agent_thought_chunk:Done.",
    ]);
  });

  test("chunks of different messages stay apart; a reset starts over", () => {
    const history: HostMessage[] = [];
    appendToHistory(history, chunk("agent_thought_chunk", "a", "m1"));
    appendToHistory(history, chunk("agent_thought_chunk", "b", "m2"));
    assert.equal(history.length, 2);
    appendToHistory(history, { type: "reset", sessionId: "s2" });
    assert.deepEqual(history, [{ type: "reset", sessionId: "s2" }]);
  });
});

describe("thought headers", () => {
  test("the bold title of a reasoning summary, else its first words", () => {
    assert.equal(thoughtPreview("**Reading the file**\n\nThe user wants a.txt."), "Reading the file");
    assert.equal(thoughtPreview("  The user wants\n`a.txt`   read."), "The user wants a.txt read.");
    assert.equal(thoughtPreview("**Unclosed title and more"), "Unclosed title and more");
    assert.equal(thoughtPreview(""), "");
  });

  test("long ones are cut at a word", () => {
    const text = "one two three four five six seven eight nine ten";
    assert.equal(thoughtPreview(text, 20), "one two three four…");
    assert.equal(thoughtPreview(text, 18), "one two three four…", "a cut right before a space keeps the whole word");
    assert.equal(thoughtPreview("x".repeat(30), 10), "xxxxxxxxxx…");
  });
});

describe("config options", () => {
  test("select options become pickers, grouped values flattened; booleans and malformed ones are left out", () => {
    const info = configInfo([
      { type: "select", id: "model", name: "Model", category: "model", currentValue: "o3", options: [{ value: "o3", name: "o3", description: "o-series" }, { value: "gpt-4o", name: "" }] },
      {
        type: "select",
        id: "thought_level",
        name: "Effort",
        currentValue: "high",
        options: [{ group: "g", name: "G", options: [{ value: "low", name: "Low" }, { value: "high", name: "High" }] }],
      },
      { type: "boolean", id: "fast", name: "Fast", currentValue: true },
      { type: "select", id: "broken", name: "Broken" } as never,
    ]);
    assert.deepEqual(info, [
      { id: "model", name: "Model", category: "model", description: null, current: "o3", values: [{ value: "o3", name: "o3", description: "o-series" }, { value: "gpt-4o", name: "gpt-4o", description: null }] },
      { id: "thought_level", name: "Effort", category: null, description: null, current: "high", values: [{ value: "low", name: "Low", description: null }, { value: "high", name: "High", description: null }] },
    ]);
    assert.equal(pickerOption(info, "model")?.id, "model");
    assert.equal(pickerOption(info, "thought_level")?.id, "thought_level", "found by its id when it has no category");
    assert.deepEqual(configInfo(undefined), []);
  });

  test("context left is the share of the window not used, rounded; nothing for a usage without a window", () => {
    assert.equal(contextLeft(76_000, 200_000), "62% context left");
    assert.equal(contextLeft(0, 272_000), "100% context left");
    assert.equal(contextLeft(300_000, 200_000), "0% context left");
    assert.equal(contextLeft(10, 0), "");
    assert.equal(contextLeft(undefined, 100), "");
  });
});
