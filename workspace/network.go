package workspace

import "github.com/hearthd/hearth/workspace/sandbox"

// WithNetwork returns a copy of ts whose shell calls run with net. The copy
// shares the root and OnWrite; it lives for one call.
func (ts *Toolset) WithNetwork(net sandbox.Network) *Toolset {
	c := *ts
	c.net = net
	return &c
}

// WithAccess returns a copy of ts whose shell calls may write what access
// says (the zero Access: the mode's). The copy lives for one call.
func (ts *Toolset) WithAccess(access sandbox.Access) *Toolset {
	c := *ts
	c.access = access
	return &c
}
