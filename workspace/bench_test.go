package workspace

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func BenchmarkReadFile(b *testing.B) {
	r, root, _ := newTree(b)
	var sb strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&sb, "func f%d() int { return %d } // a line of ordinary source code\n", i, i)
	}
	writeFile(b, filepath.Join(root, "src.go"), sb.String())
	ts := NewToolset(r)
	args := []byte(`{"path":"src.go"}`)
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if res := ts.Run(context.Background(), "read_file", args); res.IsError {
			b.Fatal(res.Output)
		}
	}
}

func BenchmarkGrep(b *testing.B) {
	r, root, _ := newTree(b)
	bigTree(b, root, 20, 50) // 1000 files of 41 lines
	ts := NewToolset(r)
	args := []byte(`{"pattern":"need(le|ful)","glob":"*.txt"}`)
	b.ReportAllocs()
	for b.Loop() {
		if res := ts.Run(context.Background(), "grep", args); res.IsError {
			b.Fatal(res.Output)
		}
	}
}
