package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearthd/hearth/mcp/mcptest"
)

// testServer configures this test binary as a stdio MCP server that writes
// its pid to the returned file.
func testServer(t *testing.T, name string) (Server, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	return Server{Name: name, Transport: Stdio, Command: exe, Args: []string{mcptest.Subcommand, "--pid-file", pidFile}}, pidFile
}

func start(t *testing.T, o Options, servers ...Server) *Set {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := Start(ctx, servers, o)
	t.Cleanup(s.Close)
	return s
}

// gone reports whether the process in pidFile has exited (and was reaped).
func gone(t *testing.T, pidFile string) bool {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestStdioServerTools(t *testing.T) {
	srv, pidFile := testServer(t, "test srv")
	s := start(t, Options{}, srv)
	if p := s.Problems(); len(p) != 0 {
		t.Fatalf("problems: %v", p)
	}
	var names []string
	for _, tl := range s.Tools() {
		names = append(names, tl.Name)
	}
	want := "mcp__test_srv__crash mcp__test_srv__echo mcp__test_srv__hang mcp__test_srv__peek"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("tools %s, want %s", got, want)
	}
	echo, _ := s.Lookup("mcp__test_srv__echo")
	peek, _ := s.Lookup("mcp__test_srv__peek")
	if echo.ReadOnly || !peek.ReadOnly || echo.Remote != "echo" || echo.Server != "test srv" {
		t.Errorf("echo %+v, peek %+v", echo, peek)
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(echo.Parameters, &schema); err != nil || schema.Type != "object" || schema.Properties["text"] == nil {
		t.Errorf("echo's parameters %s", echo.Parameters)
	}
	r := s.Call(context.Background(), "mcp__test_srv__echo", json.RawMessage(`{"text":"hi"}`))
	if r.IsError || r.Output != "echo: hi" {
		t.Errorf("echo answered %+v", r)
	}
	if r := s.Call(context.Background(), "mcp__nope", nil); !r.IsError || !strings.Contains(r.Output, "no MCP tool") {
		t.Errorf("unknown tool answered %+v", r)
	}
	if gone(t, pidFile) {
		t.Fatal("the server is gone before Close")
	}
	s.Close()
	if !gone(t, pidFile) {
		t.Error("the server process is still there after Close")
	}
}

// A server that exits in the middle of a call makes it fail with the
// reason, and every later call too, at once.
func TestServerCrashMidCall(t *testing.T) {
	srv, pidFile := testServer(t, "c")
	s := start(t, Options{}, srv)
	r := s.Call(context.Background(), "mcp__c__crash", json.RawMessage(`{}`))
	if !r.IsError || !strings.Contains(r.Output, `MCP server "c"`) {
		t.Fatalf("crash answered %+v", r)
	}
	t0 := time.Now()
	r = s.Call(context.Background(), "mcp__c__echo", json.RawMessage(`{"text":"x"}`))
	if !r.IsError || !strings.Contains(r.Output, "not running") || time.Since(t0) > 5*time.Second {
		t.Errorf("a call after the crash answered %+v after %s", r, time.Since(t0))
	}
	s.Close()
	if !gone(t, pidFile) {
		t.Error("the crashed server was not reaped")
	}
}

// A server that never answers makes the call fail at the timeout; Close
// then stops it anyway.
func TestServerHangTimesOut(t *testing.T) {
	srv, pidFile := testServer(t, "h")
	s := start(t, Options{CallTimeout: 300 * time.Millisecond, StopTimeout: 200 * time.Millisecond}, srv)
	t0 := time.Now()
	r := s.Call(context.Background(), "mcp__h__hang", json.RawMessage(`{}`))
	if !r.IsError || !strings.Contains(r.Output, "did not answer hang within 300ms") {
		t.Fatalf("hang answered %+v", r)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("the timed-out call took %s", d)
	}
	s.Close()
	if !gone(t, pidFile) {
		t.Error("the hung server is still there after Close")
	}
}

// Cancelling the caller's context ends a call at once.
func TestCallCancelled(t *testing.T) {
	srv, _ := testServer(t, "h")
	s := start(t, Options{StopTimeout: 200 * time.Millisecond}, srv)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() { done <- s.Call(ctx, "mcp__h__hang", json.RawMessage(`{}`)) }()
	cancel()
	select {
	case r := <-done:
		if !r.IsError || !strings.Contains(r.Output, "cancelled") {
			t.Errorf("cancelled call answered %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled call did not return")
	}
}

// Servers that cannot start are problems; the others still serve.
func TestStartProblems(t *testing.T) {
	good, _ := testServer(t, "good")
	exits := Server{Name: "exits", Transport: Stdio, Command: "/bin/sh", Args: []string{"-c", "echo no config here >&2; exit 4"}}
	missing := Server{Name: "missing", Transport: Stdio, Command: "/no/such/mcp-server"}
	bad := Server{Name: "bad", Transport: "carrier-pigeon"}
	s := start(t, Options{StopTimeout: 200 * time.Millisecond}, good, exits, missing, bad, good)
	p := strings.Join(s.Problems(), "\n")
	for _, want := range []string{`"exits" did not start`, "no config here", `"missing" did not start`, "/no/such/mcp-server", `"bad" did not start: type: unknown transport`, `"good" did not start: another server has this name`} {
		if !strings.Contains(p, want) {
			t.Errorf("problems lack %q:\n%s", want, p)
		}
	}
	if _, ok := s.Lookup("mcp__good__echo"); !ok || len(s.Tools()) != 4 {
		t.Errorf("tools %v", s.Tools())
	}
}

// Streamable HTTP and SSE servers, with the configured headers.
func TestHTTPAndSSE(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	note := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			auth = append(auth, r.Header.Get("Authorization"))
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}
	get := func(*http.Request) *sdk.Server { return mcptest.NewServer() }
	streamable := httptest.NewServer(note(sdk.NewStreamableHTTPHandler(get, nil)))
	t.Cleanup(streamable.Close) // after the set's Close (cleanups run last first)
	sse := httptest.NewServer(note(sdk.NewSSEHandler(get, nil)))
	t.Cleanup(sse.Close)
	hdr := [][2]string{{"Authorization", "Bearer t0ken"}}
	s := start(t, Options{},
		Server{Name: "web", Transport: HTTP, URL: streamable.URL, Headers: hdr},
		Server{Name: "old", Transport: SSE, URL: sse.URL, Headers: hdr})
	if p := s.Problems(); len(p) != 0 {
		t.Fatalf("problems: %v", p)
	}
	for _, name := range []string{"mcp__web__echo", "mcp__old__echo"} {
		if r := s.Call(context.Background(), name, json.RawMessage(`{"text":"over http"}`)); r.IsError || r.Output != "echo: over http" {
			t.Errorf("%s answered %+v", name, r)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range auth {
		if a != "Bearer t0ken" {
			t.Fatalf("a request carried Authorization %q", a)
		}
	}
	if len(auth) < 4 {
		t.Errorf("only %d requests reached the servers", len(auth))
	}
}
