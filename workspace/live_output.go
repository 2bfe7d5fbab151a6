package workspace

// WithLive returns a copy of ts whose shell calls show their output while
// the command runs: show gets the output so far (its head and tail, the
// middle counted, as the final output is), a tenth of a second after output
// first comes and then at most every quarter of a second while it changes: a
// command that ends sooner shows its output in its result alone. show runs on a
// goroutine of the call, one call at a time, and never after the call
// returned; it must not block for long. What the model gets is unchanged.
// The copy lives for one call.
func (ts *Toolset) WithLive(show func(output string)) *Toolset {
	c := *ts
	c.live = show
	return &c
}
