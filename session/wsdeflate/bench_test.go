package wsdeflate

import (
	"bufio"
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"testing"
)

// benchRequest is a chained create as hearth sends it: a tool list of some
// 6 KB, as varied as a real one, and a new item of its own.
func benchRequest(i int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"response.create","model":"gpt-5.5","tools":[`)
	for k := range 14 {
		fmt.Fprintf(&b, `{"type":"function","name":"tool_%x","description":"%s: reads, writes or runs %d things in the workspace; see the %s","parameters":{"type":"object","properties":{"path":{"type":"string","description":"relative to the workspace %d"}},"required":["path"]}},`,
			k*2654435761, []string{"read_file", "apply_patch", "shell", "list_dir", "grep", "exec_command", "write_stdin"}[k%7], k*k*977, []string{"manual", "notes", "guide"}[k%3], k)
	}
	fmt.Fprintf(&b, `{"type":"function","name":"x"}],"store":false,"stream_id":"lane-1","previous_response_id":"resp_%016x","input":[{"type":"function_call_output","call_id":"call_%08x","output":"{\"output\":\"the quick brown fox %d\",\"exit\":0}"}]}`, i*7919, i*31, i)
	return b.Bytes()
}

// benchDelta is a text delta event as the server streams it.
func benchDelta(i int) []byte {
	return fmt.Appendf(nil, `{"type":"response.output_text.delta","sequence_number":%d,"item_id":"msg_0123456789abcdef","output_index":0,"content_index":0,"delta":" word%d","stream_id":"lane-1"}`, i, i%97)
}

// maskedFrames are msgs as gorilla's client writes them: one masked frame each.
func maskedFrames(msgs [][]byte) [][]byte {
	key := [4]byte{1, 2, 3, 4}
	out := make([][]byte, len(msgs))
	for i, p := range msgs {
		f := appendHeader(nil, header{fin: true, op: opText, masked: true, key: key, length: int64(len(p))})
		f = append(f, p...)
		mask(key, 0, f[len(f)-len(p):])
		out[i] = f
	}
	return out
}

type benchCase struct {
	name     string
	msg      func(int) []byte
	takeover bool
	level    int
}

func benchCases() []benchCase {
	var cs []benchCase
	for _, m := range []struct {
		name string
		f    func(int) []byte
	}{{"create", benchRequest}, {"delta", benchDelta}} {
		for _, takeover := range []bool{true, false} {
			for _, level := range []int{flate.BestSpeed, flate.DefaultCompression} {
				cs = append(cs, benchCase{fmt.Sprintf("%s/takeover=%v/level=%d", m.name, takeover, level), m.f, takeover, level})
			}
		}
	}
	return cs
}

// BenchmarkCompress is the CPU of compressing one message (a chained
// create of 6 KB of tools, or a text delta) with context takeover and
// without, at BestSpeed and the default level; wire-B/op is the frame
// that goes out.
func BenchmarkCompress(b *testing.B) {
	for _, bc := range benchCases() {
		b.Run(bc.name, func(b *testing.B) {
			msgs := make([][]byte, 64)
			for i := range msgs {
				msgs[i] = bc.msg(i)
			}
			frames := maskedFrames(msgs)
			enc := encoder{masked: true, on: true, takeover: bc.takeover, level: bc.level}
			var wire int64
			b.SetBytes(int64(len(msgs[0])))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out, err := enc.write(frames[i%len(frames)])
				if err != nil {
					b.Fatal(err)
				}
				wire += int64(len(out))
			}
			b.ReportMetric(float64(wire)/float64(b.N), "wire-B/op")
		})
	}
}

// BenchmarkInflate is the CPU of inflating one such message on the other
// side.
func BenchmarkInflate(b *testing.B) {
	for _, bc := range benchCases() {
		b.Run(bc.name, func(b *testing.B) {
			enc := encoder{masked: true, on: true, takeover: bc.takeover, level: bc.level}
			var wire bytes.Buffer
			for i := 0; i < b.N; i++ {
				out, err := enc.write(maskedFrames([][]byte{bc.msg(i % 64)})[0])
				if err != nil {
					b.Fatal(err)
				}
				wire.Write(out)
			}
			dec := decoder{src: bufio.NewReaderSize(&wire, 64<<10), on: true, takeover: bc.takeover, remask: true}
			buf := make([]byte, 64<<10)
			b.SetBytes(int64(len(bc.msg(0))))
			b.ResetTimer()
			for {
				if _, err := dec.read(buf); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchLarge is a full create of about 4 MiB: a long conversation's
// re-warm, most of it tool outputs of source code.
func benchLarge() []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"response.create","model":"gpt-5.5","store":false,"input":[`)
	for k := 0; b.Len() < 4<<20; k++ {
		fmt.Fprintf(&b, `{"type":"function_call_output","call_id":"call_%08x","output":"func f%d(x int) int {\n\treturn x*%d + %d // line %d of file_%d.go\n}\n"},`,
			k*2654435761, k, k%97, k*k%1013, k, k/50)
	}
	b.WriteString(`{"type":"message","role":"user","content":"x"}]}`)
	return b.Bytes()
}

// BenchmarkLargeCreate is the CPU of compressing one 4 MiB create with
// context takeover, at BestSpeed and at the default level hearth uses.
func BenchmarkLargeCreate(b *testing.B) {
	msg := benchLarge()
	frame := maskedFrames([][]byte{msg})[0]
	for _, level := range []int{flate.BestSpeed, flate.DefaultCompression} {
		b.Run(fmt.Sprintf("level=%d", level), func(b *testing.B) {
			enc := encoder{masked: true, on: true, takeover: true, level: level}
			var wire int64
			b.SetBytes(int64(len(msg)))
			for i := 0; i < b.N; i++ {
				out, err := enc.write(frame)
				if err != nil {
					b.Fatal(err)
				}
				wire += int64(len(out))
			}
			b.ReportMetric(float64(wire)/float64(b.N), "wire-B/op")
		})
	}
}
