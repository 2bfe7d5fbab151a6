package session

import (
	"slices"
	"strings"
	"testing"
)

// Each family hearth knows is found by its model names, dated snapshots
// included; a model no row matches gets the safe defaults.
func TestProfileOf(t *testing.T) {
	for _, tc := range []struct {
		model, family string
		window        int
		reasoning     string
		patch         string
	}{
		{"gpt-5.3-codex", "gpt-5.x-codex", 272_000, "medium", PatchFreeform},
		{"gpt-5.2-codex", "gpt-5.x-codex", 272_000, "medium", PatchFreeform},
		{"gpt-5-codex", "gpt-5.x-codex", 272_000, "medium", PatchFreeform},
		{"gpt-5.1-codex-mini", "gpt-5.x-codex", 272_000, "medium", PatchFreeform},
		{"gpt-5.3-codex-spark", "gpt-5.x-codex", 272_000, "medium", PatchFreeform},
		{"codex-mini-latest", "gpt-5.x-codex", 272_000, "medium", PatchFreeform},
		{"gpt-5.2", "gpt-5.x", 272_000, "medium", PatchFreeform},
		{"gpt-5-mini-2025-08-07", "gpt-5", 272_000, "medium", PatchFreeform},
		{"gpt-5", "gpt-5", 272_000, "medium", PatchFreeform},
		{"gpt-5.5", "gpt-5.x", 272_000, "medium", PatchFreeform},
		{"gpt-4.1", "gpt-4.1", 1_047_576, "none", PatchFunction},
		{"gpt-4.1-mini-2025-04-14", "gpt-4.1", 1_047_576, "none", PatchFunction},
		{"o3", "o-series", 200_000, "medium", PatchFunction},
		{"o4-mini", "o-series", 200_000, "medium", PatchFunction},
		{"gpt-4o-2024-08-06", "gpt-4o", 128_000, "none", ""},
		{"sim-model", "unknown", 0, "medium", PatchFunction},
		{"", "unknown", 0, "medium", PatchFunction},
	} {
		p := ProfileOf(tc.model)
		if p.Family != tc.family || p.ContextWindow != tc.window || p.DefaultReasoning != tc.reasoning || p.PatchStyle != tc.patch {
			t.Errorf("ProfileOf(%q) = %+v; want family %s, window %d, reasoning %s, patch %q", tc.model, p, tc.family, tc.window, tc.reasoning, tc.patch)
		}
		if p.Reasons() != (tc.reasoning != "none") {
			t.Errorf("ProfileOf(%q).Reasons() = %v", tc.model, p.Reasons())
		}
		if p.Reasons() && !slices.Contains(p.ReasoningLevels, p.DefaultReasoning) {
			t.Errorf("ProfileOf(%q): default %s is not one of its levels %v", tc.model, p.DefaultReasoning, p.ReasoningLevels)
		}
		wantShell := ShellCommand // exec_command for the families trained on it: the gpt-5 ones
		if strings.HasPrefix(tc.family, "gpt-5") {
			wantShell = ShellExec
		}
		if p.ToolOutputTokens <= 0 || p.ShellStyle != wantShell {
			t.Errorf("ProfileOf(%q) = %+v: no tool-output budget, or shell style not %s", tc.model, p, wantShell)
		}
	}
	// Later gpt-5 models refuse a minimal effort; the first ones take it.
	if slices.Contains(ProfileOf("gpt-5.2").ReasoningLevels, "minimal") || !slices.Contains(ProfileOf("gpt-5-mini").ReasoningLevels, "minimal") {
		t.Error("minimal is offered to gpt-5.x, or not to gpt-5")
	}
	// Each family has its guidance; the gpt-5 families a verbosity the API takes.
	for _, m := range []string{"gpt-5.3-codex", "gpt-5.2", "gpt-5", "o3", "gpt-4o", "sim-model"} {
		p := ProfileOf(m)
		if p.Prompt == "" || (strings.HasPrefix(m, "gpt-5") != (p.Verbosity != "")) || (p.Verbosity != "" && !slices.Contains([]string{"low", "medium", "high"}, p.Verbosity)) {
			t.Errorf("ProfileOf(%q): prompt %q, verbosity %q", m, p.Prompt, p.Verbosity)
		}
	}
	// What a caller does with its profile does not reach the table.
	p := ProfileOf("gpt-5.2")
	p.ReasoningLevels[0] = "changed"
	if ProfileOf("gpt-5.2").ReasoningLevels[0] == "changed" {
		t.Fatal("ProfileOf shares its table's slices")
	}
}

