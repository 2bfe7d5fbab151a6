package patch

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// larkLanguage compiles a Lark grammar without recursion (Grammar has
// none: its language is regular) into a regular expression matching
// exactly the texts the grammar makes. It reads the subset Grammar is
// written in: one rule a line, string literals, /regex/ terminals, rule and
// terminal names, ( ) | ? + *, "-> alias", and %import common.LF.
func larkLanguage(t *testing.T, grammar string) *regexp.Regexp {
	t.Helper()
	rules := map[string]string{}
	for _, line := range strings.Split(grammar, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "//"):
			continue
		case line == "%import common.LF":
			rules["LF"] = `"\n"`
			continue
		}
		name, rhs, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("grammar line %q is not a rule", line)
		}
		rules[strings.TrimSpace(name)] = rhs
	}
	var expand func(name string, depth int) string
	expand = func(name string, depth int) string {
		rhs, ok := rules[name]
		if !ok || depth > 20 {
			t.Fatalf("rule %q undefined or recursive", name)
		}
		var b strings.Builder
		for s := strings.TrimSpace(rhs); s != ""; s = strings.TrimSpace(s) {
			switch c := s[0]; {
			case c == '"':
				end := 1
				for end < len(s) && s[end] != '"' {
					if s[end] == '\\' {
						end++
					}
					end++
				}
				lit, err := strconv.Unquote(s[:end+1])
				if err != nil {
					t.Fatalf("literal %q in %s: %v", s[:end+1], name, err)
				}
				b.WriteString("(?:" + regexp.QuoteMeta(lit) + ")")
				s = s[end+1:]
			case c == '/':
				end := strings.Index(s[1:], "/") + 1
				b.WriteString("(?:" + s[1:end] + ")")
				s = s[end+1:]
			case strings.HasPrefix(s, "->"):
				s = strings.TrimLeft(strings.TrimSpace(s[2:]), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789")
			case c == '(':
				b.WriteString("(?:")
				s = s[1:]
			case strings.ContainsRune(")|?+*", rune(c)):
				b.WriteByte(c)
				s = s[1:]
			default:
				n := strings.IndexFunc(s, func(r rune) bool {
					return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
				})
				if n < 0 {
					n = len(s)
				}
				if n == 0 {
					t.Fatalf("unexpected %q in rule %s", s, name)
				}
				b.WriteString("(?:" + expand(s[:n], depth+1) + ")")
				s = s[n:]
			}
		}
		return b.String()
	}
	return regexp.MustCompile(`\A(?:` + expand("start", 0) + `)\z`)
}

// patchText is a patch of body's lines, each ended by "\n".
func patchText(body ...string) string {
	return patchBegin + "\n" + strings.Join(append(body, patchEnd), "\n") + "\n"
}

