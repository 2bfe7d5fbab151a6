package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The scripted model: a deterministic function from the effective input and the tools to
// either one function call or a text answer. Directives in the user's text drive it:
//
//	sim:calls=N     make N function calls, one per response, then answer with text
//	sim:parallel=K  make up to K of those calls per response (only when the request has
//	                parallel_tool_calls, which the API defaults to true)
//	sim:tool=NAME   the tool those calls use (default: the first function tool)
//	sim:args=JSON   their arguments, a compact JSON object (default {"path":"."})
//	sim:tokens=N    the text answer is N words "tok0 tok1 ..."
//	sim:chunk=K     its deltas carry K words each (default 1: a delta per word)
//	sim:custom=NAME the calls are custom tool calls of NAME (one, without sim:calls)
//	sim:input=TEXT  their input, a JSON string with no spaces (default "")
//	sim:steps=JSON  a compact JSON array of [NAME, ARGS] pairs: one function call per response, in
//	                order, then a text answer; the string "$session" in ARGS becomes the number
//	                after "session ID " in the last tool output (exec_command's running process)
//
// Without sim:calls, a prompt that starts with a plain word (words.go: read, list, grep, write,
// edit, patch, plan, run, slow) calls that tool; else "read <path>" anywhere calls read_file and
// "list"/"files" calls list_dir, when the request offers a tool of that name and the turn has no
// tool output yet.
var (
	callsDirective    = regexp.MustCompile(`sim:calls=(\d+)`)
	toolDirective     = regexp.MustCompile(`sim:tool=(\S+)`)
	argsDirective     = regexp.MustCompile(`sim:args=(\S+)`)
	tokensDirective   = regexp.MustCompile(`sim:tokens=(\d+)`)
	parallelDirective = regexp.MustCompile(`sim:parallel=(\d+)`)
	chunkDirective    = regexp.MustCompile(`sim:chunk=(\d+)`)
	customDirective   = regexp.MustCompile(`sim:custom=(\S+)`)
	inputDirective    = regexp.MustCompile(`sim:input=(\S+)`)
	stepsDirective    = regexp.MustCompile(`sim:steps=(\S+)`)
	sessionIDOutput   = regexp.MustCompile(`session ID (\d+)`)
	readRequest       = regexp.MustCompile(`(?i)\bread\s+(\S+)`)
)

const defaultArgs = `{"path":"."}`

// plan is the scripted answer to one turn: a tool call when callName is set, else text.
type plan struct {
	callName string
	callArgs string // a function call's arguments, or a custom tool call's input
	custom   bool   // the calls are custom tool calls
	calls    int    // how many such calls the response makes (at least 1 when callName is set)
	text     string
	gap      time.Duration // the least time between text deltas (the slow word)
	chunk    int           // words per text delta (sim:chunk; 0 or 1: one)
	echoed   bool          // text echoes the prompt: the place for Options.Hint
	search   string        // a query the hosted web search runs before the text (search.go)
}

// turn is what the script reads from the effective input: the last user message and the tool
// traffic after it.
type turn struct {
	text      string            // the last user message's text
	callNames map[string]string // call_id → tool name, for calls made in this turn
	lastName  string            // name of the last tool call in the turn
	outputs   []json.RawMessage // tool outputs (function or custom) as sent, in order (only the last is ever read as text)
	outputIDs []string          // their call_ids
	images    []contentPartJSON // the images of the user message, or of the last tool output once there is one
}

// inputItem holds the fields the script reads from any input item; others are ignored.
type inputItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	CallID  string          `json:"call_id"`
	Name    string          `json:"name"`
	Output  json.RawMessage `json:"output"`
}

func readTurn(items []json.RawMessage) turn {
	// From the end back to the last user message: the script reads only the
	// current turn, and a long transcript must not cost the simulator (on the
	// same machine as the client it measures) time per request.
	var parsed []inputItem
	last := -1
	for i := len(items) - 1; i >= 0; i-- {
		var it inputItem
		_ = json.Unmarshal(items[i], &it) // unknown shapes are kept in the input, ignored here
		parsed = append(parsed, it)
		if it.Role == "user" && (it.Type == "" || it.Type == "message") {
			last = i
			break
		}
	}
	slices.Reverse(parsed)
	t := turn{callNames: make(map[string]string)}
	if last >= 0 {
		t.text = partsText(parsed[0].Content)
		t.images = itemImages(items[last])
		parsed = parsed[1:]
	}
	first := last + 1 // items index of parsed[0]
	for i, it := range parsed {
		switch it.Type {
		case "function_call", "custom_tool_call":
			t.callNames[it.CallID] = it.Name
			t.lastName = it.Name
		case "function_call_output", "custom_tool_call_output":
			t.outputs = append(t.outputs, it.Output)
			t.outputIDs = append(t.outputIDs, it.CallID)
			t.images = itemImages(items[first+i])
		}
	}
	return t
}