// The configuration's defaults come from the profile; what the user set
// wins.
func TestConfigDefaultsFromProfile(t *testing.T) {
	c := Config{Model: "gpt-4o"}.WithDefaults()
	if c.ReasoningEffort != "none" || c.ContextWindow != 128_000 || c.Profile.Family != "gpt-4o" {
		t.Fatalf("gpt-4o: effort %q, window %d, family %s", c.ReasoningEffort, c.ContextWindow, c.Profile.Family)
	}
	set, err := buildSettings(c, nil, "s")
	if err != nil || set.Reasoning != nil || set.Include != nil {
		t.Fatalf("a model that does not reason is sent reasoning: %+v, %v", set, err)
	}
	c = Config{Model: "gpt-5.3-codex", ContextWindow: 12_000, ReasoningEffort: "high"}.WithDefaults()
	if c.ReasoningEffort != "high" || c.ContextWindow != 12_000 {
		t.Fatalf("overrides lost: effort %q, window %d", c.ReasoningEffort, c.ContextWindow)
	}
}

// Every model editors are offered is one hearth knows the family of.
func TestModelsHaveProfiles(t *testing.T) {
	for _, m := range Models {
		if p := ProfileOf(m); p.Family == "unknown" || p.ContextWindow == 0 {
			t.Errorf("%s: profile %+v", m, p)
		}
	}
}

// Choose: a session's model brings its profile's window and default
// effort, unless the user set them; an effort the model does not take is
// never chosen.
func TestConfigChoose(t *testing.T) {
	base := Config{Model: "gpt-5.3-codex"}.WithDefaults()
	for _, tc := range []struct {
		name          string
		cfg           Config
		model, effort string
		wantEffort    string
		wantWindow    int
	}{
		{"nothing chosen", base, "", "", "medium", 272_000},
		{"effort only", base, "", "xhigh", "xhigh", 272_000},
		{"an effort the model does not take", base, "", "minimal", "medium", 272_000},
		{"a model that does not reason", base, "gpt-4o", "", "none", 128_000},
		{"its effort", base, "gpt-4o", "high", "none", 128_000},
		{"o-series", base, "o3", "high", "high", 200_000},
		{"the user's window stays", Config{Model: "gpt-5.3-codex", ContextWindow: 50_000}, "o3", "", "medium", 50_000},
		{"the user's effort stays when taken", Config{Model: "gpt-5.3-codex", ReasoningEffort: "high"}, "o3", "", "high", 200_000},
		{"the user's effort goes when not", Config{Model: "gpt-5.3-codex", ReasoningEffort: "xhigh"}, "o3", "", "medium", 200_000},
		{"an effort the configured model refuses", Config{Model: "gpt-5.2", ReasoningEffort: "minimal"}, "", "", "medium", 272_000},
		{"an effort the first gpt-5 takes", Config{Model: "gpt-5-mini", ReasoningEffort: "minimal"}, "", "", "minimal", 272_000},
	} {
		c := tc.cfg.Choose(tc.model, tc.effort)
		if c.ReasoningEffort != tc.wantEffort || c.ContextWindow != tc.wantWindow {
			t.Errorf("%s: effort %q, window %d; want %q, %d", tc.name, c.ReasoningEffort, c.ContextWindow, tc.wantEffort, tc.wantWindow)
		}
		if tc.model != "" && (c.Model != tc.model || c.Profile.Family != ProfileOf(tc.model).Family) {
			t.Errorf("%s: model %s, family %s", tc.name, c.Model, c.Profile.Family)
		}
	}
}
