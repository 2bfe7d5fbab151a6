package daemon

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearthd/hearth/rpc"
	"github.com/hearthd/hearth/session/sim"
)

func shortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// The API key reaches the model API and nothing else: not the logs, not
// the database, not status.
func TestAPIKeyNeverLeaks(t *testing.T) {
	const key = "sk-test-SECRETVALUE0123456789"
	td := startDaemon(t, sim.Options{APIKey: key}, key)
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	ed.prompt(id, "please read a.txt")
	var st rpc.Status
	ed.must(rpc.MethodHearthStatus, nil, &st)
	if strings.Contains(st.APIKey, "SECRETVALUE") || st.APIKey == "" {
		t.Errorf("status shows the key as %q", st.APIKey)
	}
	td.d.Close() // flush the database
	for _, name := range []string{"hearth.db", "hearth.db-wal"} {
		b, err := os.ReadFile(filepath.Join(td.cfg.DataDir, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "SECRETVALUE") {
			t.Errorf("%s contains the API key", name)
		}
	}
	if strings.Contains(td.logs.String(), "SECRETVALUE") {
		t.Error("the logs contain the API key")
	}
	if td.logs.Len() == 0 {
		t.Error("no logs were written: the check above proves nothing")
	}
}

// A wrong key is a clear error for the turn, not a hang.
func TestRejectedAPIKey(t *testing.T) {
	td := startDaemon(t, sim.Options{APIKey: "sk-right"}, "sk-wrong")
	ed := td.connect()
	ed.initialize()
	id := ed.newSession(td.root)
	err := ed.call(rpc.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": []map[string]string{{"type": "text", "text": "hi"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "API key rejected") {
		t.Fatalf("prompt with a wrong key: %v", err)
	}
}

// A client that connects and never sends a byte does not hold up Close.
func TestCloseWithSilentClient(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	c, err := net.Dial("unix", td.cfg.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A second, well-behaved client proves the first was accepted and is
	// being served (its ServeConn is waiting for a first byte).
	ed := td.connect()
	ed.initialize()
	// Accepted in order, but registered by its own goroutine: ask until
	// the daemon counts it (each ask is a round trip, not a timer). The
	// asker itself is not counted.
	var st rpc.Status
	for i := 0; i < 1000 && st.Clients != 1; i++ {
		ed.must(rpc.MethodHearthStatus, nil, &st)
	}
	if st.Clients != 1 {
		t.Fatalf("clients = %d, want the silent one counted (and not the asker)", st.Clients)
	}
	done := make(chan error, 1)
	go func() { done <- td.d.Close() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hung on a client that never spoke")
	}
}

// OPENAI_BASE_URL may carry credentials (a proxy's user:password, a key in
// the query): status shows where the daemon points, never those.
func TestStatusRedactsBaseURL(t *testing.T) {
	dir := shortDir(t)
	cfg := Config{
		Socket: filepath.Join(dir, "run", "hearth.sock"), DataDir: filepath.Join(dir, "data"),
		BaseURL: "http://bob:hunter2@127.0.0.1:1/v1?api_key=sk-zzz", APIKey: "sk-test-key-0123456789",
		Model: "m", Version: "test",
	}
	d, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b, err := json.Marshal(d.Status())
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"bob", "hunter2", "sk-zzz"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("status leaks %q: %s", secret, b)
		}
	}
	if got := d.Status().BaseURL; got != "http://***@127.0.0.1:1/v1?api_key=***" {
		t.Errorf("status baseUrl = %q", got)
	}
}

// What `hearth acp` relays when someone types at it: a junk first line that
// starts with 'c' is a junk NDJSON line (-32700), not the start of LSP
// framing, and the initialize after it is answered in NDJSON; so is an
// initialize whose id is null (answered with id null).
func TestJunkFirstLineThenInitializeOverSocket(t *testing.T) {
	td := startDaemon(t, sim.Options{}, "")
	rc := td.raw()
	rc.send("cat\n")
	if r := rc.reply(); r.Error == nil || r.Error.Code != -32700 || string(r.ID) != "null" {
		t.Fatalf("junk line answered %+v", r)
	}
	rc.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	if r := rc.reply(); r.Error != nil || string(r.ID) != "1" || len(r.Result) == 0 {
		t.Fatalf("initialize answered %+v", r)
	}
	rc.send(`{"jsonrpc":"2.0","id":null,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	if r := rc.reply(); r.Error != nil || string(r.ID) != "null" || len(r.Result) == 0 {
		t.Fatalf("null-id initialize answered %+v", r)
	}
}
