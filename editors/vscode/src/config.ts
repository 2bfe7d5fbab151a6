// ACP session config options (the model, its reasoning effort, the mode) as
// the chat view's pickers take them, and what "context left" says. No
// `vscode` import: unit-tested in plain node.
import type * as acp from "@agentclientprotocol/sdk";

import type { ConfigOptionInfo } from "./protocol.js";

/**
 * The select options of `options`, their grouped values flattened; boolean
 * options (no picker for them) and malformed ones are left out.
 */
export function configInfo(options: readonly acp.SessionConfigOption[] | null | undefined): ConfigOptionInfo[] {
  const out: ConfigOptionInfo[] = [];
  for (const o of options ?? []) {
    if (o?.type !== "select" || typeof o.id !== "string" || typeof o.currentValue !== "string" || !Array.isArray(o.options)) continue;
    const values: ConfigOptionInfo["values"] = [];
    for (const v of o.options as (acp.SessionConfigSelectOption | acp.SessionConfigSelectGroup)[]) {
      const flat = "group" in v ? v.options : [v];
      for (const x of flat ?? []) {
        if (typeof x?.value === "string") values.push({ value: x.value, name: x.name || x.value, description: x.description ?? null });
      }
    }
    out.push({ id: o.id, name: o.name || o.id, category: o.category ?? null, description: o.description ?? null, current: o.currentValue, values });
  }
  return out;
}

/** The option a picker of `category` shows (ACP's category, or an option of that id). */
export function pickerOption(options: readonly ConfigOptionInfo[], category: "model" | "thought_level"): ConfigOptionInfo | undefined {
  return options.find((o) => o.category === category) ?? options.find((o) => o.id === category);
}

/** "62% context left" for a usage_update; "" when it says nothing usable. */
export function contextLeft(used: unknown, size: unknown): string {
  if (typeof used !== "number" || typeof size !== "number" || !(size > 0) || !(used >= 0)) return "";
  const left = Math.max(0, Math.min(100, Math.round(100 * (1 - used / size))));
  return `${left}% context left`;
}
