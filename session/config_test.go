package session_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/hearthd/hearth/session"
	"github.com/hearthd/hearth/session/responses"
)

// The transport's configuration is held, not copied field by field: every
// field reaches the transport (a copy once dropped ReadWindow), and the
// transport's defaults are the session's.
func TestConfigHoldsTheTransportsConfig(t *testing.T) {
	in := responses.Config{BaseURL: "http://h/v1", APIKey: "sk-x", Lanes: responses.LanesOff, KeepaliveInterval: -1,
		KeepaliveTimeout: time.Second, DisableCompression: true, HandshakeTimeout: 2 * time.Second, MaxMessage: 1 << 20,
		ReadWindow: -1, ForceHTTP: true, MaxConnAge: time.Minute, DialAttempts: 2, DialBudget: 3 * time.Second,
		FallbackRetry: 4 * time.Second}
	if got := (session.Config{Config: in}).WithDefaults().Transport(); !reflect.DeepEqual(got, in) {
		t.Errorf("the transport gets %+v, want %+v", got, in)
	}
	if got, want := (session.Config{}).WithDefaults().Transport(), (responses.Config{}).WithDefaults(); !reflect.DeepEqual(got, want) {
		t.Errorf("the transport's defaults through session: %+v, want %+v", got, want)
	}
}
