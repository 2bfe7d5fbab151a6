package wsdeflate

import (
	"bufio"
	"bytes"
	"compress/flate"
	"io"
	"testing"
)

// A message past fastAfter goes on at BestSpeed, and the message after it
// is back at the chosen level, primed with the window: with takeover the
// server's decoder reads all three as they were sent.
func TestLargeMessageSwitchesToBestSpeed(t *testing.T) {
	small := benchRequest(1)
	msgs := [][]byte{small, benchLarge(), benchRequest(2)}
	enc := encoder{masked: true, on: true, takeover: true, level: flate.DefaultCompression}
	var wire []byte
	var fast []bool
	for _, f := range maskedFrames(msgs) {
		out, err := enc.write(f)
		if err != nil {
			t.Fatal(err)
		}
		wire = append(wire, out...)
		fast = append(fast, enc.fast)
	}
	if fast[0] || !fast[1] {
		t.Fatalf("BestSpeed after each message: %v; want only after the large one", fast)
	}
	next, err := enc.write(maskedFrames([][]byte{benchRequest(3)})[0])
	if err != nil {
		t.Fatal(err)
	}
	if enc.fast || len(next) > 200 {
		t.Fatalf("the create after a large message: %d bytes on the wire (fast %v); want the default level's few, back-referenced", len(next), enc.fast)
	}
	wire = append(wire, next...)
	msgs = append(msgs, benchRequest(3))

	dec := decoder{src: bufio.NewReader(bytes.NewReader(wire)), on: true, takeover: true, remask: true}
	plain, err := io.ReadAll(readerFunc(dec.read))
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	var cur []byte
	for _, fr := range frames(t, plain) {
		cur = append(cur, fr.p...)
		if fr.h.fin {
			got, cur = append(got, cur), nil
		}
	}
	if len(got) != len(msgs) {
		t.Fatalf("%d messages arrived, want %d", len(got), len(msgs))
	}
	for i := range msgs {
		if !bytes.Equal(got[i], msgs[i]) {
			t.Fatalf("message %d (%d bytes) arrived changed (%d bytes)", i, len(msgs[i]), len(got[i]))
		}
	}
}
