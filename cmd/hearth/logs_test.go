package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLogsPrintsTheFile(t *testing.T) {
	dir := isolate(t)
	log := filepath.Join(dir, "data", "hearth.log")
	os.MkdirAll(filepath.Dir(log), 0o700)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"logs"}, &stdout, &stderr); code != 1 {
		t.Errorf("no log: exit %d, want 1", code)
	}
	if err := os.WriteFile(log, []byte("one\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := run(context.Background(), []string{"logs"}, &stdout, &stderr); code != 0 || stdout.String() != "one\ntwo\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

func TestLogsFollowsAcrossRotation(t *testing.T) {
	dir := isolate(t)
	log := filepath.Join(dir, "data", "hearth.log")
	os.MkdirAll(filepath.Dir(log), 0o700)
	if err := os.WriteFile(log, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		var stderr bytes.Buffer
		done <- run(ctx, []string{"logs", "-f"}, pw, &stderr)
		pw.Close()
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(want string) {
		t.Helper()
		select {
		case got := <-lines:
			if got != want {
				t.Fatalf("got line %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no line %q within 10s", want)
		}
	}
	appendTo := func(path, s string) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	expect("first")
	appendTo(log, "second\n")
	expect("second")
	// Rotation: the old file gets its last line, is renamed, a new one starts.
	appendTo(log, "last of old\n")
	if err := os.Rename(log, log+".1"); err != nil {
		t.Fatal(err)
	}
	appendTo(log, "new file\n")
	expect("last of old")
	expect("new file")
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("logs -f exit %d after cancel", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("logs -f did not stop on cancel")
	}
}
