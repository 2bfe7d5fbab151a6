package wsdeflate

import (
	"bytes"
	"compress/flate"
)

// emitAt is how much compressed output a message gathers before it goes
// out as a fragment of its own: a message of up to this much compressed
// is one frame.
const emitAt = 32 << 10

// fastAfter is how much of one message is compressed at the chosen level
// before the rest goes at BestSpeed: on a large message (a long
// conversation's full create) the default level costs 3.5× the CPU of
// BestSpeed for 13% fewer bytes (BenchmarkLargeCreate), while on the
// small creates of a chained turn it is both smaller and faster.
const fastAfter = 256 << 10

// encoder transcodes the frames gorilla writes into the frames that go on
// the wire: data messages compressed, everything else unchanged. It lives
// as long as its Conn and is the writing goroutine's alone.
type encoder struct {
	masked   bool // the client's side: our frames are masked (gorilla's too)
	on       bool // compress data messages (negotiated, and allowed our window)
	takeover bool // keep the compressor's window from message to message
	min      int  // a one-frame message under this many bytes goes uncompressed
	level    int
	fastAt   int64 // fastAfter; a field so tests can switch early

	fw   *flate.Writer
	buf  bytes.Buffer // the compressor's output not yet framed
	fed  int64        // the current message's bytes fed so far
	fast bool         // fw is the BestSpeed one a large message switched to
	hist []byte       // the last window (or more) of what fw was fed

	hdr     []byte // the header being gathered
	cur     header // the frame whose payload is arriving
	left    int64  // its payload bytes still to come
	pos     int    // position in its payload, for unmasking
	pass    bool   // the frame passes unchanged
	squeeze bool   // the message being written is compressed
	op      byte   // its opcode
	sent    bool   // a fragment of it has gone out
	key     [4]byte

	out     []byte // what this Write puts on the wire
	scratch []byte // a chunk unmasked
}

// write transcodes p and returns what goes on the wire (valid until the
// next call).
func (e *encoder) write(p []byte) ([]byte, error) {
	e.out = e.out[:0]
	for len(p) > 0 {
		if e.left == 0 { // between frames: a header comes next
			n, err := e.gather(p)
			if err != nil {
				return nil, err
			}
			p = p[n:]
			continue
		}
		n := min(int64(len(p)), e.left)
		chunk := p[:n]
		p = p[n:]
		e.left -= n
		if e.pass {
			e.out = append(e.out, chunk...)
		} else if err := e.compress(chunk); err != nil {
			return nil, err
		}
		if e.left == 0 {
			if err := e.endFrame(); err != nil {
				return nil, err
			}
		}
	}
	return e.out, nil
}

// gather collects header bytes from p; once the header is whole it starts
// the frame. It returns how many bytes of p it took.
func (e *encoder) gather(p []byte) (int, error) {
	took := 0
	if len(e.hdr) < 2 {
		k := min(2-len(e.hdr), len(p))
		e.hdr = append(e.hdr, p[:k]...)
		took += k
		if len(e.hdr) < 2 {
			return took, nil
		}
	}
	need := headerSize(e.hdr[1])
	k := min(need-len(e.hdr), len(p)-took)
	e.hdr = append(e.hdr, p[took:took+k]...)
	took += k
	if len(e.hdr) < need {
		return took, nil
	}
	h, err := parseHeader(e.hdr)
	e.hdr = e.hdr[:0]
	if err != nil {
		return took, err
	}
	return took, e.begin(h)
}

// begin starts frame h: it decides whether the frame passes unchanged or
// feeds the compressor.
func (e *encoder) begin(h header) error {
	e.cur, e.left, e.pos = h, h.length, 0
	switch {
	case h.control() || h.rsv != 0:
		e.pass = true
	case h.op != opContinuation:
		e.squeeze = e.on && !(h.fin && h.length < int64(e.min))
		e.pass = !e.squeeze
		e.op, e.sent, e.key = h.op, false, h.key
		if e.squeeze && (e.fw == nil || e.fast) {
			if err := e.prime(e.level); err != nil {
				return err
			}
			e.fast = false
		}
	default:
		e.pass = !e.squeeze
	}
	if e.pass {
		e.out = appendHeader(e.out, h)
	}
	if h.length == 0 {
		return e.endFrame()
	}
	return nil
}

