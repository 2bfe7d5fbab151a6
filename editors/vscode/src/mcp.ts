// The `hearth.mcpServers` setting → ACP's McpServer list for session/new and
// session/load. The setting is keyed by server name, as most MCP clients'
// configurations are:
//   { "github": { "command": "npx", "args": ["-y", "…"], "env": { "GITHUB_TOKEN": "…" } },
//     "docs":   { "type": "http", "url": "https://…", "headers": { "Authorization": "Bearer …" } } }
import type * as acp from "@agentclientprotocol/sdk";

export interface McpSetting {
  servers: acp.McpServer[];
  /** Entries left out, and why: for the output channel. */
  problems: string[];
}

function strings(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === "string");
}

function pairs(v: unknown): { name: string; value: string }[] | undefined {
  if (v === undefined) return [];
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const out: { name: string; value: string }[] = [];
  for (const [name, value] of Object.entries(v)) {
    if (typeof value !== "string") return undefined;
    out.push({ name, value });
  }
  return out;
}

export function mcpServersFromSetting(setting: unknown): McpSetting {
  const out: McpSetting = { servers: [], problems: [] };
  if (setting === undefined || setting === null) return out;
  if (typeof setting !== "object" || Array.isArray(setting)) {
    out.problems.push("hearth.mcpServers must be an object keyed by server name");
    return out;
  }
  for (const [name, raw] of Object.entries(setting as Record<string, unknown>)) {
    const s = (raw ?? {}) as Record<string, unknown>;
    const type = s.type ?? "stdio";
    if (type === "stdio") {
      const env = pairs(s.env);
      if (typeof s.command !== "string" || !s.command) {
        out.problems.push(`hearth.mcpServers.${name}: "command" must be a program`);
      } else if (s.args !== undefined && !strings(s.args)) {
        out.problems.push(`hearth.mcpServers.${name}: "args" must be a list of strings`);
      } else if (!env) {
        out.problems.push(`hearth.mcpServers.${name}: "env" must map names to strings`);
      } else {
        out.servers.push({ name, command: s.command, args: (s.args as string[] | undefined) ?? [], env });
      }
    } else if (type === "http" || type === "sse") {
      const headers = pairs(s.headers);
      if (typeof s.url !== "string" || !/^https?:\/\//.test(s.url)) {
        out.problems.push(`hearth.mcpServers.${name}: "url" must be an http(s) URL`);
      } else if (!headers) {
        out.problems.push(`hearth.mcpServers.${name}: "headers" must map names to strings`);
      } else {
        out.servers.push({ type, name, url: s.url, headers });
      }
    } else {
      out.problems.push(`hearth.mcpServers.${name}: unknown "type" ${JSON.stringify(type)} (stdio, http or sse)`);
    }
  }
  return out;
}
