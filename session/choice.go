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
// first) and the window (0 when the model's is not known).
func (c *Conversation) ContextUsage() (used, size int) {
	in, out := c.tr.Usage()
	return in + out, c.Config().ContextWindow
}

// UsageSink is a Sink that shows how full the context is. A turn's sink
// that implements it hears, after each of the turn's responses, the
// tokens in the context and the window (only when the window is known).
type UsageSink interface {
	Usage(used, size int)
}

// tellUsage tells sink how full the context is after a response.
func (l *line) tellUsage(sink Sink) {
	if a, ok := sink.(*attemptSink); ok {
		sink = a.Sink // a request's attempt: the turn's own sink is inside
	}
	u, ok := sink.(UsageSink)
	if !ok {
		return
	}
	in, out := l.tr.Usage()
	if used, size := in+out, l.config().ContextWindow; used > 0 && size > 0 {
		u.Usage(used, size)
	}
}

// Choice is the conversation's own model and effort ("": the Client's).
func (c *Conversation) Choice() Choice { return *c.line.choice.Load() }
