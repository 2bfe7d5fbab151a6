package session

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
)

// hearth's guidance to the model is in its own words, one text per prompt
// family (Profile.Prompt), each written for what that family was trained
// to expect: the codex models (terse, tool-first, trained on apply_patch
// and a shell), the other gpt-5 models (preambles and plans shown by
// example), and every other model (general). Each covers how to work in
// the user's repository through their editor, where instructions come
// from (the environment context, AGENTS.md and their precedence),
// preambles, plans and progress, ambition against precision, checking the
// work (the mode's own policy is in the permissions message the daemon
// sends), editing safely, the tools on offer and the final answer.
//
// A developer message at the start of the chain rather than the
// instructions: the instructions are not carried by previous_response_id,
// so they would be resent with every request (7–10 KB a create, most of
// an incremental request's bytes), while an input item is sent once per
// baseline — the warm-up's, a full request's, a compacted view's — and
// the chain carries it from there. It is not stored in the transcript:
// the line puts it first in every full input (request.go), so a
// compaction's new view begins with it again, a session stored before the
// guidance was an input item gets it at its next baseline, and a new
// version, another model or another set of tools reaches a session at its
// next full request (a changed first item is a changed prefix: the
// incremental rule sends that request in full).
//
// The texts are templates of the tools offered: a section for a tool that
// is not offered is left out, and the shell is named by the tool the
// family has (exec_command, or shell). They are versioned: changing
// guidance/<family>-vN.md means a new file and a new GuidanceVersion
// (guidance_test.go records each file's sha256).

// GuidanceVersion is the version of the guidance texts (the N of
// guidance/<family>-vN.md).
const GuidanceVersion = 2

//go:embed guidance/*-v2.md
var guidanceFiles embed.FS

// GuidanceFiles are the guidance templates of this version by prompt
// family, as embedded.
func GuidanceFiles() map[string]string {
	out := map[string]string{}
	for _, family := range []string{PromptCodex, PromptGPT5, PromptGeneral} {
		b, err := guidanceFiles.ReadFile(guidanceFile(family))
		if err != nil {
			panic(fmt.Sprintf("session: the guidance of %s is not embedded: %v", family, err))
		}
		out[family] = string(b)
	}
	return out
}

func guidanceFile(family string) string {
	return fmt.Sprintf("guidance/%s-v%d.md", family, GuidanceVersion)
}

// guidanceTemplates are GuidanceFiles parsed, once per process.
var guidanceTemplates = func() map[string]*template.Template {
	out := map[string]*template.Template{}
	for family, text := range GuidanceFiles() {
		out[family] = template.Must(template.New(family).Option("missingkey=error").Parse(text))
	}
	return out
}()

// guidanceTools is what a guidance template is rendered with: the tools on
// offer. A value built per render.
type guidanceTools struct {
	names map[string]bool
	// Shell names the shell tool offered (exec_command before shell), ""
	// when there is none.
	Shell string
	// MCP: tools of the user's MCP servers are offered (mcp__ names).
	MCP bool
}

// Has reports whether the tool name is offered.
func (g guidanceTools) Has(name string) bool { return g.names[name] }

// GuidanceFor is the guidance of prompt family (Profile.Prompt; an unknown
// family gets the general one) for a session offered the tools named.
func GuidanceFor(family string, tools []string) string {
	t, ok := guidanceTemplates[family]
	if !ok {
		t = guidanceTemplates[PromptGeneral]
	}
	g := guidanceTools{names: map[string]bool{}}
	for _, name := range tools {
		g.names[name] = true
		g.MCP = g.MCP || strings.HasPrefix(name, "mcp__")
	}
	for _, shell := range []string{"exec_command", "shell"} {
		if g.names[shell] {
			g.Shell = shell
			break
		}
	}
	var b strings.Builder
	if err := t.Execute(&b, g); err != nil {
		panic(fmt.Sprintf("session: the guidance of %s does not render: %v", family, err)) // the tests render every family
	}
	return tidy(b.String())
}

// tidy folds the blank lines a left-out section leaves into one, and ends
// the text with one newline.
func tidy(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	out := lines[:0]
	for i, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" && i > 0 && out[len(out)-1] == "" {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

// toolNames are the names of the tools specs offer: a function's or custom
// tool's name, a hosted tool's type (web_search).
func toolNames(specs []json.RawMessage) []string {
	names := make([]string, 0, len(specs))
	for _, spec := range specs {
		var v struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		if json.Unmarshal(spec, &v) != nil {
			continue
		}
		if v.Name != "" {
			names = append(names, v.Name)
		} else if v.Type != "" {
			names = append(names, v.Type)
		}
	}
	return names
}
