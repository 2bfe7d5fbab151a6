package mcp

import (
	"regexp"
	"strings"
	"testing"
)

var apiName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolNames(t *testing.T) {
	for _, c := range []struct{ server, tool, want string }{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"my db", "run.query", "mcp__my_db__run_query"},
		{"ünï", "x/y", "mcp___n___x_y"},
		{"", "", "mcp______"},
	} {
		got := toolName(c.server, c.tool)
		if got != c.want {
			t.Errorf("toolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
		if !apiName.MatchString(got) {
			t.Errorf("%q is not a name the API accepts", got)
		}
	}
	long1 := toolName("server", strings.Repeat("a", 80)+"1")
	long2 := toolName("server", strings.Repeat("a", 80)+"2")
	if len(long1) != MaxNameLen || !apiName.MatchString(long1) || long1 == long2 {
		t.Errorf("long names %q and %q: want distinct names of %d characters", long1, long2, MaxNameLen)
	}
	taken := map[string]bool{"mcp__a__b": true}
	u := unique("mcp__a__b", "a\x00b", taken)
	if u == "mcp__a__b" || !apiName.MatchString(u) {
		t.Errorf("unique gave %q", u)
	}
}

// Parameters are an object schema with properties, and the same bytes
// whatever the map's order.
func TestParameters(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{nil, `{"properties":{},"type":"object"}`},
		{map[string]any{"type": "object"}, `{"properties":{},"type":"object"}`},
		{map[string]any{"type": "object", "required": []any{"b"}, "properties": map[string]any{"b": map[string]any{"type": "string"}, "a": map[string]any{"type": "integer"}}},
			`{"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["b"],"type":"object"}`},
		{map[string]any{"description": "<x> & y"}, `{"description":"<x> & y","properties":{},"type":"object"}`},
	} {
		if got := string(parameters(c.in)); got != c.want {
			t.Errorf("parameters(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestSame(t *testing.T) {
	a := Server{Name: "a", Transport: Stdio, Command: "x", Args: []string{"1"}}
	b := Server{Name: "b", Transport: HTTP, URL: "http://h", Headers: [][2]string{{"K", "v"}}}
	b2 := b
	b2.Headers = [][2]string{{"K", "w"}}
	if !Same([]Server{a, b}, []Server{b, a}) || !Same(nil, []Server{}) {
		t.Error("the same servers in another order are not Same")
	}
	if Same([]Server{a, b}, []Server{a, b2}) || Same([]Server{a}, []Server{a, b}) {
		t.Error("different servers are Same")
	}
}
