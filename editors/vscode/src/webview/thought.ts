// The one-line header of a collapsed thought (ACP agent_thought_chunk).

/**
 * The words a finished thought's header shows: its bold title when it opens
 * with one (as reasoning summaries do), else its first words; Markdown marks
 * dropped, whitespace folded, cut at a word within `max` characters.
 */
export function thoughtPreview(text: string, max = 80): string {
  const title = text.match(/^\s*\*\*(.+?)\*\*/)?.[1];
  const words = (title ?? text).replace(/[*`#]/g, "").replace(/\s+/g, " ").trim();
  if (words.length <= max) return words;
  const space = words.lastIndexOf(" ", max); // the last word boundary that fits
  return (space > 0 ? words.slice(0, space) : words.slice(0, max)) + "…";
}
