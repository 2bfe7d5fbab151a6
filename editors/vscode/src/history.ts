// The transcript the extension keeps for the chat view, to replay into a view
// that is created again (the side bar was closed and reopened): the recorded
// HostMessages, with streamed text joined so a long session replays in few
// messages.
import type { HostMessage } from "./protocol.js";

/** The updates whose text chunks are joined: the answer and the model's thoughts. */
const JOINED = new Set(["agent_message_chunk", "agent_thought_chunk"]);

/**
 * Appends `m` to `history`. A text chunk right after one of the same kind and
 * message is joined onto it; a reset starts the history again.
 */
export function appendToHistory(history: HostMessage[], m: HostMessage): void {
  if (m.type === "reset") history.length = 0;
  const last = history[history.length - 1];
  if (
    m.type === "update" &&
    last?.type === "update" &&
    JOINED.has(m.update.sessionUpdate) &&
    m.update.sessionUpdate === last.update.sessionUpdate &&
    (m.update.messageId ?? null) === (last.update.messageId ?? null)
  ) {
    const a = last.update.content as { type?: string; text?: string };
    const b = m.update.content as { type?: string; text?: string };
    if (a?.type === "text" && b?.type === "text") {
      history[history.length - 1] = {
        type: "update",
        update: { ...last.update, content: { type: "text", text: (a.text ?? "") + (b.text ?? "") } },
      };
      return;
    }
  }
  history.push(m);
}
