package daemon

import "testing"

// appendJSON rewrites the arguments models send (keys in schema order,
// spaces) itself, and leaves to encoding/json only what it cannot write
// exactly.
func TestAppendJSON(t *testing.T) {
	for raw, want := range map[string]string{
		`{"path":"a.txt","offset":10,"limit":-2}`:         `{"limit":-2,"offset":10,"path":"a.txt"}`,
		` { "command" : "go test" , "env" : [ ] } `:       `{"command":"go test","env":[]}`,
		`{"b":{"y":true,"x":null},"a":[{"d":1,"c":"<"}]}`: `{"a":[{"c":"\u003c","d":1}],"b":{"x":null,"y":true}}`,
		`"just a string"`: `"just a string"`,
	} {
		got, ok := appendJSON(nil, []byte(raw))
		if !ok || string(got) != want {
			t.Errorf("appendJSON(%s) = %v %s, want %s", raw, ok, got, want)
		}
	}
	for _, raw := range []string{`{"a":1.5}`, `{"a":1e3}`, `{"a":1,"a":2}`, `{"\u0061":1}`, `{"é":1}`, `{"a":1,}`, `{"a":1 "b":2}`, `[1,]`, ``, `x`} {
		if got, ok := appendJSON(nil, []byte(raw)); ok {
			t.Errorf("appendJSON(%s) = %s, want it left to encoding/json", raw, got)
		}
	}
}
