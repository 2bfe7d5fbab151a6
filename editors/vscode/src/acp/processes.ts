// hearth's `_hearth/processes` wire types (rpc/processes.go): the processes a
// session's exec_command calls left running.

/** One process exec_command started: its id (the session ID the model writes to it with), command line and state. */
export interface HearthProcess {
  processId: number;
  command: string;
  tty: boolean;
  startedAt: string;
  running: boolean;
}

export interface HearthProcesses {
  processes: HearthProcess[];
}

/** How long ago `since` was, in its largest whole unit: "12s", "4m", "3h", "2d". */
export function age(since: Date, now: Date = new Date()): string {
  const s = Math.max(0, Math.floor((now.getTime() - since.getTime()) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** The quick-pick line of a process: its command, then its id, state and age. */
export function processLabel(p: HearthProcess, now: Date = new Date()): { label: string; description: string; detail: string } {
  const state = p.running ? "running" : "exited";
  return {
    label: p.command,
    description: `${p.processId} · ${state}`,
    detail: `${state} · started ${age(new Date(p.startedAt), now)} ago${p.tty ? " · terminal" : ""}`,
  };
}
