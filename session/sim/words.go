package sim

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The plain words: a user message that starts with one (and holds no sim:
// directive) makes the scripted model call that tool, so that a newcomer
// can try tools, permissions and cancel without writing JSON. They only
// choose what the model "says": the response is the same protocol as any.

// WordsHelp lists the plain words and the directives, for `hearth sim --help`.
const WordsHelp = `
What the scripted model does is chosen by the prompt (the last user message).
A prompt that starts with one of these words calls that tool, when the request
offers it, and then answers with what the tool returned:
  read PATH             read_file
  list [PATH]           list_dir (the workspace's top without PATH)
  grep PATTERN [PATH]   grep
  write PATH TEXT       write_file: PATH holds TEXT and a newline
  edit PATH OLD NEW     edit_file: OLD (one word) becomes NEW (the rest)
  patch PATH OLD NEW    apply_patch, a custom tool call when the request offers it as one
                        (else a function call): the line OLD (one word) becomes NEW (the rest)
  plan STEP; STEP ...   update_plan: the first step in progress, the others pending
  run COMMAND           shell, or exec_command where shell is not offered
  view PATH             view_image
  search QUERY          the hosted web_search tool (when the request offers it): a
                        web_search_call, then an answer citing the page it found
  slow                  no tool: a long answer streamed over about 10 s, to try cancelling
Any other prompt is echoed: "You said: ...". "read PATH" and "list" or "files"
anywhere in a sentence call read_file and list_dir too.

Directives, anywhere in the prompt (a prompt that holds any takes no word):
  sim:calls=N      N function calls, one per response, then a text answer
  sim:tool=NAME    the tool they call (default: the first the request offers)
  sim:args=JSON    their arguments: a compact JSON object with no spaces
                   (write a space as \u0020); default {"path":"."}
  sim:parallel=K   up to K of those calls in one response
  sim:custom=NAME  custom tool calls of NAME instead (one without sim:calls)
  sim:input=TEXT   their input: a JSON string with no spaces (write a space as
                   \u0020, a newline as \n)
  sim:steps=JSON   function calls in order, one per response: a compact JSON
                   array of [NAME, ARGS] pairs; "$session" in ARGS is the
                   session ID the last tool output gave
  sim:tokens=N     the text answer is N words: tok0 tok1 ...
  sim:chunk=K      its deltas carry K words each (default one word a delta)
`

// NoKeyHint is the line the daemon's simulator (no API key) adds to an
// echoed prompt (Options.Hint), so that the answer says what to try.
const NoKeyHint = "Without an API key hearth answers from its simulator: try `read README.md`, `list`, " +
	"`write notes/x.txt hi`, `run ls`, `slow` (hearth sim --help lists them all)."

// slowWords and slowGap make the slow answer: about 10 s of streaming.
const (
	slowWords = 85
	slowGap   = 100 * time.Millisecond
)

// anyDirective finds a sim: directive; a prompt with one takes no word.
var anyDirective = regexp.MustCompile(`sim:(calls|tool|args|tokens|parallel|chunk|custom|input|steps)=`)

// wordPlan is the plan of a prompt that starts with a plain word, when the
// request offers the word's tool (names: the function tools; customs: the
// custom tools); ok is false otherwise.
func wordPlan(text string, names, customs []string) (p plan, ok bool) {
	if anyDirective.MatchString(text) {
		return plan{}, false
	}
	word, rest := cutWord(strings.TrimSpace(text))
	call := func(name string, args map[string]string) (plan, bool) {
		if !contains(names, name) {
			return plan{}, false
		}
		b, _ := json.Marshal(args)
		return plan{callName: name, callArgs: string(b), calls: 1}, true
	}
	switch strings.ToLower(word) {
	case "read":
		if path, _ := cutWord(rest); path != "" {
			return call("read_file", map[string]string{"path": cleanPath(path)})
		}
	case "list":
		path := "."
		if f := strings.Fields(rest); len(f) == 1 {
			path = cleanPath(f[0])
		}
		return call("list_dir", map[string]string{"path": path})
	case "grep":
		pattern, rest := cutWord(rest)
		if pattern == "" {
			break
		}
		args := map[string]string{"pattern": pattern}
		if path, _ := cutWord(rest); path != "" {
			args["path"] = cleanPath(path)
		}
		return call("grep", args)
	case "write":
		if path, content := cutWord(rest); path != "" {
			if content != "" {
				content += "\n"
			}
			return call("write_file", map[string]string{"path": path, "content": content})
		}
	case "edit":
		path, rest := cutWord(rest)
		old, replacement := cutWord(rest)
		if old != "" {
			return call("edit_file", map[string]string{"path": path, "old_string": old, "new_string": replacement})
		}
	case "patch":
		path, rest := cutWord(rest)
		old, replacement := cutWord(rest)
		if old == "" {
			break
		}
		patch := patchText(path, old, replacement)
		if contains(customs, "apply_patch") {
			return plan{callName: "apply_patch", callArgs: patch, custom: true, calls: 1}, true
		}
		return call("apply_patch", map[string]string{"input": patch})
	case "plan":
		if steps := planSteps(rest); len(steps) > 0 {
			b, _ := json.Marshal(map[string]any{"plan": steps})
			if contains(names, "update_plan") {
				return plan{callName: "update_plan", callArgs: string(b), calls: 1}, true
			}
		}
	case "run":
		if rest == "" {
			break
		}
		if contains(names, "shell") {
			return call("shell", map[string]string{"command": rest})
		}
		return call("exec_command", map[string]string{"cmd": rest}) // the families trained on it have no shell
	case "slow":
		return plan{text: slowText(), gap: slowGap}, true
	}
	return plan{}, false
}

// planSteps reads "step one; step two" as update_plan's steps: the first
// in progress, the others pending.
func planSteps(text string) []map[string]string {
	var steps []map[string]string
	for _, s := range strings.Split(text, ";") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		status := "pending"
		if len(steps) == 0 {
			status = "in_progress"
		}
		steps = append(steps, map[string]string{"step": s, "status": status})
	}
	return steps
}

// cutWord splits s at its first run of white space: the word before, the
// rest after (its own spacing kept).
func cutWord(s string) (word, rest string) {
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeftFunc(s[i:], unicode.IsSpace)
}

// slowText is the slow answer: it says what it is for, then counts.
func slowText() string {
	var b strings.Builder
	b.WriteString("Streaming slowly, so that you can try cancelling (Ctrl-C in `hearth ask`, stop in an editor):")
	for i := 1; i <= slowWords; i++ {
		b.WriteString(" " + strconv.Itoa(i))
	}
	b.WriteString(". Done.")
	return b.String()
}
