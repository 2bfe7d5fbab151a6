package session

// NoticeSeverity says how much a notice matters to the user; the values
// are ACP's NoticeSeverity.
type NoticeSeverity string

// The severities of a notice.
const (
	NoticeInfo    NoticeSeverity = "info"
	NoticeWarning NoticeSeverity = "warning"
	NoticeError   NoticeSeverity = "error"
)

// SeveritySink is a Sink that tells notices apart by severity. A turn's
// sink that implements it hears every notice given one (Notify) here
// rather than by Notice.
type SeveritySink interface {
	NoticeWith(severity NoticeSeverity, text string)
}

// Notify tells sink a notice of severity: by NoticeWith when the turn's
// sink has it, else by Notice. A nil sink hears nothing.
func Notify(sink Sink, severity NoticeSeverity, text string) {
	if a, ok := sink.(*attemptSink); ok {
		sink = a.Sink // a request's attempt: the turn's own sink is inside
	}
	if sink == nil {
		return
	}
	if s, ok := sink.(SeveritySink); ok {
		s.NoticeWith(severity, text)
		return
	}
	sink.Notice(text)
}
