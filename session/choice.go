package session

// Choice is a session's own model and reasoning effort, chosen by its
// editor (the ACP config options); "" keeps the Client's configuration
// (HEARTH_MODEL, HEARTH_REASONING_EFFORT). A plain value.
type Choice struct {
	Model  string
	Effort string
}

// SetChoice changes the conversation's model and reasoning effort from the
// next request on. The request's settings change with them, so that
// request is full ("instructions, tools or model changed"); a request in
// flight keeps what it was sent with.
func (c *Conversation) SetChoice(ch Choice) { c.line.choice.Store(&ch) }

// Config is the configuration the conversation's requests are built from:
// the Client's, with the session's Choice applied (Config.Choose).
func (c *Conversation) Config() Config {
	return c.line.config()
}

// ContextUsage is how full the model's context is: the tokens of the last
// response (its input and output, as its usage counted them; 0 before the
// first) and the window to show them against: the model's, or
// FallbackWindow when it is not known.
func (c *Conversation) ContextUsage() (used, size int) {
	in, out := c.tr.Usage()
	return in + out, shownWindow(c.Config().ContextWindow, in+out)
}

// shownWindow is the window usage is shown against: the model's, else
// FallbackWindow, or the tokens used when they are more (a meter past full
// says nothing true).
func shownWindow(window, used int) int {
	if window > 0 {
		return window
	}
	return max(FallbackWindow, used)
}

// UsageSink is a Sink that shows how full the context is. A turn's sink
// that implements it hears, after each of the turn's responses that
// reported usage, the tokens in the context and the window
// (ContextUsage's).
type UsageSink interface {
	Usage(used, size int)
}

// tellUsage tells sink how full the context is after a response, and of
// a rate limit the API says is nearly used up.
func (l *line) tellUsage(sink Sink) {
	if a, ok := sink.(*attemptSink); ok {
		sink = a.Sink // a request's attempt: the turn's own sink is inside
	}
	if sink == nil {
		return
	}
	if n := l.client.api.TakeRateNotice(); n != "" {
		Notify(sink, NoticeWarning, n) // a rate limit nearly used up, as the last answer's headers said
	}
	u, ok := sink.(UsageSink)
	if !ok {
		return
	}
	in, out := l.tr.Usage()
	if used := in + out; used > 0 {
		u.Usage(used, shownWindow(l.config().ContextWindow, used))
	}
}

// Choice is the conversation's own model and effort ("": the Client's).
func (c *Conversation) Choice() Choice { return *c.line.choice.Load() }