// partsText reads message content or tool output: a string, or an array of parts with text.
func partsText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// functionTools lists the names of the function tools, in order.
func functionTools(tools json.RawMessage) []string {
	var list []struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"` // the chat-completions nesting, tolerated
	}
	_ = json.Unmarshal(tools, &list)
	var names []string
	for _, t := range list {
		if t.Type != "function" {
			continue
		}
		if t.Name != "" {
			names = append(names, t.Name)
		} else if t.Function.Name != "" {
			names = append(names, t.Function.Name)
		}
	}
	return names
}

// planTurn decides the next response for the given effective input and tools;
// parallel is the request's parallel_tool_calls.
func planTurn(items []json.RawMessage, tools json.RawMessage, parallel bool) plan {
	t := readTurn(items)
	names := functionTools(tools)
	if m := customDirective.FindStringSubmatch(t.text); m != nil {
		return customPlan(t, m[1])
	}
	if m := stepsDirective.FindStringSubmatch(t.text); m != nil {
		return stepsPlan(t, m[1])
	}
	if m := callsDirective.FindStringSubmatch(t.text); m != nil {
		n, _ := strconv.Atoi(m[1])
		name := ""
		if tm := toolDirective.FindStringSubmatch(t.text); tm != nil {
			name = tm[1]
		} else if len(names) > 0 {
			name = names[0]
		}
		if len(t.outputs) < n && name != "" {
			k := 1
			if pm := parallelDirective.FindStringSubmatch(t.text); pm != nil && parallel {
				k, _ = strconv.Atoi(pm[1])
				k = max(1, min(k, n-len(t.outputs)))
			}
			return plan{callName: name, callArgs: directiveArgs(t.text), calls: k}
		}
		return plan{text: answerText(t)}
	}
	if len(t.outputs) == 0 {
		if p, ok := hostedWords(t.text, names, tools); ok {
			return p
		}
		if p, ok := wordPlan(t.text, names, customTools(tools)); ok {
			return p
		}
		if m := readRequest.FindStringSubmatch(t.text); m != nil && contains(names, "read_file") {
			args, _ := json.Marshal(map[string]string{"path": cleanPath(m[1])})
			return plan{callName: "read_file", callArgs: string(args), calls: 1}
		}
		lower := strings.ToLower(t.text)
		if (strings.Contains(lower, "list") || strings.Contains(lower, "files")) && contains(names, "list_dir") {
			return plan{callName: "list_dir", callArgs: defaultArgs, calls: 1}
		}
	}
	return plan{text: answerText(t), echoed: len(t.outputs) == 0 && !tokensDirective.MatchString(t.text),
		chunk: directiveChunk(t.text)}
}

// directiveChunk returns sim:chunk's words per delta, 1 when absent.
func directiveChunk(text string) int {
	if m := chunkDirective.FindStringSubmatch(text); m != nil {
		if k, err := strconv.Atoi(m[1]); err == nil && k > 1 {
			return k
		}
	}
	return 1
}

// customPlan is the plan of a prompt with sim:custom=NAME: sim:calls=N (default 1) custom
// calls of NAME, one per response, each with sim:input as its input, then a text answer.
func customPlan(t turn, name string) plan {
	n := 1
	if m := callsDirective.FindStringSubmatch(t.text); m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	if len(t.outputs) >= n {
		return plan{text: answerText(t)}
	}
	input := ""
	if m := inputDirective.FindStringSubmatch(t.text); m != nil {
		_ = json.Unmarshal([]byte(m[1]), &input) // not a JSON string: no input
	}
	return plan{callName: name, callArgs: input, custom: true, calls: 1}
}

