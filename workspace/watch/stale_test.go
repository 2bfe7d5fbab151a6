package watch

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestStaleFiles(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"same.txt": "one\n", "changed.txt": "new\n"} {
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	r, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	hash := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	seen := map[string]Seen{
		"same.txt":    {Hash: hash("one\n")},
		"changed.txt": {Hash: hash("old\n")},
		"gone.txt":    {Hash: hash("x")},
	}
	if got := StaleFiles(r, seen); !slices.Equal(got, []string{"changed.txt", "gone.txt"}) {
		t.Fatalf("stale = %v", got)
	}
}
