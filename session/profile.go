package session

import (
	"path"
	"slices"
)

// Profile is what hearth knows of a model family: how much it can read, how
// it reasons, what it can take in, and which tools it was trained on. The
// agent loop and the daemon shape requests, tools and compaction by it
// rather than by the model's name. A plain value, looked up by ProfileOf.
type Profile struct {
	// Family names the row that matched, for hearth status ("unknown" when
	// none did).
	Family string `json:"family"`
	// ContextWindow is the input window in tokens; 0 when unknown: the
	// session then compacts only when the server refuses a request for its
	// length.
	ContextWindow int `json:"context_window"`
	// ReasoningLevels are the reasoning.effort values the family accepts,
	// lowest first; empty for a model that does not reason (no reasoning
	// object is sent). DefaultReasoning is the level asked for when
	// HEARTH_REASONING_EFFORT is unset: one of them, or "none".
	ReasoningLevels  []string `json:"reasoning_levels,omitempty"`
	DefaultReasoning string   `json:"default_reasoning"`
	// Images: the model takes input_image parts (a pasted screenshot,
	// read_file of an image).
	Images bool `json:"images"`
	// WebSearch: the family can use the API's hosted web_search tool
	// (never at reasoning effort minimal, which the API refuses with it);
	// the daemon offers it as HEARTH_WEB_SEARCH says.
	WebSearch bool `json:"web_search"`
	// ParallelToolCalls: it may call several tools in one response.
	ParallelToolCalls bool `json:"parallel_tool_calls"`
	// ToolOutputTokens bounds one tool's output as the model sees it, in
	// tokens (about four bytes each); a longer output keeps its head and
	// tail and says how much was cut.
	ToolOutputTokens int `json:"tool_output_tokens"`
	// PatchStyle is how apply_patch is offered: PatchFreeform (a custom
	// tool with the patch grammar: the family was trained on it),
	// PatchFunction (a function taking {input}), or "" (not offered:
	// edit_file and write_file only).
	PatchStyle string `json:"patch_style,omitempty"`
	// ShellStyle is the shell the family was trained to call: ShellCommand,
	// one command line for /bin/sh -c to completion (hearth's shell tool),
	// or ShellExec, exec_command and write_stdin: a command that may stay
	// running, with a terminal when asked, and is written to and read from
	// by later calls.
	ShellStyle string `json:"shell_style"`
	// Prompt is the guidance the family gets (guidance.go): PromptCodex,
	// PromptGPT5 or PromptGeneral, each written for what that family was
	// trained to expect.
	Prompt string `json:"prompt"`
	// Verbosity is the request's text.verbosity (low, medium, high), or ""
	// for a family that does not take it (the field is left out).
	Verbosity string `json:"verbosity,omitempty"`
}

// Patch and shell styles (Profile.PatchStyle, Profile.ShellStyle).
const (
	PatchFreeform = "freeform"
	PatchFunction = "function"
	ShellCommand  = "command"
	ShellExec     = "exec"
)

// Prompt families (Profile.Prompt): which guidance a family gets.
const (
	PromptCodex   = "codex"
	PromptGPT5    = "gpt5"
	PromptGeneral = "general"
)

// defaultToolOutputTokens is the tool-output budget of a family that does
// not say otherwise (Codex gives gpt-5.2-codex 10,000 tokens).
const defaultToolOutputTokens = 10_000

