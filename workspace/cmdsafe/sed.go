package cmdsafe

import (
	"regexp"
	"strings"
)

// sedReadOnly: sed -n whose every script only prints lines by number
// (`sed -n 10,20p`, `sed -n '1p;$p'`): no in-place edit, no script file,
// nothing a script can write (w) or run (e). Options outside the few
// known ones are refused, abbreviations included.
func sedReadOnly(args []Word) bool {
	quiet, scriptGiven := false, false
	var scripts []string
	for i := 0; i < len(args); i++ {
		t := args[i].Text
		switch {
		case t == "--":
			if !scriptGiven && i+1 < len(args) {
				scripts = append(scripts, args[i+1].Text)
			}
			i = len(args)
		case t == "--quiet" || t == "--silent":
			quiet = true
		case t == "--expression":
			if i+1 >= len(args) {
				return false
			}
			i++
			scripts, scriptGiven = append(scripts, args[i].Text), true
		case strings.HasPrefix(t, "--expression="):
			scripts, scriptGiven = append(scripts, strings.TrimPrefix(t, "--expression=")), true
		case sedLongOK[t]:
		case strings.HasPrefix(t, "--"):
			return false
		case strings.HasPrefix(t, "-") && len(t) > 1:
			q, script, has, took, ok := sedShort(t[1:], args[i+1:])
			if !ok {
				return false
			}
			quiet = quiet || q
			i += took
			if has {
				scripts, scriptGiven = append(scripts, script), true
			}
		case !scriptGiven && len(scripts) == 0:
			scripts = append(scripts, t) // the script, with no -e
		}
	}
	if !quiet || len(scripts) == 0 {
		return false
	}
	for _, s := range scripts {
		if !sedPrintScript(s) {
			return false
		}
	}
	return true
}

// sedLongOK are sed's long options that change neither files nor what a
// script may do.
var sedLongOK = map[string]bool{"--regexp-extended": true, "--separate": true, "--null-data": true,
	"--unbuffered": true, "--posix": true, "--sandbox": true, "--debug": true}

// sedShort reads a cluster of short options (without its -): quiet for
// n; for e, the script (the rest of the cluster, or the next argument);
// took counts the arguments after the cluster it used (-e SCRIPT, -l N).
// Unknown letters fail.
func sedShort(cluster string, next []Word) (quiet bool, script string, hasScript bool, took int, ok bool) {
	for j := 0; j < len(cluster); j++ {
		switch c := cluster[j]; c {
		case 'n':
			quiet = true
		case 's', 'u', 'E', 'r', 'z':
		case 'e', 'l':
			rest := cluster[j+1:]
			if rest == "" {
				if len(next) == 0 {
					return false, "", false, 0, false
				}
				rest, took = next[0].Text, 1
			}
			return quiet, rest, c == 'e', took, true
		default:
			return false, "", false, 0, false
		}
	}
	return quiet, "", false, 0, true
}

// sedPrintCmd is one command that prints lines by number: [ADDR[,ADDR]]p.
var sedPrintCmd = regexp.MustCompile(`^\s*(?:(?:\d+|\$)(?:\s*,\s*(?:\d+|\$))?)?\s*p\s*$`)

// sedPrintScript: every ;- or newline-separated command prints by number.
func sedPrintScript(s string) bool {
	for _, cmd := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == '\n' }) {
		if !sedPrintCmd.MatchString(cmd) {
			return false
		}
	}
	return strings.TrimSpace(strings.NewReplacer(";", "", "\n", "").Replace(s)) != ""
}
