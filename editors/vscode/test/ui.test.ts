// The chat webview in headless Chromium: the page the extension serves, with
// VS Code's webview API stubbed, fed a recorded turn (streamed Markdown, a tool
// call, an edit with a diff, a permission prompt). DOM assertions, and a
// screenshot written to a temp dir and copied to editors/vscode/screenshot.png.
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import MarkdownIt from "markdown-it";
import { chromium, type BrowserContext, type Page } from "playwright-core";

import { HearthClient } from "../src/acp/client.js";
import type { AcpUpdate, HostMessage, ViewMessage } from "../src/protocol.js";
import { renderChatHtml } from "../src/webview/html.js";
import { PACKAGE_DIR, hearthBinary, isolatedEnv, startSim, stopDaemonOf, thoughtRuns, within } from "./helpers.js";
import { decodePng, differingPixels } from "./png.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const FIXTURE = JSON.parse(readFileSync(path.join(PACKAGE_DIR, "test", "fixtures", "recorded-turn.json"), "utf8")) as {
  part1: HostMessage[];
  part2: HostMessage[];
};

declare global {
  interface Window {
    __posted: ViewMessage[];
  }
}

describe("chat webview in headless Chromium", () => {
  let tmp: string;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  async function feed(msgs: HostMessage[]): Promise<void> {
    await page.evaluate((ms) => {
      for (const m of ms) window.postMessage(m, "*");
    }, msgs);
  }

  /** Waits for the send button to read `label` (Send, or Steer while a turn runs). */
  async function sendLabel(label: string): Promise<void> {
    await page.waitForFunction((l) => document.getElementById("btn-send")?.textContent === l, label, { timeout: 5_000 });
  }

  /** `markdown` as the view renders it (markdown-it), serialized by the page. */
  async function renderedMarkdown(markdown: string): Promise<string> {
    const html = new MarkdownIt({ html: false, linkify: true, breaks: false }).render(markdown);
    return page.evaluate((h) => {
      const t = document.createElement("template");
      t.innerHTML = h;
      return t.innerHTML;
    }, html);
  }

  /** The first message of `type` the view posted (since the last clear), waiting for it. */
  async function waitPosted(type: ViewMessage["type"]): Promise<ViewMessage> {
    const handle = await page
      .waitForFunction((t) => window.__posted.find((m) => m.type === t) ?? null, type, { timeout: 5_000 })
      .catch((e: unknown) => {
        throw new Error(`the view posted no ${type}: ${String(e)}`);
      });
    return (await handle.jsonValue()) as ViewMessage;
  }

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing (apt-get install -y chromium)`);
    const script = path.join(PACKAGE_DIR, "dist", "webview.js");
    assert.ok(existsSync(script), `${script} is missing: run \`node build.mjs\` first`);
    tmp = mkdtempSync(path.join(os.tmpdir(), "hearth-ui-"));
    const html = renderChatHtml({
      scriptUri: pathToFileURL(script).toString(),
      styleUri: pathToFileURL(path.join(PACKAGE_DIR, "media", "chat.css")).toString(),
      cspSource: "file:",
    });
    writeFileSync(path.join(tmp, "chat.html"), html);
    context = await chromium.launchPersistentContext(path.join(tmp, "profile"), {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
      viewport: { width: 420, height: 980 },
      deviceScaleFactor: 1,
      timeout: 30_000,
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    page.on("console", (m) => {
      if (m.type() === "error") pageErrors.push(m.text());
    });
    await page.addInitScript(() => {
      window.__posted = [];
      (window as unknown as { acquireVsCodeApi: () => unknown }).acquireVsCodeApi = () => ({
        postMessage: (m: ViewMessage) => window.__posted.push(JSON.parse(JSON.stringify(m))),
        getState: () => undefined,
        setState: () => undefined,
      });
    });
    await page.goto(pathToFileURL(path.join(tmp, "chat.html")).toString());
    await waitPosted("ready");
  });

  after(async () => {
    await context?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test("the page loads its script and style under the CSP", async () => {
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, "rgb(30, 30, 30)", "chat.css applied");
    assert.equal(await page.locator("#btn-cancel").isHidden(), true);
    assert.equal(await page.locator("#empty").isVisible(), true);
  });

  test("a recorded turn renders: streamed Markdown, tool calls, diff, permission prompt", async () => {
    await feed(FIXTURE.part1);
    const perm = page.locator('.permission[data-request-id="perm-1"]');
    await perm.waitFor({ state: "visible", timeout: 5_000 });

    assert.equal(await page.locator("#session-title").textContent(), "Session ses_3f9c2a7d…");
    assert.equal(await page.locator("#mode-select").inputValue(), "ask");
    assert.equal(await page.locator("#mode-select option").count(), 4);
    assert.equal(await page.locator("#connection").textContent(), "ready · 1.4 s");
    assert.equal(await page.locator("body").getAttribute("class"), "busy");
    assert.equal(await page.locator("#btn-cancel").isVisible(), true);
    assert.equal(await page.locator("#btn-send").isEnabled(), true, "the prompt box stays usable: Enter steers or queues");
    assert.equal(await page.locator("#btn-queue").isVisible(), true);

    const user = page.locator(".message.user .body");
    assert.equal(await user.count(), 1);
    assert.equal(await user.textContent(), "Why does `hearth status` count full requests? And fix the greeting in a.txt.");

    // The read tool call went pending → in progress → completed in place.
    const read = page.locator('.tool[data-tool-call-id="call_7d1e0b"]');
    assert.equal(await read.count(), 1);
    assert.equal(await read.getAttribute("data-status"), "completed");
    assert.equal(await read.locator(".tool-title").textContent(), "Read session/plan.go");
    assert.equal(await read.locator(".tool-icon").textContent(), "✓");
    assert.match((await read.locator(".tool-output").textContent()) ?? "", /func \(c \*Conversation\) plan/);
    assert.equal(await read.locator(".tool-locations a").textContent(), "/home/dev/hearth/session/plan.go");

    // The streamed answer, rendered as Markdown once its chunks are in.
    const answer = page.locator(".message.agent .body").first();
    await page.waitForFunction(() => !!document.querySelector(".message.agent .body pre code"), null, { timeout: 5_000 });
    assert.equal(await answer.locator("strong").textContent(), "in full");
    assert.equal(await answer.locator("ol > li").count(), 3);
    assert.deepEqual(await answer.locator(":not(pre) > code").allTextContents(), ["instructions", "tools", "a.txt"]);
    assert.match((await answer.locator("pre code").textContent()) ?? "", /^hearth inspect ses_3f9c2a7d --json \| jq/);
    assert.equal(await page.locator(".message.agent.streaming").count(), 1, "the answer is marked as streaming");

    // The edit: a pending tool call with the permission prompt inside it, the
    // prompt showing the diff it asks about (once: not again in the tool call).
    const edit = page.locator('.tool[data-tool-call-id="call_a41f9c"]');
    assert.equal(await edit.getAttribute("data-status"), "pending");
    assert.equal(await edit.locator(".permission").count(), 1, "the prompt sits in its tool call");
    assert.equal(await edit.locator(".diff").count(), 1, "the diff is shown once");
    const asked = perm.locator(".permission-subject .diff");
    assert.equal(await asked.locator(".diff-path").textContent(), "/home/dev/hearth/a.txt");
    assert.equal(await asked.locator(".diff-added").textContent(), "+1");
    assert.equal(await asked.locator(".diff-removed").textContent(), "−1");
    assert.deepEqual(await asked.locator(".diff-del").allTextContents(), ["-hello from a.txt"]);
    assert.deepEqual(await asked.locator(".diff-add").allTextContents(), ["+Hello from a.txt!"]);
    assert.deepEqual(await perm.locator(".permission-buttons button").allTextContents(), ["Allow once", "Always allow", "Reject", "Always reject"]);
    assert.equal(await perm.locator("button.allow").count(), 2);
    assert.equal(await perm.locator("button.reject").count(), 2);
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Allow once", "the first option has focus");

    // The model's thoughts: one collapsed block per response, before what it led to.
    const thoughts = page.locator(".message.thought");
    assert.equal(await thoughts.count(), 2);
    assert.deepEqual(await thoughts.evaluateAll((els) => els.map((e) => e.tagName === "DETAILS" && !(e as HTMLDetailsElement).open)), [true, true]);
    assert.deepEqual(await thoughts.locator("summary").allTextContents(), [
      "Thought · Finding where full requests are counted",
      "Thought · Explaining the planner's choice",
    ]);
    assert.equal(await thoughts.first().locator(".body").isVisible(), false, "collapsed");
    const runs = thoughtRuns(FIXTURE.part1);
    assert.equal(runs.length, 2);
    for (const [i, text] of runs.entries()) {
      assert.equal(await thoughts.nth(i).locator(".body").innerHTML(), await renderedMarkdown(text), `thought ${i}: all its chunks`);
    }

    // The order on screen follows the stream.
    const order = await page.evaluate(() =>
      [...document.querySelectorAll("#transcript > :not(#empty)")].map((e) => e.className.split(" ").slice(0, 2).join(".")),
    );
    assert.deepEqual(order, ["message.user", "message.thought", "tool.status-completed", "message.thought", "message.agent", "tool.status-pending"]);

    const shot = path.join(tmp, "screenshot.png");
    await page.screenshot({ path: shot, fullPage: false });
    assert.ok(statSync(shot).size > 10_000, "a real screenshot");
    const fresh = decodePng(readFileSync(shot));
    assert.deepEqual([fresh.width, fresh.height], [420, 980]);
    // Rewrite the committed copy only when the view changed: Chromium's
    // anti-aliasing varies by a few pixels from run to run.
    const committed = path.join(PACKAGE_DIR, "screenshot.png");
    const changed = !existsSync(committed) || differingPixels(decodePng(readFileSync(committed)), fresh) > 200;
    if (changed) copyFileSync(shot, committed);
  });

  test("the permission buttons answer, and the turn completes", async () => {
    await page.locator('.permission[data-request-id="perm-1"] button[data-option-id="allow_once"]').click();
    const answer = await waitPosted("permission");
    assert.deepEqual(answer, { type: "permission", requestId: "perm-1", optionId: "allow_once" });
    assert.equal(await page.locator(".permission button:disabled").count(), 4, "no second answer");

    await feed(FIXTURE.part2);
    await page.locator(".permission.resolved").waitFor({ timeout: 5_000 });
    assert.equal(await page.locator(".permission-outcome").textContent(), "You chose: Allow once");
    const edit = page.locator('.tool[data-tool-call-id="call_a41f9c"]');
    await page.waitForFunction(() => !document.body.classList.contains("busy"), null, { timeout: 5_000 });
    assert.equal(await edit.getAttribute("data-status"), "completed");
    assert.equal(await edit.locator(".diff").count(), 1, "the diff stays after the status update");
    assert.equal(await edit.locator(".permission .diff").count(), 0, "answered: the tool call shows its diff, the card only the answer");
    assert.equal(await page.locator(".message.agent").count(), 2);
    assert.equal((await page.locator(".message.agent .body").last().textContent())?.trim(), "Done: the greeting is capitalised and ends with !.");
    assert.equal(await page.locator(".message.agent .body").last().locator("code").textContent(), "!");
    assert.equal(await page.locator(".streaming").count(), 0);
    assert.equal(await page.locator("#btn-cancel").isHidden(), true);
    assert.equal(await page.locator("#btn-send").isEnabled(), true);
    assert.equal(await page.locator("#connection").textContent(), "ready · 2.1 s");
  });

  test("the view's controls post their messages", async () => {
    await page.evaluate(() => (window.__posted = []));
    await page.locator('.tool[data-tool-call-id="call_a41f9c"] .open-diff').click();
    assert.deepEqual(await waitPosted("openDiff"), {
      type: "openDiff",
      path: "/home/dev/hearth/a.txt",
      oldText: "hello from a.txt\nsecond line\nthird line\n",
      newText: "Hello from a.txt!\nsecond line\nthird line\n",
    });
    await page.locator('.tool[data-tool-call-id="call_7d1e0b"] .tool-locations a').click();
    assert.deepEqual(await waitPosted("openFile"), {
      type: "openFile",
      path: "/home/dev/hearth/session/plan.go",
      line: null,
    });

    await page.locator("#input").fill("read a.txt\nplease");
    await page.locator("#input").press("Enter");
    assert.deepEqual(await waitPosted("prompt"), { type: "prompt", text: "read a.txt\nplease" });
    assert.equal(await page.locator("#input").inputValue(), "");

    await feed([{ type: "turnStarted" }]);
    await page.locator("#btn-cancel").click();
    await waitPosted("cancel");
    await feed([{ type: "turnEnded", stopReason: "cancelled" }]);
    await page.locator(".turn-end").waitFor({ timeout: 5_000 });
    assert.equal(await page.locator(".turn-end").textContent(), "Cancelled.");

    await page.locator("#mode-select").selectOption("full-auto");
    assert.deepEqual(await waitPosted("setMode"), { type: "setMode", modeId: "full-auto" });
    assert.equal(await page.locator("#mode-select").inputValue(), "ask", "the picker waits for the agent's confirmation");
    await feed([{ type: "update", update: { sessionUpdate: "current_mode_update", currentModeId: "full-auto" } }]);
    await page.waitForFunction(() => (document.getElementById("mode-select") as HTMLSelectElement).value === "full-auto", null, { timeout: 5_000 });

    await page.locator("#btn-new").click();
    await waitPosted("newSession");
    await page.locator("#btn-history").click();
    await waitPosted("listSessions");
    await feed([
      {
        type: "sessions",
        current: "ses_3f9c2a7d41b08e5c9a6d1f20",
        sessions: [
          { sessionId: "ses_3f9c2a7d41b08e5c9a6d1f20", cwd: "/home/dev/hearth", updatedAt: "2026-11-29T20:20:23Z" },
          { sessionId: "ses_0a1b2c3d4e5f60718293a4b5", cwd: "/home/dev/hearth", title: "Refactor the planner", updatedAt: "2026-11-28T09:00:00Z" },
        ],
      },
    ]);
    await page.locator("#sessions").waitFor({ state: "visible", timeout: 5_000 });
    assert.deepEqual(await page.locator("#session-list .session-name").allTextContents(), ["Session ses_3f9c2a7d…", "Refactor the planner"]);
    assert.equal(await page.locator("#session-list li.current").count(), 1);
    await page.locator("#session-list li", { hasText: "Refactor the planner" }).click();
    assert.deepEqual(await waitPosted("loadSession"), {
      type: "loadSession",
      sessionId: "ses_0a1b2c3d4e5f60718293a4b5",
    });
    assert.equal(await page.locator("#sessions").isHidden(), true);
  });

  test("the model and effort pickers post set_config_option and show what the agent confirms; context left; a command's output as it comes", async () => {
    await page.evaluate(() => (window.__posted = []));
    const options = (model: string, effort: string | null): HostMessage => ({
      type: "config",
      options: [
        { id: "mode", name: "Mode", category: "mode", description: null, current: "ask", values: [{ value: "ask", name: "Ask", description: null }] },
        {
          id: "model",
          name: "Model",
          category: "model",
          description: "The model that answers",
          current: model,
          values: ["gpt-5.3-codex", "o3", "gpt-4o"].map((v) => ({ value: v, name: v, description: null })),
        },
        ...(effort
          ? [{ id: "thought_level", name: "Reasoning effort", category: "thought_level", description: null, current: effort, values: ["low", "medium", "high"].map((v) => ({ value: v, name: v[0].toUpperCase() + v.slice(1), description: null })) }]
          : []),
      ],
    });
    await feed([{ type: "reset", sessionId: "ses_pickers", title: null }, options("gpt-5.3-codex", "medium")]);
    await page.locator("#model-row").waitFor({ state: "visible", timeout: 5_000 });
    assert.deepEqual(await page.locator("#model-select option").allTextContents(), ["gpt-5.3-codex", "o3", "gpt-4o"]);
    assert.deepEqual(await page.locator("#effort-select option").allTextContents(), ["Low", "Medium", "High"]);
    assert.equal(await page.locator("#effort-select").inputValue(), "medium");
    assert.equal(await page.locator("#context-left").isHidden(), true, "no usage yet");

    await page.locator("#model-select").selectOption("gpt-4o");
    assert.deepEqual(await waitPosted("setConfigOption"), { type: "setConfigOption", configId: "model", value: "gpt-4o" });
    assert.equal(await page.locator("#model-select").inputValue(), "gpt-5.3-codex", "the picker waits for the agent's confirmation");
    // The agent's answer: gpt-4o does not reason, so no effort picker.
    await feed([options("gpt-4o", null)]);
    await page.waitForFunction(() => (document.getElementById("model-select") as HTMLSelectElement).value === "gpt-4o", null, { timeout: 5_000 });
    assert.equal(await page.locator("#effort-select").isHidden(), true);
    assert.equal(await page.locator("#effort-label").isHidden(), true);
    // Another editor's choice, as config_option_update told it: the extension posts it the same way.
    await feed([options("o3", "high")]);
    await page.waitForFunction(() => (document.getElementById("effort-select") as HTMLSelectElement).value === "high", null, { timeout: 5_000 });
    await page.evaluate(() => (window.__posted = []));
    await page.locator("#effort-select").selectOption("low");
    assert.deepEqual(await waitPosted("setConfigOption"), { type: "setConfigOption", configId: "thought_level", value: "low" });

    await feed([{ type: "update", update: { sessionUpdate: "usage_update", used: 76_000, size: 200_000 } }]);
    await page.locator("#context-left").waitFor({ state: "visible", timeout: 5_000 });
    assert.equal(await page.locator("#context-left").textContent(), "62% context left");
    assert.match((await page.locator("#context-left").getAttribute("title")) ?? "", /76,000 of 200,000 tokens/);

    // A running command: each update's output replaces the last; while it runs the last lines show.
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    const out = (text: string, status?: string): HostMessage => ({
      type: "update",
      update: { sessionUpdate: "tool_call_update", toolCallId: "call_run", ...(status ? { status } : {}), content: [{ type: "content", content: { type: "text", text } }] },
    });
    await feed([
      { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "call_run", title: "Run make test", kind: "execute", status: "pending" } },
      { type: "update", update: { sessionUpdate: "tool_call_update", toolCallId: "call_run", status: "in_progress", rawInput: { command: "make test" } } },
      out("line 1\n"),
    ]);
    const tool = page.locator('.tool[data-tool-call-id="call_run"]');
    await page.waitForFunction(() => document.querySelector('.tool[data-tool-call-id="call_run"] .tool-output')?.textContent === "line 1\n", null, { timeout: 5_000 });
    await feed([out(lines(30))]);
    await page.waitForFunction(() => document.querySelector('.tool[data-tool-call-id="call_run"] .tool-output.live')?.textContent?.startsWith("line 20\n") ?? false, null, { timeout: 5_000 });
    assert.equal(await tool.locator(".tool-more summary").textContent(), "19 earlier lines");
    assert.equal(await tool.locator(".tool-output").count(), 2, "the earlier lines folded, the last ones shown: no other copy");
    // The result, in the layout the daemon sends it (the model's).
    await feed([out("Exit code: 0\nWall time: 0.4 seconds\nOutput:\n" + lines(30), "completed")]);
    await page.waitForFunction(() => document.querySelector('.tool[data-tool-call-id="call_run"]')?.getAttribute("data-status") === "completed", null, { timeout: 5_000 });
    assert.match((await tool.locator(".tool-output").first().textContent()) ?? "", /^Exit code: 0\nWall time: 0\.4 seconds\nOutput:\nline 1\n/, "once done, the result from its start");
    await feed([{ type: "reset", sessionId: "ses_after", title: null }]);
    await page.waitForFunction(() => document.getElementById("context-left")?.hidden === true, null, { timeout: 5_000 });
    assert.deepEqual(pageErrors, [], "no errors in the page");
  });

  test("a pasted image is attached, sent with the prompt, and images show in the transcript", async () => {
    await page.evaluate(() => (window.__posted = []));
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    const paste = (b64: string, type: string) =>
      page.evaluate(
        ([data, mime]) => {
          const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
          const dt = new DataTransfer();
          dt.items.add(new File([bytes], "pasted", { type: mime }));
          document.getElementById("input")!.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
        },
        [b64, type],
      );
    await feed([{ type: "turnEnded", stopReason: "end_turn" }]);
    await paste(png, "image/png");
    const chip = page.locator("#attachments .attachment img");
    await chip.waitFor({ state: "visible", timeout: 5_000 });
    assert.equal(await chip.getAttribute("src"), `data:image/png;base64,${png}`);
    assert.equal(await chip.evaluate((img) => (img as HTMLImageElement).naturalWidth), 1, "the CSP lets the image load");

    // A type the model does not take is refused at once, and not attached.
    await paste(png, "image/bmp");
    await page.locator("#error").waitFor({ state: "visible", timeout: 5_000 });
    assert.match((await page.locator("#error-text").textContent()) ?? "", /PNG, JPEG, GIF and WebP.*image\/bmp/);
    assert.equal(await page.locator("#attachments .attachment").count(), 1);

    await page.locator("#input").fill("what is this");
    await page.locator("#input").press("Enter");
    assert.deepEqual(await waitPosted("prompt"), { type: "prompt", text: "what is this", images: [{ mimeType: "image/png", data: png }] });
    assert.equal(await page.locator("#attachments").isHidden(), true, "sent: the composer is empty again");

    // An image alone is a prompt too.
    await page.evaluate(() => (window.__posted = []));
    await paste(png, "image/png");
    await chip.waitFor({ state: "visible", timeout: 5_000 });
    await page.locator("#btn-send").click();
    assert.deepEqual(await waitPosted("prompt"), { type: "prompt", text: "", images: [{ mimeType: "image/png", data: png }] });

    // The transcript shows the user's image and an image a tool returned.
    await feed([
      { type: "userPrompt", text: "what is this", images: [{ mimeType: "image/png", data: png }] },
      { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "call_img", title: "Read shot.png", kind: "read", status: "pending" } },
      {
        type: "update",
        update: {
          sessionUpdate: "tool_call_update",
          toolCallId: "call_img",
          status: "completed",
          content: [
            { type: "content", content: { type: "text", text: "shot.png: PNG image, 1×1 pixels" } },
            { type: "content", content: { type: "image", mimeType: "image/png", data: png } },
          ],
        },
      },
      { type: "update", update: { sessionUpdate: "user_message_chunk", content: { type: "image", mimeType: "text/html", data: "PHNjcmlwdD4=" } } },
    ]);
    const toolImg = page.locator('.tool[data-tool-call-id="call_img"] img.tool-image');
    await toolImg.waitFor({ state: "visible", timeout: 5_000 });
    assert.equal(await toolImg.getAttribute("src"), `data:image/png;base64,${png}`);
    const userImg = page.locator(".message.user img.message-image").last();
    assert.equal(await userImg.getAttribute("src"), `data:image/png;base64,${png}`);
    assert.equal(await page.locator('img[src^="data:text"]').count(), 0, "only image types are shown");
  });

  test("errors show in a banner with their action; a reset clears the transcript", async () => {
    await page.evaluate(() => (window.__posted = []));
    await feed([
      {
        type: "error",
        message: "The hearth daemon went away: hearth acp exited with code 0. It is restarted on your next action.",
        action: { label: "Show log", command: "showOutput" },
      },
      { type: "connection", state: "disconnected", detail: "gone" },
    ]);
    await page.locator("#error").waitFor({ state: "visible", timeout: 5_000 });
    assert.match((await page.locator("#error-text").textContent()) ?? "", /daemon went away/);
    assert.equal(await page.locator("#connection").textContent(), "disconnected");
    await page.locator("#error-action").click();
    assert.deepEqual(await waitPosted("command"), { type: "command", command: "showOutput" });
    await feed([{ type: "turnStarted" }]);
    await page.locator("#error").waitFor({ state: "hidden", timeout: 5_000 });

    await feed([{ type: "reset", sessionId: "ses_0a1b2c3d4e5f60718293a4b5", title: "Refactor the planner" }]);
    await page.waitForFunction(() => document.querySelectorAll("#transcript .message, #transcript .tool").length === 0, null, { timeout: 5_000 });
    assert.equal(await page.locator("#session-title").textContent(), "Refactor the planner");
    assert.equal(await page.locator("#empty").isVisible(), true);
    assert.equal(await page.locator("#btn-send").isEnabled(), true);
  });

  test("the permission card shows the diff or the command it asks about, even before its tool call", async () => {
    const options = FIXTURE.part1.flatMap((m) => (m.type === "permission" ? m.options : []));
    const perm = (requestId: string, extra: Partial<Extract<HostMessage, { type: "permission" }>>): HostMessage => ({
      type: "permission",
      requestId,
      title: "?",
      options,
      ...extra,
    });
    await feed([{ type: "reset", sessionId: "ses_cards", title: null }, { type: "turnStarted" }]);

    // A command whose permission request comes before its tool call (the
    // daemon's notification can follow its request): the card says it, then
    // moves into the tool call when that arrives, which does not repeat it.
    await feed([
      perm("perm-cmd", { title: "Run rm -rf build && make", toolCallId: "call_sh", kind: "execute", content: [{ type: "content", content: { type: "text", text: "$ rm -rf build && make" } }], rawInput: { command: "rm -rf build && make" } }),
    ]);
    const cmdCard = page.locator('.permission[data-request-id="perm-cmd"]');
    await cmdCard.waitFor({ state: "visible", timeout: 5_000 });
    assert.deepEqual(await cmdCard.locator(".permission-subject .permission-command").allTextContents(), ["$ rm -rf build && make"]);
    await feed([
      { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "call_sh", title: "Run rm -rf build && make", kind: "execute", status: "pending", rawInput: { command: "rm -rf build && make" } } },
      { type: "update", update: { sessionUpdate: "tool_call_update", toolCallId: "call_sh", content: [{ type: "content", content: { type: "text", text: "$ rm -rf build && make" } }] } },
    ]);
    const sh = page.locator('.tool[data-tool-call-id="call_sh"]');
    await sh.locator(".permission").waitFor({ timeout: 5_000 });
    assert.equal(await page.locator('#transcript > .permission[data-request-id="perm-cmd"]').count(), 0, "the card moved into its tool call");
    // The tool call's title, the card's title and the card's command: no fourth copy from the tool call's content.
    assert.equal(((await sh.textContent()) ?? "").split("rm -rf build && make").length - 1, 3);
    assert.equal(await sh.locator(".tool-output, .tool-input").count(), 0);

    // Another agent's command with no content: its rawInput.command.
    await feed([perm("perm-raw", { title: "terminal", toolCallId: "call_raw", kind: "execute", rawInput: { command: "make test" } })]);
    const rawCard = page.locator('.permission[data-request-id="perm-raw"]');
    await rawCard.waitFor({ state: "visible", timeout: 5_000 });
    assert.equal(await rawCard.locator(".permission-command").textContent(), "$ make test");

    // A new file: the whole text, as added lines.
    await feed([
      perm("perm-new", { title: "Write notes/todo.md", toolCallId: "call_new", kind: "edit", content: [{ type: "diff", path: "/home/dev/hearth/notes/todo.md", newText: "# To do\n- ship it\n" }] }),
    ]);
    const newCard = page.locator('.permission[data-request-id="perm-new"]');
    await newCard.waitFor({ state: "visible", timeout: 5_000 });
    assert.equal(await newCard.locator(".diff-path").textContent(), "/home/dev/hearth/notes/todo.md");
    assert.equal(await newCard.locator(".diff-head .tool-kind").textContent(), "new file");
    assert.deepEqual(await newCard.locator(".diff-add").allTextContents(), ["+# To do", "+- ship it"]);
    await page.evaluate(() => (window.__posted = []));
    await newCard.locator(".open-diff").click();
    assert.deepEqual(await waitPosted("openDiff"), { type: "openDiff", path: "/home/dev/hearth/notes/todo.md", oldText: null, newText: "# To do\n- ship it\n" });

    // A title alone says all there is: no empty subject.
    await feed([perm("perm-bare", { title: "do something", kind: "other" })]);
    const bare = page.locator('.permission[data-request-id="perm-bare"]');
    await bare.waitFor({ state: "visible", timeout: 5_000 });
    assert.equal(await bare.locator(".permission-subject").count(), 0);

    // Answered on its own (no tool call with content): the card keeps what it asked about.
    await feed([{ type: "permissionResolved", requestId: "perm-new", outcome: "You chose: Reject" }]);
    await newCard.locator(".permission-outcome").waitFor({ timeout: 5_000 });
    assert.equal(await newCard.locator(".permission-subject .diff").count(), 1);
    await feed([{ type: "turnEnded", stopReason: "end_turn" }]);
    assert.deepEqual(pageErrors, [], "no errors in the page");
  });

  test("thought chunks: one collapsed block per thought, before what follows, with all its text", async () => {
    const thought = (text: string): HostMessage => ({ type: "update", update: { sessionUpdate: "agent_thought_chunk", content: { type: "text", text } } });
    const first = ["The user wa", "nts a.txt read; ", "I should call read_file ", "first."];
    const second = ["It says hello", " — answer now."];
    await feed([{ type: "reset", sessionId: "ses_thoughts", title: null }, { type: "userPrompt", text: "what is in a.txt?" }, { type: "turnStarted" }]);
    await feed(first.slice(0, 2).map(thought));
    const block = page.locator(".message.thought").first();
    await page.waitForFunction(() => document.querySelector(".message.thought .body")?.textContent === "The user wants a.txt read;\n", null, { timeout: 5_000 });
    assert.equal(await block.locator("summary").textContent(), "Thinking…", "the header while the thought streams");
    assert.equal(await block.evaluate((e) => (e as HTMLDetailsElement).open), false, "collapsed while streaming");

    await feed([
      ...first.slice(2).map(thought),
      { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "call_t1", title: "read_file", kind: "read", status: "completed" } },
      ...second.map(thought),
      { type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "It says hello." } } },
    ]);
    await page.waitForFunction(() => document.querySelector(".message.agent .body")?.textContent === "It says hello.\n", null, { timeout: 5_000 });
    const thoughts = page.locator(".message.thought");
    assert.equal(await thoughts.count(), 2, "consecutive chunks share a block; the tool call starts a new one");
    assert.deepEqual(await thoughts.evaluateAll((els) => els.map((e) => e.tagName === "DETAILS" && !(e as HTMLDetailsElement).open)), [true, true]);
    assert.deepEqual(await thoughts.locator(".body").allTextContents(), [first.join("") + "\n", second.join("") + "\n"]);
    assert.deepEqual(await thoughts.locator("summary").allTextContents(), [
      "Thought · The user wants a.txt read; I should call read_file first.",
      "Thought · It says hello — answer now.",
    ]);
    assert.equal(await thoughts.first().locator(".body").isVisible(), false);
    const order = await page.evaluate(() => [...document.querySelectorAll("#transcript > :not(#empty)")].map((e) => e.className.split(" ").slice(0, 2).join(".")));
    assert.deepEqual(order, ["message.user", "message.thought", "tool.status-completed", "message.thought", "message.agent"]);

    // A click on the header shows the text.
    await thoughts.first().locator("summary").click();
    assert.equal(await thoughts.first().evaluate((e) => (e as HTMLDetailsElement).open), true);
    assert.equal(await thoughts.first().locator(".body").isVisible(), true);
    assert.equal(await thoughts.nth(1).locator(".body").isVisible(), false, "the other thought stays collapsed");
    await feed([{ type: "turnEnded", stopReason: "end_turn" }]);
    await page.waitForFunction(() => !document.body.classList.contains("busy"), null, { timeout: 5_000 });

    // A replay (session/load, no turn running): the finished header at once; a thought that ends the turn is finished too.
    await feed([
      { type: "reset", sessionId: "ses_thoughts", title: null, loading: true },
      { type: "update", update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" } } },
      thought("**Greeting back**\n\nJust say hi."),
      { type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hi!" } } },
      { type: "turnStarted" },
      thought("Thinking about"),
      thought(" the next step"),
      { type: "turnEnded", stopReason: "end_turn" },
    ]);
    await page.waitForFunction(() => document.querySelectorAll(".message.thought").length === 2 && !document.body.classList.contains("busy"), null, { timeout: 5_000 });
    assert.deepEqual(await thoughts.locator("summary").allTextContents(), ["Thought · Greeting back", "Thought · Thinking about the next step"]);
    assert.deepEqual(await thoughts.evaluateAll((els) => els.map((e) => (e as HTMLDetailsElement).open)), [false, false]);
  });

  test("agent text cannot inject markup or script; links go through the extension", async () => {
    await page.evaluate(() => (window.__posted = []));
    await feed([
      {
        type: "update",
        update: {
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: 'Look: <img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script> and [the docs](https://agentclientprotocol.com/).' },
        },
      },
    ]);
    const msg = page.locator(".message.agent .body").last();
    await page.waitForFunction(() => !!document.querySelector(".message.agent .body a"), null, { timeout: 5_000 });
    assert.equal(await msg.locator("img").count(), 0);
    assert.equal(await msg.locator("script").count(), 0);
    assert.match((await msg.textContent()) ?? "", /<img src=x onerror=/);
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    const before = page.url();
    await msg.locator("a").click();
    assert.deepEqual(await waitPosted("openLink"), { type: "openLink", href: "https://agentclientprotocol.com/" });
    assert.equal(page.url(), before, "the webview did not navigate");
    assert.deepEqual(pageErrors, [], "no errors in the page");
  });

  test("control characters in tool titles, commands, paths and output show escaped; markup stays text", async () => {
    const options = FIXTURE.part1.flatMap((m) => (m.type === "permission" ? m.options : []));
    // Issue 21's command: "\r ESC[2K" would hide its start; a bidi override
    // would reorder what follows it; a newline would fake a second line.
    const command = "rm -rf important #\r\x1b[2K    $ ls -la\necho two\u202e <img src=x onerror=\"window.__pwned=3\">";
    const shown = 'rm -rf important #\\r\\x1b[2K    $ ls -la\\necho two\\u202e <img src=x onerror="window.__pwned=3">';
    await feed([
      { type: "reset", sessionId: "ses_controls", title: null },
      { type: "turnStarted" },
      { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "call_ctl", title: `Run ${command}`, kind: "execute", status: "pending", rawInput: { command } } },
      {
        type: "permission", requestId: "perm-ctl", title: `Run ${command}`, toolCallId: "call_ctl", kind: "execute", options,
        content: [{ type: "content", content: { type: "text", text: `$ ${command}` } }], rawInput: { command },
      },
      {
        type: "update",
        update: {
          sessionUpdate: "tool_call", toolCallId: "call_path", title: "Write \x1b]0;pwned\x07notes.md", kind: "edit", status: "completed",
          content: [
            { type: "diff", path: "/ws/\x1b[31mnotes.md", oldText: null, newText: "plain\n\x1b[2Jcleared\r\n" },
            { type: "content", content: { type: "text", text: "wrote\tit\n\x1b[31mred\u0085" } },
          ],
        },
      },
    ]);
    const card = page.locator('.permission[data-request-id="perm-ctl"]');
    await card.waitFor({ state: "visible", timeout: 5_000 });
    const tool = page.locator('.tool[data-tool-call-id="call_ctl"]');
    assert.equal(await tool.locator(".tool-title").textContent(), `Run ${shown}`);
    assert.equal(await card.locator(".permission-title span").textContent(), `Run ${shown}`);
    assert.deepEqual(await card.locator(".permission-command").allTextContents(), [`$ ${shown}`]);
    assert.match((await card.locator(".permission-warning").textContent()) ?? "", /control characters/);
    const written = page.locator('.tool[data-tool-call-id="call_path"]');
    await written.waitFor({ timeout: 5_000 });
    assert.equal(await written.locator(".tool-title").textContent(), "Write \\x1b]0;pwned\\x07notes.md");
    assert.equal(await written.locator(".diff-path").textContent(), "/ws/\\x1b[31mnotes.md");
    assert.deepEqual(await written.locator(".diff-add").allTextContents(), ["+plain", "+\\x1b[2Jcleared\\r"]);
    assert.equal(await written.locator(".tool-output").textContent(), "wrote\tit\n\\x1b[31mred\\u0085");
    // Nothing raw is left anywhere in the transcript, and no markup came alive.
    const text = (await page.locator("#transcript").textContent()) ?? "";
    assert.doesNotMatch(text, /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
    assert.equal(await page.locator("#transcript img[src=x]").count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    await feed([{ type: "permissionResolved", requestId: "perm-ctl", outcome: "You chose: Reject" }, { type: "turnEnded", stopReason: "end_turn" }]);
    assert.deepEqual(pageErrors, [], "no errors in the page");
  });

  test("the prompt box suggests the agent's slash commands: / lists them, Tab completes, Enter sends", async () => {
    await feed([{ type: "reset", sessionId: "ses_commands" }]);
    await page.evaluate(() => (window.__posted = []));
    const list = page.locator("#commands");
    const box = page.locator("#input");
    await box.fill("/");
    assert.equal(await list.isHidden(), true, "nothing to suggest before the agent offers commands");
    await feed([
      {
        type: "commands",
        commands: [
          { name: "compact", description: "Replace the older part of this session by a summary" },
          { name: "clear", description: "Another command" },
        ],
      },
    ]);
    await list.waitFor({ state: "visible", timeout: 5_000 });
    assert.deepEqual(await list.locator(".command-name").allTextContents(), ["/compact", "/clear"]);
    assert.equal(await list.locator(".command.selected .command-name").textContent(), "/compact");
    assert.match((await list.locator(".command").first().textContent()) ?? "", /Replace the older part of this session/);

    await box.fill("/co");
    assert.deepEqual(await list.locator(".command-name").allTextContents(), ["/compact"]);
    await box.press("Tab");
    assert.equal(await box.inputValue(), "/compact");
    assert.equal(await list.isHidden(), true, "a complete command closes the list");
    await box.press("Enter");
    assert.deepEqual(await waitPosted("prompt"), { type: "prompt", text: "/compact" });
    assert.equal(await box.inputValue(), "");

    // Arrows pick, Enter completes (it does not send an unfinished command), a click completes.
    await page.evaluate(() => (window.__posted = []));
    await box.fill("/c");
    await box.press("ArrowDown");
    assert.equal(await list.locator(".command.selected .command-name").textContent(), "/clear");
    await box.press("Enter");
    assert.equal(await box.inputValue(), "/clear");
    await box.fill("/");
    await list.locator(".command", { hasText: "/compact" }).click();
    assert.equal(await box.inputValue(), "/compact");
    assert.deepEqual(await page.evaluate(() => window.__posted.filter((m) => m.type === "prompt")), [], "nothing was sent");

    // Only a prompt that is one word starting with / is a command; Escape closes the list.
    for (const text of ["/zz", "compact", "fix /co", "/compact now"]) {
      await box.fill(text);
      assert.equal(await list.isHidden(), true, `no suggestions for ${JSON.stringify(text)}`);
    }
    await box.fill("/");
    await list.waitFor({ state: "visible", timeout: 5_000 });
    await box.press("Escape");
    assert.equal(await list.isHidden(), true, "Escape closes the list");
    await box.fill("");
    assert.deepEqual(pageErrors, [], "no errors in the page");
  });

  test("while a turn runs Enter steers and Alt+Enter or Queue queues; steering shows where it landed; a queued prompt says so", async () => {
    await feed([{ type: "reset", sessionId: "ses_steer" }, { type: "capabilities", steering: true, fork: false, forkFromTurn: false }]);
    await page.evaluate(() => (window.__posted = []));
    const box = page.locator("#input");
    assert.equal(await page.locator("#btn-queue").isHidden(), true, "no Queue without a turn");
    await sendLabel("Send");
    await feed([
      { type: "userPrompt", text: "explain the planner" },
      { type: "turnStarted" },
      { type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "The planner reads" } } },
    ]);
    await sendLabel("Steer"); // the view handles messages as they come: wait for the turn
    assert.equal(await page.locator("#btn-queue").isVisible(), true);
    await box.fill("focus on errors");
    await box.press("Enter");
    assert.deepEqual(await waitPosted("prompt"), { type: "prompt", text: "focus on errors" }, "Enter: a prompt the extension steers with");
    await page.evaluate(() => (window.__posted = []));
    await box.fill("then run the tests");
    await box.press("Alt+Enter");
    assert.deepEqual(await waitPosted("prompt"), { type: "prompt", text: "then run the tests", queue: true });
    await page.evaluate(() => (window.__posted = []));
    await box.fill("and lint");
    await page.locator("#btn-queue").click();
    assert.deepEqual(await waitPosted("prompt"), { type: "prompt", text: "and lint", queue: true });

    await feed([
      { type: "queued", text: "then run the tests", waiting: 1 },
      { type: "steered", text: "focus on errors", outcome: "injected" },
      { type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Errors first: " } } },
      { type: "steered", text: "too late", outcome: "failed" },
    ]);
    const msgs = page.locator("#transcript > .message, #transcript > .queued, #transcript > .steer-failed");
    await page.locator(".steer-failed").waitFor({ timeout: 5_000 });
    const order = await msgs.evaluateAll((els) => els.map((e) => `${e.className}: ${(e.querySelector(".body") ?? e).textContent?.trim()}`));
    assert.deepEqual(order, [
      "message user: explain the planner",
      "message agent: The planner reads",
      "queued muted: Queued: then run the tests — runs after this turn",
      "message user steer: focus on errors",
      "message agent: Errors first:",
      "steer-failed muted: Not delivered to the running turn: too late — Alt+Enter queues it.",
    ]);
    assert.equal(await page.locator(".message.user.steer .who").textContent(), "You · steering");
    await feed([{ type: "turnEnded", stopReason: "end_turn" }]);
    await sendLabel("Send");
    assert.deepEqual(pageErrors, [], "no errors in the page");
  });

  test("Restore to here on numbered prompts, live and replayed; the result card with conflicts and their diffs; rewound marks; undo and fork buttons", async () => {
    await feed([{ type: "reset", sessionId: "ses_rewind" }, { type: "capabilities", steering: true, fork: false, forkFromTurn: false }]);
    assert.equal(await page.locator("#btn-fork").isHidden(), true, "no fork unless the agent offers it");
    await feed([
      // replayed by session/load: numbered by the agent, one of them rewound before
      { type: "update", update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "write the notes" }, _meta: { "hearth/turn": 1 } } },
      { type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done." } } },
      { type: "update", update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "an old idea" }, _meta: { "hearth/turn": 2, "hearth/rewound": true } } },
      { type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Sure." } } },
      // live: the number comes with the turn's end
      { type: "userPrompt", text: "fix the typo" },
      { type: "turnStarted" },
      { type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Fixed." } } },
      { type: "turnNumber", turn: 3 },
      { type: "turnEnded", stopReason: "end_turn" },
      { type: "userPrompt", text: "/compact" },
      { type: "turnStarted" },
      { type: "turnEnded", stopReason: "end_turn" },
    ]);
    const users = page.locator(".message.user");
    await users.nth(3).waitFor({ timeout: 5_000 });
    assert.deepEqual(await users.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.turn ?? "")), ["1", "2", "3", ""], "a slash command has no number");
    assert.equal(await page.locator(".message.user .restore").count(), 3);
    assert.deepEqual(await page.locator(".message.user.rewound .body").allTextContents(), ["an old idea"]);
    await page.evaluate(() => (window.__posted = []));
    await users.nth(2).hover();
    await users.nth(2).locator(".restore").click();
    assert.deepEqual(await waitPosted("rewind"), { type: "rewind", turn: 3 });
    await page.evaluate(() => (window.__posted = []));
    await page.locator("#btn-undo").click();
    await waitPosted("undo");

    await feed([
      {
        type: "checkpoint",
        title: "Restored to before prompt 1",
        rewoundFrom: 1,
        result: {
          message: "Rewound to before prompt 1.",
          restored: ["notes.md"],
          removed: ["todo.txt"],
          conflicts: ["a.txt"],
          conflictDiffs: [{ path: "a.txt", diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-by hearth\n+the user's\n" }],
        },
      },
    ]);
    const card = page.locator(".checkpoint");
    await card.waitFor({ timeout: 5_000 });
    assert.equal(await card.locator(".who").textContent(), "Restored to before prompt 1");
    assert.equal(await card.locator(".restored .checkpoint-paths").textContent(), "notes.md");
    assert.equal(await card.locator(".removed .checkpoint-paths").textContent(), "todo.txt");
    assert.equal(await card.locator(".conflicts .checkpoint-paths").textContent(), "a.txt");
    assert.equal(await card.getAttribute("class"), "checkpoint warning");
    await card.locator(".conflict-diff summary").click();
    assert.match((await card.locator(".conflict-diff pre").textContent()) ?? "", /-by hearth\n\+the user's/);
    assert.deepEqual(await page.locator(".message.user.rewound .body").allTextContents(), ["write the notes", "an old idea", "fix the typo"]);
    assert.equal(await page.locator(".message.user.rewound .who").first().textContent(), "You · rewound");

    assert.equal(await users.nth(2).locator(".fork-here").isVisible(), false, "no Fork from here unless the agent forks from a turn");
    await feed([{ type: "capabilities", steering: true, fork: true, forkFromTurn: true }]);
    await page.locator("#btn-fork").waitFor({ state: "visible", timeout: 5_000 });
    await page.evaluate(() => (window.__posted = []));
    await page.locator("#btn-fork").click();
    assert.deepEqual(await waitPosted("fork"), { type: "fork" });
    await page.evaluate(() => (window.__posted = []));
    await users.nth(2).hover();
    await users.nth(2).locator(".fork-here").click();
    assert.deepEqual(await waitPosted("fork"), { type: "fork", turn: 3 });
    await feed([{ type: "forked", sessionId: "ses_forked0000000", from: "ses_rewind", turn: 3 }]);
    await page.locator(".forked").waitFor({ timeout: 5_000 });
    assert.equal(await page.locator("#session-title").textContent(), "Session ses_forked00…");
    assert.deepEqual(
      await page.locator(".message.user .body").allTextContents(),
      ["write the notes", "an old idea"],
      "the fork holds the conversation before prompt 3",
    );
    assert.deepEqual(pageErrors, [], "no errors in the page");
  });

  test("the real daemon's turn and its replay (hearth acp + hearth sim): thoughts collapsed, before the answer", async () => {
    const bin = hearthBinary();
    const sim = await startSim(bin);
    const env = isolatedEnv(sim);
    // What the controller posts for a session: its updates as they come.
    const client = new HearthClient({ path: bin, env: env.env, cwd: env.workspace });
    let msgs: HostMessage[] = [];
    let sessionId = "";
    client.on("update", (n) => {
      if (n.sessionId === sessionId) msgs.push({ type: "update", update: n.update as unknown as AcpUpdate });
    });

    /** Shows `stream` in a cleared view; checks its thoughts are there, collapsed, each before the text or tool call it led to. */
    const check = async (stream: HostMessage[], what: string) => {
      await feed(stream);
      await page.waitForFunction(() => !document.body.classList.contains("busy") && !!document.querySelector(".message.agent"), null, { timeout: 5_000 });
      const runs = thoughtRuns(stream);
      assert.ok(runs.length >= 1, `${what}: the daemon sent thoughts`);
      const thoughts = page.locator(".message.thought");
      assert.equal(await thoughts.count(), runs.length, `${what}: one block per thought`);
      for (const [i, text] of runs.entries()) {
        const block = thoughts.nth(i);
        assert.ok(text.trim(), `${what}: thought ${i} has text`);
        assert.equal(await block.evaluate((e) => e.tagName === "DETAILS" && !(e as HTMLDetailsElement).open), true, `${what}: thought ${i} collapsed`);
        assert.equal(await block.locator(".body").isVisible(), false);
        assert.equal(await block.locator(".body").innerHTML(), await renderedMarkdown(text), `${what}: thought ${i} text`);
        assert.match((await block.locator("summary").textContent()) ?? "", /^Thought · \S/, `${what}: thought ${i} header`);
        const next = await block.evaluate((e) => e.nextElementSibling?.className.split(" ").slice(0, 2).join(".") ?? "");
        assert.match(next, /^(message\.agent|tool\.)/, `${what}: thought ${i} comes before the answer or tool call it led to`);
      }
      const order = await page.evaluate(() => [...document.querySelectorAll("#transcript > :not(#empty)")].map((e) => e.className.split(" ")[1] ?? e.className));
      assert.ok(order.indexOf("thought") < order.indexOf("agent"), `${what}: ${order.join(" ")}`);
    };

    try {
      const s = await client.newSession(env.workspace);
      sessionId = s.sessionId;
      msgs = [{ type: "reset", sessionId }, { type: "userPrompt", text: "list the files" }, { type: "turnStarted" }];
      const res = await within(client.prompt(sessionId, "list the files"), 20_000, "the turn");
      msgs.push({ type: "turnEnded", stopReason: res.stopReason });
      await check(msgs, "live turn");

      msgs = [{ type: "reset", sessionId, loading: true }];
      await within(client.loadSession(sessionId, env.workspace), 20_000, "session/load");
      msgs.push({ type: "turnEnded", stopReason: "end_turn" });
      await check(msgs, "replay");
      assert.deepEqual(pageErrors, [], "no errors in the page");
    } finally {
      client.dispose();
      await stopDaemonOf(bin, env);
      await sim.stop();
      env.cleanup();
    }
  });

  test("the real daemon's plan (hearth sim's plan word): one checklist above the prompt, replaced whole, live and on resume", async () => {
    const bin = hearthBinary();
    const sim = await startSim(bin);
    const env = isolatedEnv(sim);
    const client = new HearthClient({ path: bin, env: env.env, cwd: env.workspace });
    let msgs: HostMessage[] = [];
    let sessionId = "";
    client.on("update", (n) => {
      if (n.sessionId === sessionId) msgs.push({ type: "update", update: n.update as unknown as AcpUpdate });
    });
    const plan = page.locator("#plan");
    /** The checklist as shown: each item's status and text. */
    const shown = async () =>
      page.evaluate(() => [...document.querySelectorAll("#plan li")].map((li) => `${(li as HTMLElement).dataset.status} ${li.textContent}`));
    const turn = async (text: string) => {
      msgs = [{ type: "userPrompt", text }, { type: "turnStarted" }];
      const res = await within(client.prompt(sessionId, text), 20_000, "the turn");
      msgs.push({ type: "turnEnded", stopReason: res.stopReason });
      await feed(msgs);
      await page.waitForFunction(() => !document.body.classList.contains("busy"), null, { timeout: 5_000 });
    };
    try {
      const s = await client.newSession(env.workspace);
      sessionId = s.sessionId;
      await feed([{ type: "reset", sessionId }]);
      assert.equal(await plan.isHidden(), true, "no plan before the agent makes one");
      await turn("plan read the code; fix the bug");
      assert.deepEqual(await shown(), ["in_progress ◐ read the code", "pending ○ fix the bug"]);
      assert.equal(await plan.locator(".who").textContent(), "Plan · 0/2 done");
      assert.equal(await page.locator("#transcript .tool").count(), 0, "update_plan is not shown as a tool call");

      await turn("plan read the code; fix the bug; run the tests");
      assert.deepEqual(await shown(), ["in_progress ◐ read the code", "pending ○ fix the bug", "pending ○ run the tests"], "replaced whole");
      assert.equal(await page.locator("#plan").count(), 1);

      await feed([{ type: "reset", sessionId, loading: true }]);
      assert.equal(await plan.isHidden(), true, "a reset clears the plan");
      msgs = [];
      await within(client.loadSession(sessionId, env.workspace), 20_000, "session/load");
      await feed([...msgs, { type: "turnEnded", stopReason: "end_turn" }]);
      assert.equal(await plan.isVisible(), true, "the resumed session shows its plan");
      assert.deepEqual(await shown(), ["in_progress ◐ read the code", "pending ○ fix the bug", "pending ○ run the tests"], "its last plan");
      assert.deepEqual(pageErrors, [], "no errors in the page");
    } finally {
      client.dispose();
      await stopDaemonOf(bin, env);
      await sim.stop();
      env.cleanup();
      await feed([{ type: "reset", sessionId: "" }]);
    }
  });
});