// The grammar offered to the models and Parse take the reference
// language's edges alike: a bare @@ with no lines after it is taken (at the
// end of an update, before the next file, before End of File); an Add File
// with no line is refused; "*** End of File" is taken only after an
// update's last change.
func TestGrammarAndParseAgreeOnTheEdges(t *testing.T) {
	lang := larkLanguage(t, Grammar)
	tests := []struct {
		name string
		text string
		ok   bool
	}{
		{"bare @@ alone", patchText("*** Update File: a", "@@"), true},
		{"bare @@ after a hunk", patchText("*** Update File: a", "@@", "-x", "+y", "@@"), true},
		{"bare @@ before the next file", patchText("*** Update File: a", "@@", "*** Delete File: b"), true},
		{"@@ with text and no lines", patchText("*** Update File: a", "@@ func f() {"), true},
		{"bare @@ then End of File", patchText("*** Update File: a", " x", "@@", "*** End of File"), true},
		{"hunk lines without @@", patchText("*** Update File: a", " x", "-y", "+z"), true},
		{"update with no change", patchText("*** Update File: a"), true},
		{"move with no change", patchText("*** Update File: a", "*** Move to: b"), true},
		{"empty added line", patchText("*** Add File: a", "+"), true},
		{"empty context line", patchText("*** Update File: a", "@@", " ", "-x"), true},
		{"End of File after the last hunk", patchText("*** Update File: a", "@@", "-x", "+y", "*** End of File"), true},
		{"End of File, then the next file", patchText("*** Update File: a", "-x", "*** End of File", "*** Add File: b", "+b"), true},

		{"empty Add File", patchText("*** Add File: a"), false},
		{"empty Add File before another", patchText("*** Add File: a", "*** Delete File: b"), false},
		{"End of File between hunks", patchText("*** Update File: a", "@@", "-x", "*** End of File", "@@", "-y"), false},
		{"End of File, then a hunk line", patchText("*** Update File: a", "-x", "*** End of File", "+y"), false},
		{"End of File twice", patchText("*** Update File: a", "-x", "*** End of File", "*** End of File"), false},
		{"End of File with no change", patchText("*** Update File: a", "*** End of File"), false},
		{"End of File after a move", patchText("*** Update File: a", "*** Move to: b", "*** End of File"), false},
		{"End of File in an added file", patchText("*** Add File: a", "+x", "*** End of File"), false},
		{"End of File after a delete", patchText("*** Delete File: a", "*** End of File"), false},
		{"no operation", patchText(), false},
		{"hunk line after a delete", patchText("*** Delete File: a", "-x"), false},
		{"a move after the changes", patchText("*** Update File: a", "-x", "*** Move to: b"), false},
		{"unknown operation", patchText("*** Rename File: a"), false},
		{"a line that is no hunk line", patchText("*** Update File: a", "@@", "x"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lang.MatchString(tt.text); got != tt.ok {
				t.Errorf("the grammar takes it: %v, want %v\n%s", got, tt.ok, tt.text)
			}
			if _, err := Parse(tt.text); (err == nil) != tt.ok {
				t.Errorf("Parse: %v, want it taken: %v\n%s", err, tt.ok, tt.text)
			}
		})
	}
}

// Over every patch of up to four lines (between Begin and End) drawn from
// the format's kinds of line, Parse takes exactly what the grammar takes.
// (A line of spaces is left out: Parse takes it between files as a blank
// line, one of the habits it forgives.)
func TestGrammarAndParseTakeTheSameLanguage(t *testing.T) {
	lang := larkLanguage(t, Grammar)
	kinds := []string{"*** Add File: a", "*** Delete File: b", "*** Update File: c", "*** Move to: d",
		"*** End of File", "@@", "@@ f", "+x", "-x", " x", "+", "-"}
	var body []string
	var walk func(n int)
	checked := 0
	walk = func(n int) {
		text := patchText(body...)
		_, err := Parse(text)
		if g := lang.MatchString(text); g != (err == nil) {
			t.Fatalf("the grammar takes %q: %v; Parse: %v", text, g, err)
		}
		checked++
		if n == 0 {
			return
		}
		for _, k := range kinds {
			body = append(body, k)
			walk(n - 1)
			body = body[:len(body)-1]
		}
	}
	walk(4)
	if checked < 20_000 {
		t.Fatalf("checked %d patches", checked)
	}
}

// The grammar reader reads what it claims: a literal, a regex, a
// repetition, an alias and the imported LF.
func TestLarkLanguageReader(t *testing.T) {
	g := "start: greeting+ NAME? -> x\ngreeting: (\"hi\" | \"ho\") LF\nNAME: /[a-z]+/\n%import common.LF\n"
	lang := larkLanguage(t, g)
	for text, want := range map[string]bool{"hi\n": true, "hi\nho\nbob": true, "": false, "hu\n": false, "bob": false} {
		if got := lang.MatchString(text); got != want {
			t.Errorf("%q: %v, want %v (%s)", text, got, want, fmt.Sprint(lang))
		}
	}
}