// compress feeds a chunk of a compressed message's payload (masked as
// gorilla wrote it) to the compressor.
func (e *encoder) compress(chunk []byte) error {
	plain := chunk
	if e.cur.masked {
		e.scratch = append(e.scratch[:0], chunk...) // gorilla's buffer is not ours to change
		e.pos = mask(e.cur.key, e.pos, e.scratch)
		plain = e.scratch
	}
	if err := e.feed(plain); err != nil {
		return err
	}
	if e.buf.Len() >= emitAt {
		e.fragment(false, e.buf.Bytes())
		e.buf.Reset()
	}
	return nil
}

// endFrame ends the current frame; at the end of a compressed message it
// flushes the compressor and sends the rest with FIN.
func (e *encoder) endFrame() error {
	if e.pass || !e.cur.fin {
		return nil
	}
	if err := e.fw.Flush(); err != nil {
		return err
	}
	b := e.buf.Bytes()
	e.fragment(true, b[:len(b)-4]) // a sync flush ends with 00 00 ff ff: the receiver adds it back
	e.buf.Reset()
	e.squeeze, e.fed = false, 0
	if !e.takeover {
		e.hist = e.hist[:0]
		if !e.fast {
			e.fw.Reset(&e.buf)
		}
	}
	return nil
}

// feed compresses plain, switching to BestSpeed once the message is past
// fastAt (see fastAfter).
func (e *encoder) feed(plain []byte) error {
	limit := e.fastAt
	if limit == 0 {
		limit = fastAfter
	}
	if !e.fast && e.level != flate.BestSpeed && e.fed+int64(len(plain)) > limit {
		n := max(limit-e.fed, 0)
		if err := e.write1(plain[:n]); err != nil {
			return err
		}
		plain = plain[n:]
		if err := e.fw.Flush(); err != nil { // end on a byte boundary: the next compressor's blocks follow
			return err
		}
		if err := e.prime(flate.BestSpeed); err != nil {
			return err
		}
		e.fast = true
	}
	return e.write1(plain)
}

// write1 feeds p to fw and keeps the history a successor compressor needs.
func (e *encoder) write1(p []byte) error {
	if _, err := e.fw.Write(p); err != nil {
		return err
	}
	e.fed += int64(len(p))
	switch {
	case e.level == flate.BestSpeed: // never switches, and BestSpeed takes no dictionary
	case len(p) >= window:
		e.hist = append(e.hist[:0], p[len(p)-window:]...)
	default:
		e.hist = append(e.hist, p...)
		if len(e.hist) > 2*window {
			e.hist = e.hist[:copy(e.hist, e.hist[len(e.hist)-window:])]
		}
	}
	return nil
}

// prime makes fw a compressor at level that goes on from the stream so
// far: primed with its last window (none when no window is kept).
func (e *encoder) prime(level int) error {
	dict := e.hist[max(len(e.hist)-window, 0):]
	fw, err := flate.NewWriterDict(&e.buf, level, dict)
	if err != nil {
		return err
	}
	e.fw = fw
	return nil
}

// fragment appends one frame of the compressed message: the first carries
// its opcode and RSV1, the others are continuations.
func (e *encoder) fragment(fin bool, payload []byte) {
	h := header{fin: fin, op: opContinuation, masked: e.masked, key: e.key, length: int64(len(payload))}
	if !e.sent {
		h.op, h.rsv = e.op, rsv1Bit
		e.sent = true
	}
	e.out = appendHeader(e.out, h)
	start := len(e.out)
	e.out = append(e.out, payload...)
	mask(h.key, 0, e.out[start:])
}
