package store

import (
	"encoding/json"
	"testing"
)

// typeByMap is what checkItem did before objectType: the reference.
func typeByMap(data []byte) (string, bool) {
	var members map[string]json.RawMessage
	if json.Unmarshal(data, &members) != nil || members == nil {
		return "", false
	}
	var typ string
	if raw, ok := members["type"]; ok {
		_ = json.Unmarshal(raw, &typ)
	}
	return typ, true
}

var objectTypeCases = []string{
	`{"type":"message","role":"user"}`,
	` { "role" : "user" , "type" : "message" } `,
	`{"type":"a","type":"b"}`,
	`{"type":"a","type":5}`,
	`{"type":5,"type":"b"}`,
	`{"typ\u0065":"escaped key"}`,
	`{"\"type\"":"quoted key","x":1}`,
	`{"Type":"wrong case"}`,
	`{"a":{"type":"nested"},"b":["type","}",{"type":"x"}]}`,
	`{"a":"brace } and \" quote","type":"after"}`,
	`{"a":"\\","type":"backslash before"}`,
	`{"type":"esc\u00e9\n"}`,
	`{"type":null}`,
	`{"n":-1.5e10,"t":true,"f":false,"z":null,"type":"last"}`,
	`{}`,
	"{\n\t\"type\"\r\n:\n\"ws\"\n}",
	`[{"type":"array"}]`,
	`"a string"`,
	`null`,
	`42`,
	`{"type":"unterminated"`,
	``,
}

func TestObjectTypeAgreesWithUnmarshal(t *testing.T) {
	for _, c := range objectTypeCases {
		data := []byte(c)
		wantType, wantObject := typeByMap(data)
		if !json.Valid(data) {
			if wantObject {
				t.Errorf("%q: invalid JSON that unmarshals", c)
			}
			continue
		}
		typ, object := objectType(data)
		if typ != wantType || object != wantObject {
			t.Errorf("objectType(%q) = %q, %v; unmarshalling says %q, %v", c, typ, object, wantType, wantObject)
		}
	}
}

func FuzzObjectType(f *testing.F) {
	for _, c := range objectTypeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		wantType, wantObject := typeByMap(data)
		typ, object := objectType(data)
		if typ != wantType || object != wantObject {
			t.Errorf("objectType(%q) = %q, %v; unmarshalling says %q, %v", data, typ, object, wantType, wantObject)
		}
	})
}

func TestCheckItemErrors(t *testing.T) {
	for _, c := range []string{`null`, `[1]`, `"x"`, `{"a":`, ``} {
		if _, err := checkItem(NewItem{Origin: OriginInput, Data: json.RawMessage(c)}); err == nil {
			t.Errorf("checkItem accepted %q", c)
		}
	}
	typ, err := checkItem(NewItem{Origin: OriginOutput, Data: json.RawMessage(`{"id":"fc_1","type":"function_call"}`)})
	if err != nil || typ != "function_call" {
		t.Errorf("checkItem = %q, %v", typ, err)
	}
}
