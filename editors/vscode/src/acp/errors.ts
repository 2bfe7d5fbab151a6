// Errors the ACP client layer raises. Each carries a message a person can act
// on; the extension shows `message` as it is.

export const README_URL = "https://github.com/hearthd/hearth#readme";

/** The hearth binary is not where the `hearth.path` setting says. */
export class HearthNotFoundError extends Error {
  readonly kind = "not-found";
  constructor(
    readonly configured: string,
    detail: string,
  ) {
    super(
      `The hearth binary was not found (hearth.path = "${configured}": ${detail}). ` +
        `Install it with \`go install ./cmd/hearth\` from the hearth repository, or set ` +
        `"hearth.path" to its absolute path. See ${README_URL}`,
    );
    this.name = "HearthNotFoundError";
  }
}

/** The relay (`hearth acp`) or the daemon behind it went away. */
export class HearthGoneError extends Error {
  readonly kind = "gone";
  constructor(detail: string) {
    super(`The hearth daemon went away: ${detail}. It is restarted on your next action.`);
    this.name = "HearthGoneError";
  }
}

/** The daemon answered a request with a JSON-RPC error. */
export class HearthRpcError extends Error {
  readonly kind = "rpc";
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(code === -32601 ? `This hearth daemon does not support ${method} (${message}).` : `${method} failed: ${message}`);
    this.name = "HearthRpcError";
  }
}

export type HearthError = HearthNotFoundError | HearthGoneError | HearthRpcError;

export function isHearthError(e: unknown): e is HearthError {
  return e instanceof HearthNotFoundError || e instanceof HearthGoneError || e instanceof HearthRpcError;
}

/** A message for any thrown value, for showing in the UI. */
export function describeError(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === "string") return e;
  try {
    return JSON.stringify(e);
  } catch {
    return String(e);
  }
}
