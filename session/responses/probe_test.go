package responses

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hearthd/hearth/session/sim"
)

// Probe tells a working endpoint from a rejected key, an endpoint without
// WebSocket mode, a wrong path and an address nobody listens on, never
// showing the key.
func TestProbe(t *testing.T) {
	srv := sim.New(sim.Options{APIKey: "sk-right-key-000000"})
	base, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	notFound := httptest.NewServer(http.NotFoundHandler()) // a web server that is not the API
	defer notFound.Close()
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close() // nothing listens there any more

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, c := range []struct {
		name, base, key, status, detail string
		fault                           *sim.Fault
	}{
		{"ok", base, "sk-right-key-000000", ProbeOK, "key accepted", nil},
		{"bad key", base, "sk-wrong-key-999999", ProbeFail, "OPENAI_API_KEY", nil},
		{"no websocket", base, "sk-right-key-000000", ProbeWarn, "HTTP 426", &sim.Fault{Kind: sim.FaultRefuseUpgrade, Status: 426}},
		{"wrong path", notFound.URL + "/v1", "sk-right-key-000000", ProbeFail, "HTTP 404", nil},
		{"unreachable", dead, "sk-right-key-000000", ProbeFail, "cannot be reached", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.fault != nil {
				srv.InjectFault(*c.fault)
			}
			r := Probe(ctx, Config{BaseURL: c.base, APIKey: c.key, HandshakeTimeout: 5 * time.Second})
			if r.Status != c.status || !strings.Contains(r.Detail, c.detail) {
				t.Errorf("%s: %+v, want %s with %q", c.base, r, c.status, c.detail)
			}
			if strings.Contains(r.Detail, c.key) {
				t.Errorf("the key is shown: %s", r.Detail)
			}
		})
	}
}
