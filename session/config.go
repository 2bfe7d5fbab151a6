package session

import (
	"time"

	"github.com/hearthd/hearth/session/responses"
)

// DefaultModel is the model used when HEARTH_MODEL is unset.
const DefaultModel = "gpt-5.3-codex"

// DefaultReasoningSummary is reasoning.summary when
// HEARTH_REASONING_SUMMARY is unset; the effort's default is the model
// profile's (Profile.DefaultReasoning).
const DefaultReasoningSummary = "auto"

// ReasoningEfforts and ReasoningSummaries are the values the API accepts,
// plus "none", which leaves the field out.
var (
	ReasoningEfforts   = []string{"none", "minimal", "low", "medium", "high", "xhigh"}
	ReasoningSummaries = []string{"none", "auto", "concise", "detailed"}
)

// Config is the model-API configuration of a Client: what the agent loop
// asks of the model and, passed on to its transport (Transport), how the
// API is reached. A plain value; a Client holds a copy, replaced whole by
// Reconfigure.
type Config struct {
	// Config is how the API is reached, handed to the transport as it is
	// (Transport); responses.Config says what each field does.
	responses.Config

	Model string
	// Profile is what hearth knows of Model's family (ProfileOf, filled by
	// WithDefaults): the defaults below come from it.
	Profile Profile
	// Instructions are sent, byte-identical, on every request ("": none;
	// hearth's daemon sends none: its guidance goes in the chain).
	Instructions string
	// Guidance: every baseline — a full request's input, the warm-up's,
	// a compacted view's — begins with hearth's guidance for the model's
	// family and the tools on offer (GuidanceFor), one developer message
	// the chain then carries (guidance.go).
	Guidance bool

	// ReasoningEffort is the request's reasoning.effort; "none" sends no
	// reasoning object (models without reasoning); "" is the profile's
	// default. ReasoningSummary is
	// reasoning.summary ("none": no summaries, so no thoughts shown).
	// With reasoning on every request includes reasoning.encrypted_content.
	ReasoningEffort  string
	ReasoningSummary string

	WarmupTimeout     time.Duration // total deadline of a warm-up, shared with the first turn's wait
	FirstEventTimeout time.Duration // send → first event of a response
	IdleTimeout       time.Duration // silence between two events of a response (only its own count)

	// DisableIncremental sends every request in full (benchmarks compare).
	DisableIncremental bool

	MaxAttempts  int           // attempts of one model request (retries of what is safe to retry)
	MaxRetryWait time.Duration // longest single wait before a retry, server hints included

	// ContextWindow is the model's input window in tokens; 0 = the
	// profile's, none if it has none.
	// Past CompactAt of it (default 0.8) a conversation compacts before
	// its next request; a context_length_exceeded refusal compacts too.
	ContextWindow int
	CompactAt     float64
	// Compaction is how a conversation compacts: CompactLocal (a summary
	// the model writes, the default) or CompactServer (the API's own
	// compaction endpoint, POST {base}/responses/compact, with the local
	// summary as the fallback when it fails).
	Compaction string

	// ToolOutputTokens bounds one tool's output as the model sees it
	// (ClipOutput); 0 = the profile's. ToolOutputBudget is what applies.
	ToolOutputTokens int

	// What WithDefaults took from Profile rather than from the user, so a
	// session's own model (Choose) brings its own instead.
	profileWindow, profileEffort, profileTools bool
}

// Compaction modes (Config.Compaction, HEARTH_COMPACTION).
const (
	CompactLocal  = "local"
	CompactServer = "server"
)

// ToolOutputBudget is the tokens one tool output may take in the model's
// view: ToolOutputTokens, and with a known window at most a quarter of it,
// so that a compaction can always keep the running turn's outputs.
func (c Config) ToolOutputBudget() int {
	n := c.ToolOutputTokens
	if c.ContextWindow > 0 && (n <= 0 || n > c.ContextWindow/4) {
		n = c.ContextWindow / 4
	}
	return n
}

// Transport is the part of c the Responses transport reads.
func (c Config) Transport() responses.Config { return c.Config }

// WithDefaults fills the zero fields with hearth's defaults: the
// transport's (responses.Config.WithDefaults) and the agent loop's. The
// silence timeouts are generous: reasoning models can think for minutes.
func (c Config) WithDefaults() Config {
	c.Config = c.Config.WithDefaults()
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.Profile.Family == "" {
		c.Profile = ProfileOf(c.Model)
	}
	if c.ReasoningEffort == "" || !c.Profile.Takes(c.ReasoningEffort) {
		// An effort the family refuses (minimal to a gpt-5.x model) is
		// never sent: the API would refuse every request.
		c.ReasoningEffort = c.Profile.DefaultReasoning
		c.profileEffort = true
	}
	if c.ReasoningSummary == "" {
		c.ReasoningSummary = DefaultReasoningSummary
	}
	if c.ContextWindow == 0 {
		c.ContextWindow = c.Profile.ContextWindow
		c.profileWindow = true
	}
	if c.CompactAt <= 0 || c.CompactAt >= 1 {
		c.CompactAt = 0.8
	}
	if c.Compaction == "" {
		c.Compaction = CompactLocal
	}
	if c.ToolOutputTokens == 0 {
		c.ToolOutputTokens = c.Profile.ToolOutputTokens
		c.profileTools = true
	}
	if c.WarmupTimeout == 0 {
		c.WarmupTimeout = 15 * time.Second
	}
	if c.FirstEventTimeout == 0 {
		c.FirstEventTimeout = 5 * time.Minute
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 5 * time.Minute
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 4
	}
	if c.MaxRetryWait == 0 {
		c.MaxRetryWait = time.Minute
	}
	return c
}

// Choose is c (with its defaults) for a session that chose its own model
// and reasoning effort ("": the configured one). Another model brings its
// profile, and its window unless HEARTH_CONTEXT_WINDOW set one; the effort
// is the chosen one, else the configured one when the model takes it, else
// the model's default. An effort the model does not take is never sent.
func (c Config) Choose(model, effort string) Config {
	c = c.WithDefaults()
	if model != "" && model != c.Model {
		c.Model, c.Profile = model, ProfileOf(model)
		if c.profileWindow {
			c.ContextWindow = c.Profile.ContextWindow
		}
		if c.profileTools {
			c.ToolOutputTokens = c.Profile.ToolOutputTokens
		}
		if c.profileEffort || !c.Profile.Takes(c.ReasoningEffort) {
			c.ReasoningEffort = c.Profile.DefaultReasoning
		}
	}
	if effort != "" && c.Profile.Takes(effort) {
		c.ReasoningEffort = effort
	}
	return c
}
