package main

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lineWriter hands each line written to it to a channel (hearth sim's
// stdout, read while it serves).
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.WriteString(line)
			return len(p), nil
		}
		select {
		case w.lines <- line:
		default:
		}
	}
}

// hearth sim --window refuses a request over a model's window, or every
// model's, as the API does; a window that is not a number is a usage error.
func TestSimWindowFlag(t *testing.T) {
	if code, _, errOut := runCLI("sim", "--window", "gpt-x=lots"); code != 2 || !strings.Contains(errOut, "want N or MODEL=N") {
		t.Fatalf("a bad window: exit %d, %q", code, errOut)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := &lineWriter{lines: make(chan string, 16)}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"sim", "--addr", "127.0.0.1:0", "--window", "small=100", "--window", "100000"}, out, &bytes.Buffer{})
	}()
	defer func() { cancel(); <-done }()
	var base string
	select {
	case line := <-out.lines:
		base = regexp.MustCompile(`http://\S+/v1`).FindString(line)
	case <-time.After(20 * time.Second):
		t.Fatal("hearth sim did not say where it listens")
	}
	post := func(model string) int {
		body := `{"model":"` + model + `","input":"` + strings.Repeat("a", 2000) + `"}`
		resp, err := http.Post(base+"/responses", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if small, big := post("small"), post("big"); small != 400 || big != 200 {
		t.Fatalf("over the small model's window: HTTP %d; under every other model's: HTTP %d", small, big)
	}
}
