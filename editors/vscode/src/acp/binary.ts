// Finding the hearth binary from the `hearth.path` setting.
import { accessSync, constants, statSync } from "node:fs";
import * as path from "node:path";
import * as os from "node:os";

import { HearthNotFoundError } from "./errors.js";

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves `configured` (an absolute path, a path with "~", a path relative to
 * `cwd`, or a bare command name looked up on PATH) to an executable file, or
 * throws HearthNotFoundError explaining what was tried.
 */
export function resolveHearthBinary(
  configured: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string {
  const setting = (configured ?? "").trim() || "hearth";
  let candidate = setting;
  if (candidate === "~" || candidate.startsWith("~/")) {
    candidate = path.join(os.homedir(), candidate.slice(1));
  }
  if (candidate.includes("/") || candidate.includes(path.sep)) {
    const abs = path.resolve(cwd, candidate);
    if (isExecutableFile(abs)) return abs;
    throw new HearthNotFoundError(setting, `${abs} is not an executable file`);
  }
  const dirs = (env.PATH ?? "").split(path.delimiter).filter(Boolean);
  const exts = process.platform === "win32" ? (env.PATHEXT ?? ".EXE").split(";") : [""];
  for (const dir of dirs) {
    for (const ext of exts) {
      const p = path.join(dir, candidate + ext);
      if (isExecutableFile(p)) return p;
    }
  }
  throw new HearthNotFoundError(setting, `no executable named "${candidate}" on PATH`);
}
