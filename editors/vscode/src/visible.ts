// What the view shows of a string from the agent — a tool's title, a
// command, a path, a tool's output — with its control characters made
// visible, as hearth's CLI prints them: \r, \n and \t as such, other C0
// controls and DEL as \xNN (ESC is \x1b), C1 controls (U+0080–U+009F) and
// the bidi controls that reorder text (U+061C, U+200E, U+200F,
// U+202A–U+202E, U+2066–U+2069) as \uNNNN. Text only ever reaches the DOM
// through textContent; this keeps what it shows honest as well.

const LINE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const TEXT = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const SHORT: Record<string, string> = { "\r": "\\r", "\n": "\\n", "\t": "\\t" };

function escape(c: string): string {
  const code = c.charCodeAt(0);
  if (SHORT[c]) return SHORT[c];
  if (code < 0x80) return `\\x${code.toString(16).padStart(2, "0")}`;
  return `\\u${code.toString(16).padStart(4, "0")}`;
}

/** s as one line: a newline or tab is shown escaped too (a title, a path, a command). */
export function visibleLine(s: string): string {
  return s.replace(LINE, escape);
}

/** s keeping its lines: newlines and tabs stay (a tool's output, a diff's line). */
export function visibleText(s: string): string {
  return s.replace(TEXT, escape);
}

/** Whether visibleLine changes s. */
export function hasControls(s: string): boolean {
  return visibleLine(s) !== s;
}
