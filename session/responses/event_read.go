package responses

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// eventReader parses server events as their frames are read, keeping only
// what the client acts on (Event). A frame is never held whole: the text
// that the done events of an answer repeat (output_text.done,
// content_part.done, a message's output_item.done) is checked and dropped
// as it streams by, and the output items of a terminal event are kept
// once each, at their size. It checks that a frame is one JSON object, as
// encoding/json would, and matches member names as encoding/json matches
// them to the Event's fields.
//
// What one event may keep is bounded (limit: Config.MaxMessage); past it,
// the rest of the frame is still read, for the event's type and lane, and
// the event comes back marked over, so that only its response fails.
//
// An eventReader belongs to one connection's reader goroutine (or one SSE
// stream) and is reused for every frame it reads.
type eventReader struct {
	src   io.Reader
	buf   []byte // the read window: buf[r:w] is unread
	r, w  int
	err   error // src's error once it ended; io.EOF at the frame's end
	size  int64 // bytes of the frame read so far
	limit int64 // most bytes an event may keep
	kept  int64 // bytes the current event keeps so far
	over  bool  // the event would keep more than limit: it keeps no more
	depth int
}

// itemKeep bounds the item an output_item.added or .done event keeps: the
// agent loop reads function calls there (small), never a message's text.
const itemKeep = 64 << 10

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

var errNotJSON = errors.New("not JSON")

func newEventReader(limit int64) *eventReader {
	return &eventReader{buf: make([]byte, 32<<10), limit: limit}
}

// read parses the event in src, which holds one frame.
func (p *eventReader) read(src io.Reader) (*Event, error) {
	p.src, p.r, p.w, p.err, p.size, p.kept, p.over, p.depth = src, 0, 0, nil, 0, 0, false, 0
	defer func() { p.src = nil }()
	e, err := p.event()
	if err == nil {
		p.space()
		if !p.more() && p.err != io.EOF {
			err = p.err
		} else if p.more() {
			err = fmt.Errorf("%w: data after the object", errNotJSON)
		}
	}
	if err != nil {
		if !errors.Is(err, errNotJSON) {
			return nil, fmt.Errorf("server frame unreadable: %w", err)
		}
		return nil, fmt.Errorf("server frame is not JSON: %w", err)
	}
	if e.Type == "" {
		return nil, fmt.Errorf("server frame has no type")
	}
	if p.over {
		e.over = p.size
	}
	return e, nil
}

// sink receives the bytes of a value as it is scanned; a nil sink skips
// them. It holds at most max bytes: past them it drops the value (full).
// A big value gathers in chunks and is copied once, at its size, when it
// is taken (bytes), so it never costs more than twice its size.
type sink struct {
	max    int64
	n      int64
	cur    []byte
	chunks [][]byte
	full   bool
}

const chunkMax = 1 << 20

func (s *sink) add(p []byte) {
	if s == nil || s.full {
		return
	}
	if s.n+int64(len(p)) > s.max {
		s.full, s.cur, s.chunks = true, nil, nil
		return
	}
	s.n += int64(len(p))
	for len(p) > 0 {
		if len(s.cur) == cap(s.cur) {
			if s.cur != nil {
				s.chunks = append(s.chunks, s.cur)
			}
			s.cur = make([]byte, 0, min(max(2*cap(s.cur), 256), chunkMax))
		}
		k := copy(s.cur[len(s.cur):cap(s.cur)], p)
		s.cur = s.cur[:len(s.cur)+k]
		p = p[k:]
	}
}

// bytes returns the value scanned; nil when it was dropped.
func (s *sink) bytes() []byte {
	switch {
	case s.full:
		return nil
	case len(s.chunks) == 0 && (cap(s.cur)-len(s.cur) <= len(s.cur)/8 || len(s.cur) <= 4<<10):
		return s.cur
	}
	b := make([]byte, 0, s.n)
	for _, c := range s.chunks {
		b = append(b, c...)
	}
	return append(b, s.cur...)
}

// capture scans one value, keeping at most max bytes of it and no more
// than the event may still keep; a value the event's limit drops marks the
// event over, and once it is, nothing more is kept.
func (p *eventReader) capture(max int64) (sink, error) {
	budget := p.limit - p.kept
	if p.over {
		budget = 0
	}
	s := sink{max: min(max, budget)}
	err := p.value(&s)
	if s.full && max > budget {
		p.over = true
	}
	return s, err
}

// keep takes what s holds, counted against the event's limit.
func (p *eventReader) keep(s *sink) []byte {
	b := s.bytes()
	p.kept += int64(len(b))
	return b
}

