package sim

import "fmt"

// LaneMode says how a server treats stream_id (docs/ARCHITECTURE.md, "The Responses protocol": lanes). Lane-less
// servers (older OpenAI deployments, xAI) run one response at a time per connection; they
// either ignore the field or refuse it as an unknown parameter.
type LaneMode int

const (
	LanesOn     LaneMode = iota // stream_id names a lane: lanes run concurrently, events echo stream_id (default)
	LanesIgnore                 // stream_id is ignored: never echoed, one FIFO lane and one cache slot per connection
	LanesRefuse                 // a create carrying stream_id gets 400 unknown_parameter, without a stream_id member
)

var laneModeNames = [...]string{"on", "ignore", "refuse"}

func (m LaneMode) String() string {
	if m >= 0 && int(m) < len(laneModeNames) {
		return laneModeNames[m]
	}
	return "lanes(?)"
}

// ParseLaneMode reads "on", "ignore" or "refuse" (hearth sim --lanes).
func ParseLaneMode(s string) (LaneMode, error) {
	for i, n := range laneModeNames {
		if n == s {
			return LaneMode(i), nil
		}
	}
	return 0, fmt.Errorf("sim: unknown lane mode %q (want on, ignore or refuse)", s)
}

// lanesOn reports whether stream_id names lanes on this server's connections.
func (o Options) lanesOn() bool { return !o.DisableLanes && o.Lanes == LanesOn }

// echoesStreamID reports whether answers to a request carry its stream_id back: with lanes
// on, and with the old DisableLanes refusal (whose error names the lane it refuses).
func (o Options) echoesStreamID() bool { return o.DisableLanes || o.Lanes == LanesOn }
