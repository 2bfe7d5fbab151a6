package rpc

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestMaskSecret(t *testing.T) {
	cases := map[string]string{
		"":                        "(not set)",
		"   ":                     "(not set)",
		"short":                   "****",
		"sk-proj-abcdefghij1234":  "sk-...1234",
		" sk-abcdefghijklmnopq\n": "sk-...nopq",
	}
	for in, want := range cases {
		if got := MaskSecret(in); got != want {
			t.Errorf("MaskSecret(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStatusJSONStable pins the field names `hearth status --json` prints.
func TestStatusJSONStable(t *testing.T) {
	st := Status{
		Version: "v1", PID: 7, Started: time.Unix(0, 0).UTC(), Socket: "/s", DataDir: "/d",
		Model: "m", BaseURL: "u", APIKey: "(not set)", Simulator: true, Clients: 2,
		Profile: Profile{Family: "f", ContextWindow: 1000, ReasoningLevels: []string{"low", "high"}, Reasoning: "low",
			Images: true, ParallelTools: true, ToolOutputTokens: 99, PatchStyle: "freeform", ShellStyle: "command"},
		Workspaces: []WorkspaceStatus{{
			Root: "/w", Model: "m2", State: WorkspaceStreaming, Transport: TransportWebSocket,
			ConnAgeMS: 1500, Sessions: 1, Lanes: 2,
			Handshakes: 3, Warmups: 4, FullRequests: 5, IncrementalRequests: 6,
			Retries: 7, Fallbacks: 8, BytesSent: 9, BytesSaved: 10, LastTurnMS: 11,
			LaneMode: "on", WireBytesSent: 12, WireBytesReceived: 13, Tokens: NewTokenUsage(100, 25, 14, 15),
		}},
		Sessions: SessionCounts{Open: 3, Idle: 1, Closed: 16, WorkspacesClosed: 17},
	}
	raw, err := Result(st)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":"v1","pid":7,"started":"1970-01-01T00:00:00Z","socket":"/s","dataDir":"/d",` +
		`"model":"m","profile":{"family":"f","contextWindow":1000,"reasoningLevels":["low","high"],"reasoning":"low",` +
		`"images":true,"parallelToolCalls":true,"toolOutputTokens":99,"patchStyle":"freeform","shellStyle":"command"},` +
		`"baseUrl":"u","apiKey":"(not set)","simulator":true,"clients":2,"workspaces":[` +
		`{"root":"/w","model":"m2","state":"streaming","transport":"ws","connAgeMs":1500,"sessions":1,"lanes":2,` +
		`"handshakes":3,"warmups":4,"fullRequests":5,"incrementalRequests":6,"retries":7,"fallbacks":8,` +
		`"bytesSent":9,"bytesSaved":10,"lastTurnMs":11,"connections":0,"laneMode":"on","spare":false,"wireBytesSent":12,` +
		`"wireBytesReceived":13,"tokens":{"input":100,"cached":25,"output":14,"reasoning":15,"cacheHitRatio":0.25}}],` +
		`"sessions":{"open":3,"idle":1,"closed":16,"workspacesClosed":17}}`
	if string(raw) != want {
		t.Fatalf("got\n%s\nwant\n%s", raw, want)
	}
	if st.Workspaces[0].ConnAge() != 1500*time.Millisecond {
		t.Fatal("ConnAge")
	}
}

func TestInspectJSON(t *testing.T) {
	detail := InspectResult{Session: &SessionDetail{
		SessionInfo: SessionInfo{ID: "s1", Root: "/w", Turns: 1},
		Turns:       []TurnInfo{{Seq: 1, Status: "done"}},
		Items:       []ItemInfo{{Seq: 1, Turn: 1, Origin: "user", Type: "message", Data: json.RawMessage(`{"k":1}`)}},
		Requests:    []RequestInfo{{ID: 1, Turn: 1, Kind: "full", FullReason: "first"}},
	}}
	raw, err := Result(detail)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"sessionId":"s1"`, `"turns":1`, `"turnList":[{"seq":1,"status":"done"`, `"data":{"k":1}`, `"fullReason":"first"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("%s lacks %s", raw, want)
		}
	}
	if strings.Contains(string(raw), `"sessions"`) || strings.Contains(string(raw), `"ended"`) {
		t.Errorf("zero fields not omitted: %s", raw)
	}
	var back InspectResult
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.Session.SessionInfo.Turns != 1 || len(back.Session.Turns) != 1 || back.Session.ID != "s1" {
		t.Fatalf("round trip %+v", back.Session)
	}

	p, _ := Result(InspectParams{SessionID: "s1", Limit: 5})
	if string(p) != `{"sessionId":"s1","limit":5}` {
		t.Fatalf("params %s", p)
	}
}
