package responses

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// Probe outcomes, as `hearth doctor` prints them.
const (
	ProbeOK   = "ok"
	ProbeWarn = "warn"
	ProbeFail = "fail"
)

// ProbeResult is what one Probe found: Status is ProbeOK, ProbeWarn or
// ProbeFail; Detail says what happened and, when not ok, what to do. It
// never holds the key, and the URL in it is redacted.
type ProbeResult struct {
	Status  string
	Detail  string
	Elapsed time.Duration
}

// Probe checks that cfg's model API is reachable and takes its key the
// cheapest way hearth can: the WebSocket upgrade of {base}/responses with the
// Authorization header, closed at once — no request, no tokens. cfg is
// completed with WithDefaults.
func Probe(ctx context.Context, cfg Config) ProbeResult {
	cfg = cfg.WithDefaults()
	start := time.Now()
	res := func(status, format string, a ...any) ProbeResult {
		return ProbeResult{Status: status, Detail: fmt.Sprintf(format, a...), Elapsed: time.Since(start)}
	}
	u, err := cfg.websocketURL()
	if err != nil {
		return res(ProbeFail, "%v", err)
	}
	shown := safeURL(u)
	d := websocket.Dialer{HandshakeTimeout: cfg.HandshakeTimeout, Proxy: http.ProxyFromEnvironment}
	h := http.Header{}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	ws, resp, err := d.DialContext(ctx, u, h)
	if err == nil {
		ws.Close()
		return res(ProbeOK, "%s: WebSocket open and the key accepted in %s", shown, time.Since(start).Round(time.Millisecond))
	}
	if resp == nil {
		msg := strings.ReplaceAll(err.Error(), u, shown)
		if errors.Is(err, context.DeadlineExceeded) {
			msg = "no answer in time"
		}
		return res(ProbeFail, "%s cannot be reached (%s); check OPENAI_BASE_URL, the network and HTTPS_PROXY", shown, msg)
	}
	resp.Body.Close()
	switch code := resp.StatusCode; code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return res(ProbeFail, "%s refused the API key (HTTP %d): set a valid OPENAI_API_KEY", shown, code)
	case http.StatusUpgradeRequired:
		return res(ProbeWarn, "%s answers but has no WebSocket mode (HTTP 426): hearth uses HTTP streaming there, every request in full", shown)
	case http.StatusNotFound:
		return res(ProbeFail, "%s does not exist (HTTP 404): OPENAI_BASE_URL should be the API's base, such as https://api.openai.com/v1", shown)
	default:
		return res(ProbeWarn, "%s answered the WebSocket upgrade with HTTP %d; hearth retries, then falls back to HTTP streaming", shown, code)
	}
}
