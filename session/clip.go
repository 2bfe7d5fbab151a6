package session

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ClipOutput is hearth's one rule for what a tool's output may take in the
// model's view: at most tokens (at four bytes a token, as the API's
// tokenizers average on English and code), keeping the head and the tail —
// an error or a summary is as often at the end as at the start — cut at
// line boundaries where one is near, never inside a character, with a line
// between them saying how much was cut. tokens <= 0 keeps everything.
func ClipOutput(text string, tokens int) string {
	limit := tokens * 4
	if tokens <= 0 || len(text) <= limit {
		return text
	}
	half := limit / 2
	head := text[:half]
	if i := strings.LastIndexByte(head, '\n'); i >= half/2 {
		head = head[:i+1]
	} else {
		head = trimRuneEnd(head)
	}
	tail := text[len(text)-half:]
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < half/2 {
		tail = tail[i+1:]
	} else {
		tail = trimRuneStart(tail)
	}
	cut := text[len(head) : len(text)-len(tail)]
	sep := "\n"
	if strings.HasSuffix(head, "\n") {
		sep = ""
	}
	return fmt.Sprintf("%s%s[… hearth cut about %d tokens here (%d bytes, %d lines) to keep this output within %d tokens; "+
		"the first %d and last %d lines are shown …]\n%s", head, sep, (len(cut)+3)/4, len(cut), strings.Count(cut, "\n"),
		tokens, strings.Count(head, "\n"), strings.Count(tail, "\n")+1, tail)
}

// trimRuneEnd drops a character cut at the end of s.
func trimRuneEnd(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return s[:i]
			}
			return s
		}
	}
	return s
}

// trimRuneStart drops the rest of a character cut at the start of s.
func trimRuneStart(s string) string {
	for i := 0; i < len(s) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(s[i]) {
			return s[i:]
		}
	}
	return s
}