// profiles is the table ProfileOf reads: the first row with a pattern
// (path.Match syntax, on the whole model name) that matches wins, so more
// specific rows come first. A new model family is a new row.
var profiles = []struct {
	patterns []string
	Profile
}{
	{[]string{"gpt-5*codex*", "codex-*"}, Profile{Family: "gpt-5.x-codex", ContextWindow: 272_000, WebSearch: true,
		ReasoningLevels: []string{"low", "medium", "high", "xhigh"}, DefaultReasoning: "medium",
		Images: true, ParallelToolCalls: true, ToolOutputTokens: 10_000, PatchStyle: PatchFreeform, ShellStyle: ShellExec,
		Prompt: PromptCodex, Verbosity: "medium"}},
	// The first gpt-5 models take a minimal effort, which the later ones
	// refuse.
	{[]string{"gpt-5", "gpt-5-20*", "gpt-5-mini*", "gpt-5-nano*"}, Profile{Family: "gpt-5", ContextWindow: 272_000, WebSearch: true,
		ReasoningLevels: []string{"minimal", "low", "medium", "high"}, DefaultReasoning: "medium",
		Images: true, ParallelToolCalls: true, ToolOutputTokens: defaultToolOutputTokens, PatchStyle: PatchFreeform, ShellStyle: ShellExec,
		Prompt: PromptGPT5, Verbosity: "low"}},
	{[]string{"gpt-5*"}, Profile{Family: "gpt-5.x", ContextWindow: 272_000, WebSearch: true,
		ReasoningLevels: []string{"low", "medium", "high", "xhigh"}, DefaultReasoning: "medium",
		Images: true, ParallelToolCalls: true, ToolOutputTokens: defaultToolOutputTokens, PatchStyle: PatchFreeform, ShellStyle: ShellExec,
		Prompt: PromptGPT5, Verbosity: "low"}},
	{[]string{"gpt-4.1*"}, Profile{Family: "gpt-4.1", ContextWindow: 1_047_576, DefaultReasoning: "none", WebSearch: true,
		Images: true, ParallelToolCalls: true, ToolOutputTokens: defaultToolOutputTokens, PatchStyle: PatchFunction, ShellStyle: ShellCommand,
		Prompt: PromptGeneral}},
	{[]string{"o3*", "o4-mini*", "o1*"}, Profile{Family: "o-series", ContextWindow: 200_000,
		ReasoningLevels: []string{"low", "medium", "high"}, DefaultReasoning: "medium",
		Images: true, ParallelToolCalls: true, ToolOutputTokens: defaultToolOutputTokens, PatchStyle: PatchFunction, ShellStyle: ShellCommand,
		Prompt: PromptGeneral}},
	{[]string{"gpt-4o*", "chatgpt-4o*"}, Profile{Family: "gpt-4o", ContextWindow: 128_000, DefaultReasoning: "none", WebSearch: true,
		Images: true, ParallelToolCalls: true, ToolOutputTokens: defaultToolOutputTokens, ShellStyle: ShellCommand,
		Prompt: PromptGeneral}},
}

// Models are the models editors offer to choose from (the model config
// option): one or two of each family above, newest first. Any other model
// is still used when HEARTH_MODEL names it.
var Models = []string{"gpt-5.3-codex", "gpt-5.2-codex", "gpt-5.4", "gpt-5.2", "gpt-4.1", "o3", "o4-mini", "gpt-4o"}

// FallbackWindow is the window, in tokens, a model's usage is shown
// against (ACP's usage_update needs a size) when its window is not known:
// no profile row gives one and HEARTH_CONTEXT_WINDOW is unset. It is for
// display only: such a model's session still compacts only when the
// server refuses a request for its length. 128,000 is the smallest window
// of the current OpenAI models, so the meter fills early rather than late.
const FallbackWindow = 128_000

// unknownProfile is what a model no row matches gets: no known window (so
// compaction waits for the server's refusal), reasoning asked for at
// medium with every level allowed (as before profiles: the default model
// family reasons; a model that does not is told with
// HEARTH_REASONING_EFFORT=none), images and parallel calls allowed (the
// server refuses what it cannot take, with its own words), apply_patch as
// a function (any model can call a function; only trained families get the
// grammar), the default tool-output budget, the general guidance and no
// text.verbosity (not every model takes it).
var unknownProfile = Profile{Family: "unknown", ReasoningLevels: []string{"minimal", "low", "medium", "high", "xhigh"},
	DefaultReasoning: "medium", Images: true, ParallelToolCalls: true, ToolOutputTokens: defaultToolOutputTokens,
	PatchStyle: PatchFunction, ShellStyle: ShellCommand, Prompt: PromptGeneral}

// ProfileOf returns the profile of model's family, or the safe defaults of
// an unknown model. The returned value shares nothing with the table.
func ProfileOf(model string) Profile {
	for _, row := range profiles {
		for _, pat := range row.patterns {
			if ok, _ := path.Match(pat, model); ok {
				return row.Profile.clone()
			}
		}
	}
	return unknownProfile.clone()
}

func (p Profile) clone() Profile {
	p.ReasoningLevels = slices.Clone(p.ReasoningLevels)
	return p
}

// Reasons reports whether the family takes a reasoning effort.
func (p Profile) Reasons() bool { return len(p.ReasoningLevels) > 0 }

// Takes reports whether the family accepts reasoning effort e: one of its
// levels, or "none" (no reasoning object is sent).
func (p Profile) Takes(e string) bool { return e == "none" || slices.Contains(p.ReasoningLevels, e) }
