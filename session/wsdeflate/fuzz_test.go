package wsdeflate

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
)

// frames parses a stream of frames, unmasking them.
func frames(t *testing.T, b []byte) []struct {
	h header
	p []byte
} {
	t.Helper()
	var out []struct {
		h header
		p []byte
	}
	br := bufio.NewReader(bytes.NewReader(b))
	for {
		h, _, err := readHeader(br)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("frame %d: %v", len(out), err)
		}
		p := make([]byte, h.length)
		if _, err := io.ReadFull(br, p); err != nil {
			t.Fatalf("frame %d payload: %v", len(out), err)
		}
		mask(h.key, 0, p)
		out = append(out, struct {
			h header
			p []byte
		}{h, p})
	}
}

// script turns fuzz bytes into messages, each written in frames of some
// size with a ping after some of them, as gorilla writes.
type script struct{ b []byte }

func (s *script) next() int {
	if len(s.b) == 0 {
		return 0
	}
	v := int(s.b[0])
	s.b = s.b[1:]
	return v
}

// FuzzRoundTrip: messages through the client's encoder, re-fragmented with
// control frames between the pieces, then through the server's decoder,
// arrive as they were sent, whatever the writes' and frames' sizes.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("hello hello hello hello"), []byte{3, 1, 7, 0, 2, 9, 200, 4}, true)
	f.Add(bytes.Repeat([]byte(`{"tools":[1,2,3]}`), 300), []byte{255, 255, 1, 2, 3}, false)
	f.Add([]byte{}, []byte{0, 0, 0}, true)
	f.Fuzz(func(t *testing.T, text, shape []byte, takeover bool) {
		text = text[:min(len(text), 2048)] // long inputs add time, not cases
		sc := &script{b: shape}
		var msgs [][]byte
		var gorilla []byte // what gorilla would write: masked frames, pings between fragments
		for i := 0; i < 1+sc.next()%4; i++ {
			msg := append(bytes.Repeat(text, 1+sc.next()%3), byte(i))
			msgs = append(msgs, msg)
			size := 1 + sc.next()*7
			for off := 0; ; off += size {
				end := min(off+size, len(msg))
				op := byte(opText)
				if off > 0 {
					op = opContinuation
				}
				key := [4]byte{byte(i), 1, byte(off), 3}
				p := append([]byte(nil), msg[off:end]...)
				mask(key, 0, p)
				gorilla = appendHeader(gorilla, header{fin: end == len(msg), op: op, masked: true, key: key, length: int64(len(p))})
				gorilla = append(gorilla, p...)
				if end == len(msg) {
					break
				}
				if sc.next()%2 == 0 {
					gorilla = append(gorilla, 0x89, 0x80, 1, 2, 3, 4) // a masked empty ping
				}
			}
		}
		// Level 1, or the default level switching to BestSpeed a few bytes into
		// a message (fastAfter), as a large message does.
		enc := encoder{masked: true, on: true, takeover: takeover, level: 1}
		if k := sc.next(); k%2 == 1 {
			enc.level, enc.fastAt = -1, int64(1+k*11)
		}
		var wire []byte
		for rest := gorilla; len(rest) > 0; {
			n := min(len(rest), 1+sc.next()*13)
			out, err := enc.write(rest[:n])
			if err != nil {
				t.Fatal(err)
			}
			wire = append(wire, out...)
			rest = rest[n:]
		}
		// Re-fragment the compressed frames at the script's sizes, with pings between.
		var refrag []byte
		for _, fr := range frames(t, wire) {
			if fr.h.control() {
				refrag = appendHeader(refrag, fr.h)
				refrag = append(refrag, fr.p...)
				continue
			}
			size := 1 + sc.next()
			for off := 0; ; off += size {
				end := min(off+size, len(fr.p))
				h := header{fin: fr.h.fin && end == len(fr.p), op: opContinuation, masked: true, key: [4]byte{9, 8, 7, byte(off)}, length: int64(end - off)}
				if off == 0 {
					h.op, h.rsv = fr.h.op, fr.h.rsv
				}
				p := append([]byte(nil), fr.p[off:end]...)
				mask(h.key, 0, p)
				refrag = append(appendHeader(refrag, h), p...)
				if end == len(fr.p) {
					break
				}
				refrag = append(refrag, 0x8a, 0x80, 0, 0, 0, 0) // a pong between the pieces
			}
		}
		dec := decoder{src: bufio.NewReader(bytes.NewReader(refrag)), on: true, takeover: takeover, remask: true}
		plain, err := io.ReadAll(readerFunc(dec.read))
		if err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		var cur []byte
		for _, fr := range frames(t, plain) {
			if fr.h.control() {
				continue
			}
			if fr.h.rsv != 0 || !fr.h.masked {
				t.Fatalf("gorilla would get rsv %x masked %v", fr.h.rsv, fr.h.masked)
			}
			cur = append(cur, fr.p...)
			if fr.h.fin {
				got, cur = append(got, cur), nil
			}
		}
		if len(got) != len(msgs) {
			t.Fatalf("%d messages arrived, %d sent", len(got), len(msgs))
		}
		for i := range msgs {
			if !bytes.Equal(got[i], msgs[i]) {
				t.Fatalf("message %d: got %d bytes, sent %d", i, len(got[i]), len(msgs[i]))
			}
		}
	})
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// FuzzDecode: whatever arrives, the decoder fails or hands gorilla
// well-formed frames; it never panics.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0xc1, 0x03, 0x4a, 0x04, 0x00}, true)
	f.Add([]byte{0x41, 0x02, 0x4a, 0x04, 0x89, 0x00, 0x80, 0x01, 0x00}, false)
	f.Fuzz(func(t *testing.T, in []byte, takeover bool) {
		dec := decoder{src: bufio.NewReader(bytes.NewReader(in)), on: true, takeover: takeover}
		var out []byte
		buf := make([]byte, 512)
		for len(out) < 16<<20 {
			n, err := dec.read(buf)
			out = append(out, buf[:n]...)
			if err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return
			}
		}
	})
}
