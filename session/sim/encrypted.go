package sim

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
)

// defaultSecret seals encrypted_content when Options.Secret is empty. It is fixed on purpose:
// the real API accepts encrypted reasoning across connections and over time, so a daemon
// restarted against a new in-process simulator must still get its old items accepted.
var defaultSecret = []byte("hearth-sim reasoning secret v1")

// sealedReasoning is what an encrypted_content carries: the item it came from and the thought.
type sealedReasoning struct {
	ID      string `json:"id"`
	Summary string `json:"summary"`
	Model   string `json:"model"`
}

func (o Options) secret() []byte {
	if len(o.Secret) == 0 {
		return defaultSecret
	}
	return o.Secret
}

// seal returns base64url(JSON payload ‖ HMAC-SHA256(secret, payload)): opaque to the client,
// verifiable by any Server with the same secret.
func seal(secret []byte, p sealedReasoning) string {
	payload, _ := json.Marshal(p) // strings only: cannot fail
	mac := hmac.New(sha256.New, secret)
	mac.Write(payload)
	return base64.RawURLEncoding.EncodeToString(mac.Sum(payload))
}

// unseal verifies an encrypted_content and returns what it carries.
func unseal(secret []byte, s string) (sealedReasoning, bool) {
	var p sealedReasoning
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) <= sha256.Size {
		return p, false
	}
	payload, sum := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	mac := hmac.New(sha256.New, secret)
	mac.Write(payload)
	if !hmac.Equal(sum, mac.Sum(nil)) || json.Unmarshal(payload, &p) != nil {
		return p, false
	}
	return p, true
}