// field scans a member's value into a string field: a string sets it, null
// leaves it, anything else is an error (as encoding/json has it). A string
// over max bytes is dropped; a counted one is kept against the event's
// limit.
func (p *eventReader) field(dst *string, name string, max int64, counted bool) error {
	p.space()
	switch p.peek() {
	case 'n':
		return p.literal(nil, "null")
	case '"':
	default:
		return fmt.Errorf("%w: %s is not a string", errNotJSON, name)
	}
	if b, ok := p.quick(); ok {
		n := int64(len(b)) + 2
		switch {
		case counted && (p.over || p.kept+n > p.limit):
			p.over = true
		case n <= max:
			if counted {
				p.kept += n
			}
			*dst = string(b)
		}
		return nil
	}
	var q []byte
	if counted {
		s, err := p.capture(max)
		if err != nil {
			return err
		}
		q = p.keep(&s)
	} else {
		s := sink{max: max}
		if err := p.str(&s); err != nil {
			return err
		}
		q = s.bytes()
	}
	v, err := unquote(q)
	if err == nil && q != nil {
		*dst = v
	}
	return err
}

// integer scans a member's value into an integer field: null leaves it.
func (p *eventReader) integer(name string, set func(int64)) error {
	p.space()
	if p.peek() == 'n' {
		return p.literal(nil, "null")
	}
	var tok [24]byte
	k, err := p.numberTok(nil, &tok)
	if err != nil {
		return err
	}
	n, perr := strconv.ParseInt(string(tok[:min(k, len(tok))]), 10, 64)
	if perr != nil || k > len(tok) {
		return fmt.Errorf("%w: %s is not an integer", errNotJSON, name)
	}
	set(n)
	return nil
}

// decoded scans a small member value and decodes it into v with
// encoding/json.
func (p *eventReader) decoded(v any, name string) error {
	s, err := p.capture(64 << 10)
	if err != nil {
		return err
	}
	b := p.keep(&s)
	if b == nil {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s: %v", errNotJSON, name, err)
	}
	return nil
}

const smallText = 64 << 10 // type, lane, codes, messages: longer ones are dropped

// The members of an event, and of its response, that the client reads.
var (
	eventNames = []string{"type", "stream_id", "delta", "code", "message", "param",
		"sequence_number", "status", "summary_index", "error", "item", "response", "steer"}
	responseNames = []string{"id", "status", "error", "incomplete_details", "usage", "output"}
)

// event scans the frame's object into an Event.
func (p *eventReader) event() (*Event, error) {
	e := &Event{}
	null, err := p.members(eventNames, func(i int) error {
		switch i {
		case 0:
			return p.field(&e.Type, "type", smallText, false)
		case 1:
			return p.field(&e.StreamID, "stream_id", smallText, false)
		case 2:
			return p.field(&e.Delta, "delta", p.limit, true)
		case 3:
			return p.field(&e.Code, "code", smallText, false)
		case 4:
			return p.field(&e.Message, "message", smallText, false)
		case 5:
			return p.field(&e.Param, "param", smallText, false)
		case 6:
			return p.integer("sequence_number", func(n int64) { e.Seq = &n })
		case 7:
			return p.integer("status", func(n int64) { e.Status = int(n) })
		case 8:
			return p.integer("summary_index", func(n int64) { e.SummaryIndex = int(n) })
		case 9:
			return p.decoded(&e.Error, "error")
		case 10:
			s, err := p.capture(itemKeep)
			if err == nil {
				e.Item = p.keep(&s)
			}
			return err
		case 11:
			return p.response(e)
		case 12:
			return p.decoded(&e.Steer, "steer")
		}
		return p.value(nil)
	})
	if err == nil && null {
		err = fmt.Errorf("%w: null, not an object", errNotJSON)
	}
	return e, err
}

// response scans an event's response object.
func (p *eventReader) response(e *Event) error {
	r := e.Response // a second response member merges into the first, as encoding/json has it
	if r == nil {
		r = &responseBody{}
	}
	null, err := p.members(responseNames, func(i int) error {
		switch i {
		case 0:
			return p.field(&r.ID, "id", smallText, false)
		case 1:
			return p.field(&r.Status, "status", smallText, false)
		case 2:
			return p.decoded(&r.Error, "error")
		case 3:
			return p.decoded(&r.IncompleteDetails, "incomplete_details")
		case 4:
			return p.decoded(&r.Usage, "usage")
		case 5:
			return p.output(r)
		}
		return p.value(nil)
	})
	switch {
	case err != nil:
	case null:
		e.Response = nil
	default:
		e.Response = r
	}
	return err
}

// output scans a response's output items, keeping each once.
func (p *eventReader) output(r *responseBody) error {
	p.space()
	if p.peek() == 'n' {
		r.Output = nil
		return p.literal(nil, "null")
	}
	if p.peek() != '[' {
		return fmt.Errorf("%w: output is not an array", errNotJSON)
	}
	p.r++
	r.Output = []json.RawMessage{}
	p.space()
	if p.peek() == ']' {
		p.r++
		return nil
	}
	for {
		s, err := p.capture(p.limit)
		if err != nil {
			return err
		}
		if it := p.keep(&s); it != nil {
			r.Output = append(r.Output, it)
		}
		p.space()
		switch p.peek() {
		case ',':
			p.r++
		case ']':
			p.r++
			return nil
		default:
			return p.unexpected("',' or ']'")
		}
	}
}
