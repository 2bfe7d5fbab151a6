// hearth's `_hearth/rules` wire types (rpc/rules.go): the workspaces' kept
// "always allow" answers.

/** One kept rule: a command prefix (`go test`) or a workspace-relative file path. */
export interface HearthRule {
  id: number;
  root: string;
  kind: "command" | "path" | string;
  pattern: string;
  created: string;
}

export interface HearthRules {
  rules: HearthRule[];
}

/** The quick-pick line of a rule: what it allows, then where and since when. */
export function ruleLabel(r: HearthRule): { label: string; description: string; detail: string } {
  const what = r.kind === "path" ? `edits to ${r.pattern}` : r.pattern;
  return { label: what, description: r.kind, detail: `${r.root} · since ${new Date(r.created).toLocaleString()}` };
}
