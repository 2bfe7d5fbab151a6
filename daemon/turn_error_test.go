package daemon

import (
	"testing"

	"github.com/hearthd/hearth/session/responses"
)

// A kind of failure the daemon does not map would reach the editor as
// whatever the table's default is: every kind needs a decision.
func TestEveryFailureKindHasAClass(t *testing.T) {
	for k := range responses.Kind(responses.NumKinds) {
		if _, ok := turnClasses[k]; !ok {
			t.Errorf("failure kind %v has no row in turnClasses", k)
		}
	}
	if len(turnClasses) != responses.NumKinds {
		t.Errorf("turnClasses has %d rows for %d kinds", len(turnClasses), responses.NumKinds)
	}
}
