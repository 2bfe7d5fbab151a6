package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/hearthd/hearth/session/responses"
)

// settingsFrom is what a conversation's settings are built from; the
// settings and their encoding are kept until it changes (settingsCache).
type settingsFrom struct {
	model, instructions, effort, summary string
	guidance                             bool
	specs                                []json.RawMessage
}

func (a settingsFrom) same(b settingsFrom) bool {
	return a.model == b.model && a.instructions == b.instructions && a.effort == b.effort &&
		a.summary == b.summary && a.guidance == b.guidance && slices.EqualFunc(a.specs, b.specs, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

// settingsCache holds a conversation's last settings and their encoding:
// encoding the tools and instructions (kilobytes) on every request cost
// each round trip tens of microseconds. It lives as long as its
// Conversation.
type settingsCache struct {
	mu   sync.Mutex
	from settingsFrom
	set  responses.Settings
	key  []byte // set.key(); nil until the first request
	// head is what every baseline's input begins with: the guidance
	// message (Config.Guidance), or nothing.
	head []json.RawMessage
}

// settings are this conversation's non-input request fields, with their
// encoding (Settings.Key), rebuilt only when the configuration or the
// tools change. A tool whose schema does not encode fails it.
func (l *line) settings() (responses.Settings, []byte, error) {
	cfg := l.config()
	from := settingsFrom{model: cfg.Model, instructions: cfg.Instructions, effort: cfg.ReasoningEffort, summary: cfg.ReasoningSummary,
		guidance: cfg.Guidance}
	if l.box.tools != nil {
		from.specs = l.box.tools.Specs()
	}
	k := &l.setCache
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.key == nil || !k.from.same(from) {
		set, err := buildSettings(cfg, from.specs, l.cacheKey)
		if err != nil {
			return responses.Settings{}, nil, err
		}
		k.from, k.set = from, set
		k.key = k.set.Key()
		k.head = nil
		if cfg.Guidance {
			k.head = []json.RawMessage{DeveloperMessage(GuidanceFor(cfg.Profile.Prompt, toolNames(from.specs)))}
		}
	}
	return k.set, k.key, nil
}

// head is what every baseline of the conversation begins with, before the
// transcript's view: the guidance for its model and tools
// (Config.Guidance), built with the settings and kept as long as they
// are. Shared: callers copy before appending.
func (l *line) head() ([]json.RawMessage, error) {
	if _, _, err := l.settings(); err != nil {
		return nil, err
	}
	l.setCache.mu.Lock()
	defer l.setCache.mu.Unlock()
	return l.setCache.head, nil
}

// buildSettings makes the settings of a conversation.
func buildSettings(cfg Config, specs []json.RawMessage, id string) (responses.Settings, error) {
	var tools json.RawMessage
	if len(specs) > 0 {
		var err error
		if tools, err = encodeTools(specs); err != nil {
			return responses.Settings{}, err
		}
	}
	s := responses.Settings{
		Model:          cfg.Model,
		Instructions:   cfg.Instructions,
		Tools:          tools,
		Store:          false,
		PromptCacheKey: id,
	}
	if cfg.ReasoningEffort != "" && cfg.ReasoningEffort != "none" {
		s.Reasoning = &responses.Reasoning{Effort: cfg.ReasoningEffort}
		if cfg.ReasoningSummary != "none" {
			s.Reasoning.Summary = cfg.ReasoningSummary
		}
		s.Include = []string{"reasoning.encrypted_content"}
	}
	if v := cfg.Profile.Verbosity; v != "" {
		s.Text = &responses.Text{Verbosity: v}
	}
	if tools != nil {
		s.ToolChoice = "auto"
		s.ParallelToolCalls = true
	}
	return s, nil
}

// encodeTools is the request's tools list. A spec that is not JSON fails it
// with the tool's name: sending the request without it, or without every
// tool, would let the model believe the tool does not exist.
func encodeTools(specs []json.RawMessage) (json.RawMessage, error) {
	for i, spec := range specs {
		if !json.Valid(spec) {
			return nil, fmt.Errorf("the schema of tool %s is not valid JSON", specName(spec, i))
		}
	}
	b, err := json.Marshal(specs)
	if err != nil {
		return nil, fmt.Errorf("encode the tools: %w", err)
	}
	return b, nil
}

// specName names a tool spec for an error: its "name" when the spec's
// beginning reads as JSON up to it, else its position.
func specName(spec json.RawMessage, i int) string {
	d := json.NewDecoder(bytes.NewReader(spec))
	depth, key := 0, true
	for {
		tok, err := d.Token()
		if err != nil {
			return fmt.Sprintf("#%d", i+1)
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				depth++
			} else {
				depth--
			}
			key = true
			continue
		case string:
			if depth == 1 && key && t == "name" {
				if v, err := d.Token(); err == nil {
					if name, ok := v.(string); ok {
						return fmt.Sprintf("%q", name)
					}
				}
				return fmt.Sprintf("#%d", i+1)
			}
		}
		if depth == 1 {
			key = !key
		}
	}
}