// stepsPlan is the plan of a prompt with sim:steps: the next step's call,
// "$session" in its arguments replaced by the session ID the last tool
// output gave; text once every step has its output, or when the steps are
// not an array of [NAME, ARGS] pairs.
func stepsPlan(t turn, steps string) plan {
	var list [][2]json.RawMessage
	if json.Unmarshal([]byte(steps), &list) != nil || len(t.outputs) >= len(list) {
		return plan{text: answerText(t)}
	}
	var name string
	step := list[len(t.outputs)]
	if json.Unmarshal(step[0], &name) != nil || name == "" {
		return plan{text: answerText(t)}
	}
	args := string(step[1])
	if len(t.outputs) > 0 {
		if m := sessionIDOutput.FindStringSubmatch(partsText(t.outputs[len(t.outputs)-1])); m != nil {
			args = strings.ReplaceAll(args, `"$session"`, m[1])
		}
	}
	return plan{callName: name, callArgs: args, calls: 1}
}

// directiveArgs returns sim:args compacted, or the default when absent or not a JSON object.
func directiveArgs(text string) string {
	m := argsDirective.FindStringSubmatch(text)
	if m == nil {
		return defaultArgs
	}
	var obj map[string]any
	var buf bytes.Buffer
	if json.Unmarshal([]byte(m[1]), &obj) != nil || json.Compact(&buf, []byte(m[1])) != nil {
		return defaultArgs
	}
	return buf.String()
}

// quotedLines is how much of the last tool result the scripted answer
// quotes.
const quotedLines = 20

func answerText(t turn) string {
	if m := tokensDirective.FindStringSubmatch(t.text); m != nil {
		n, _ := strconv.Atoi(m[1])
		words := make([]string, n)
		for i := range words {
			words[i] = "tok" + strconv.Itoa(i)
		}
		return strings.Join(words, " ")
	}
	saw := ""
	if len(t.images) > 0 {
		saw = "\n[saw " + describeImages(t.images) + "]"
	}
	if len(t.outputs) == 0 {
		return "You said: " + t.text + saw
	}
	last := len(t.outputs) - 1
	name := t.callNames[t.outputIDs[last]]
	if name == "" {
		name = t.lastName
	}
	if name == "" {
		name = "a tool"
	}
	lines := strings.Split(partsText(t.outputs[last]), "\n")
	if n := len(lines); n > quotedLines {
		// Said, so that a cut listing does not look like a broken tool.
		lines = append(lines[:quotedLines], fmt.Sprintf("[the simulator quotes the first %d of the result's %d lines]", quotedLines, n))
	}
	return fmt.Sprintf("I called %s %d time(s). Last result:\n%s", name, len(t.outputs), strings.Join(lines, "\n")) + saw
}

// cleanPath strips quoting and sentence punctuation from a path token ("`main.go`," → main.go),
// keeping paths such as "." and "../".
func cleanPath(p string) string {
	p = strings.TrimLeft(p, "\"'`(")
	for len(p) > 1 {
		last, prev := p[len(p)-1], p[len(p)-2]
		if strings.IndexByte(",;:!?\"'`)", last) < 0 && (last != '.' || prev == '.' || prev == '/') {
			break
		}
		p = p[:len(p)-1]
	}
	return p
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// splitWords cuts text into deltas that concatenate back to it exactly: each delta is the
// whitespace before a word plus the word; trailing whitespace joins the last delta.
func splitWords(text string) []string {
	var out []string
	start, inWord := 0, false
	for i, r := range text {
		space := unicode.IsSpace(r)
		if space && inWord {
			out = append(out, text[start:i])
			start = i
		}
		inWord = !space
	}
	if start < len(text) {
		if len(out) > 0 && strings.TrimSpace(text[start:]) == "" {
			out[len(out)-1] += text[start:]
		} else {
			out = append(out, text[start:])
		}
	}
	return out
}

// joinChunks joins every k consecutive deltas into one (k ≤ 1: as they are).
func joinChunks(deltas []string, k int) []string {
	if k <= 1 {
		return deltas
	}
	out := make([]string, 0, (len(deltas)+k-1)/k)
	for len(deltas) > k {
		out = append(out, strings.Join(deltas[:k], ""))
		deltas = deltas[k:]
	}
	if len(deltas) > 0 {
		out = append(out, strings.Join(deltas, ""))
	}
	return out
}

// splitRunes cuts s into chunks of at most n runes (function-call argument deltas).
func splitRunes(s string, n int) []string {
	var out []string
	r := []rune(s)
	for len(r) > n {
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	if len(r) > 0 {
		out = append(out, string(r))
	}
	return out
}
