package wsdeflate

import (
	"bufio"
	"compress/flate"
	"errors"
	"io"
)

// window is the deflate window: the most a message may reach back into
// the ones before it.
const window = 32 << 10

// chunk is the largest fragment an inflated message is handed on in.
const chunk = 32 << 10

// tail ends a message's compressed payload for the inflater: the sync
// flush's empty block the sender stripped, then a final empty block so
// that the inflater ends cleanly at the message's end.
var tail = []byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

var errSequence = errors.New("websocket: a compressed message interrupted by another")

// decoder transcodes the frames that arrive into the frames gorilla
// reads: compressed messages inflated, everything else unchanged. It
// lives as long as its Conn and is the reading goroutine's alone.
type decoder struct {
	src      *bufio.Reader
	on       bool // the extension was negotiated
	takeover bool // the peer keeps its window: inflate with the last one
	remask   bool // the server's side: gorilla wants masked frames (a zero key)
	raw      bool // bytes pass as they come: no extension, or no frames (the handshake failed)

	fr   io.ReadCloser // the inflater, reset for each message
	dict []byte        // the last window bytes inflated (takeover)

	out  []byte // frames ready for gorilla
	pass int64  // payload bytes of an unchanged frame still to copy

	msg  bool   // inside a compressed message
	op   byte   // its opcode
	sent bool   // a fragment of it has gone to gorilla
	ctl  []byte // control frames that arrived inside it, not yet handed on
	in   source
	buf  []byte
}

// read fills p with the frames gorilla reads.
func (d *decoder) read(p []byte) (int, error) {
	if d.raw && len(d.out) == 0 {
		return d.src.Read(p)
	}
	for len(d.out) == 0 {
		if d.pass > 0 {
			n, err := d.src.Read(p[:min(int64(len(p)), d.pass)])
			d.pass -= int64(n)
			return n, err
		}
		if err := d.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, d.out)
	d.out = d.out[n:]
	return n, nil
}

// next produces the next frames for gorilla: an inflated fragment, or a
// frame that passes unchanged.
func (d *decoder) next() error {
	if d.msg {
		return d.inflate()
	}
	h, raw, err := readHeader(d.src)
	if err != nil {
		return err
	}
	if !d.on || h.control() || h.op == opContinuation || h.rsv != rsv1Bit {
		// Unchanged; gorilla judges the RSV bits and the sequence.
		d.out = append(d.out[:0], raw...)
		d.pass = h.length
		return nil
	}
	d.msg, d.op, d.sent = true, h.op, false
	d.in = source{d: d, cur: h, left: h.length}
	var dict []byte
	if d.takeover {
		dict = d.dict
	}
	if d.fr == nil {
		d.fr = flate.NewReaderDict(&d.in, dict)
	} else if err := d.fr.(flate.Resetter).Reset(&d.in, dict); err != nil {
		return err
	}
	return d.inflate()
}

// inflate hands on the next piece of the current compressed message.
func (d *decoder) inflate() error {
	if d.buf == nil {
		d.buf = make([]byte, chunk)
	}
	n, err := d.fill(d.buf)
	fin := err == io.EOF
	if err != nil && !fin {
		return err
	}
	if d.takeover {
		d.keep(d.buf[:n])
	}
	d.out = append(d.out[:0], d.ctl...)
	d.ctl = d.ctl[:0]
	h := header{fin: fin, op: opContinuation, masked: d.remask, length: int64(n)}
	if !d.sent {
		h.op, d.sent = d.op, true
	}
	d.out = appendHeader(d.out, h)
	d.out = append(d.out, d.buf[:n]...)
	if fin {
		d.msg = false
	}
	return nil
}

// fill inflates into b until it is full, the message ends (io.EOF), or
// more would wait for the network while some is ready.
func (d *decoder) fill(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		if n > 0 && d.in.wouldWait() {
			return n, nil
		}
		k, err := d.fr.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// keep adds inflated bytes to the window the next message may refer to.
func (d *decoder) keep(b []byte) {
	d.dict = append(d.dict, b...)
	if len(d.dict) > 2*window {
		d.dict = append(d.dict[:0], d.dict[len(d.dict)-window:]...)
	}
}

// readHeader reads one frame header; raw is its bytes as read.
func readHeader(r *bufio.Reader) (header, []byte, error) {
	b, err := r.Peek(2)
	if err != nil {
		return header{}, nil, err
	}
	b, err = r.Peek(headerSize(b[1]))
	if err != nil {
		return header{}, nil, noEOF(err)
	}
	h, err := parseHeader(b)
	if err != nil {
		return header{}, nil, err
	}
	raw := append([]byte(nil), b...)
	_, _ = r.Discard(len(b))
	return h, raw, nil
}

// noEOF turns an end of stream inside a frame into an unexpected one.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// source is the inflater's input: the payloads of one compressed
// message's frames, unmasked, then the tail. One lives per message. Control frames that arrive
// between the message's frames are kept for the decoder to hand on first.
type source struct {
	d     *decoder
	cur   header
	left  int64 // payload bytes of cur still to read
	pos   int   // position in cur's payload
	tail  int   // bytes of the tail given
	ended bool  // the last frame's payload is read
}

// wouldWait reports whether the next byte must come from the network.
func (s *source) wouldWait() bool {
	if s.ended {
		return false
	}
	if s.left > 0 {
		return s.d.src.Buffered() == 0
	}
	return !s.cur.fin && s.d.src.Buffered() < 2
}

func (s *source) ReadByte() (byte, error) {
	if s.left > 0 { // the common case: a byte of the frame's payload
		b, err := s.d.src.ReadByte()
		if err != nil {
			return 0, noEOF(err)
		}
		s.left--
		b ^= s.cur.key[s.pos&3]
		s.pos++
		return b, nil
	}
	var b [1]byte
	if _, err := s.Read(b[:]); err != nil {
		return 0, err
	}
	return b[0], nil
}

func (s *source) Read(p []byte) (int, error) {
	for s.left == 0 {
		if s.cur.fin {
			s.ended = true
			if s.tail == len(tail) {
				return 0, io.EOF
			}
			n := copy(p, tail[s.tail:])
			s.tail += n
			return n, nil
		}
		if err := s.nextFrame(); err != nil {
			return 0, err
		}
	}
	n, err := s.d.src.Read(p[:min(int64(len(p)), s.left)])
	s.left -= int64(n)
	s.pos = mask(s.cur.key, s.pos, p[:n])
	if err != nil && s.left > 0 {
		return n, noEOF(err)
	}
	return n, nil
}

// nextFrame reads the header of the message's next frame, keeping the
// control frames that come first.
func (s *source) nextFrame() error {
	for {
		h, raw, err := readHeader(s.d.src)
		if err != nil {
			return noEOF(err)
		}
		if h.control() {
			s.d.ctl = append(s.d.ctl, raw...)
			start := len(s.d.ctl)
			s.d.ctl = append(s.d.ctl, make([]byte, h.length)...)
			if _, err := io.ReadFull(s.d.src, s.d.ctl[start:]); err != nil {
				return noEOF(err)
			}
			continue
		}
		if h.op != opContinuation || h.rsv != 0 {
			return errSequence
		}
		s.cur, s.left, s.pos = h, h.length, 0
		return nil
	}
}
