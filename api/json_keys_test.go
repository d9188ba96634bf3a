package api

import (
	"reflect"
	"strings"
	"testing"
)

func TestCheckDuplicateKeys(t *testing.T) {
	run := reflect.TypeOf(&runRequest{})
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	deepDup := strings.Repeat(`{"a":`, 5000) + `{"b":1,"b":2}` + strings.Repeat("}", 5000)
	tests := []struct {
		name string
		body string
		t    reflect.Type
		want string // the error message; "" for none
	}{
		{"no keys", `{}`, run, ""},
		{"distinct keys", `{"language":"python","code":"x","timeout_ms":5}`, run, ""},
		{"value equals a key", `{"language":"code","code":"language"}`, run, ""},
		{"same key in sibling objects", `{"files":[{"path":"a"},{"path":"b"}]}`, run, ""},
		{"same key at two depths", `{"env":{"env":"1"},"code":"x"}`, run, ""},
		{"env keys differing in case", `{"env":{"path":"a","PATH":"b","Path":"c"}}`, run, ""},
		{"huge number", `{"timeout_ms":1e400,"code":"x"}`, run, ""},
		{"deep, no repeat", deep, nil, ""},
		{"top-level repeat", `{"code":"print(1)","code":"print(2)"}`, run,
			`duplicate key "code": each key may appear once per object`},
		{"repeat after a nested value", `{"env":{"A":"1"},"args":[],"env":{}}`, run,
			`duplicate key "env": each key may appear once per object`},
		{"repeat in env", `{"code":"x","env":{"A":"1","A":"2"}}`, run,
			`duplicate key "A" in env: each key may appear once per object`},
		{"repeat in a file", `{"files":[{"path":"a"},{"path":"b","content":"","path":"c"}]}`, run,
			`duplicate key "path" in files[1]: each key may appear once per object`},
		{"escaped repeat", `{"code":"x","\u0063ode":"y"}`, run,
			`duplicate key "code": each key may appear once per object`},
		{"field in another case", `{"language":"python","LANGUAGE":"node"}`, run,
			`duplicate key "LANGUAGE" (the same field as "language"): each key may appear once per object`},
		{"field in another case, after a nested value", `{"files":[{"path":"a"}],"FILES":[]}`, run,
			`duplicate key "FILES" (the same field as "files"): each key may appear once per object`},
		{"field with a long s", `{"stdin":"a","\u017ftdin":"b"}`, run,
			`duplicate key "ſtdin" (the same field as "stdin"): each key may appear once per object`},
		{"unknown type, any object", `[{"x":1},{"y":[{"z":1,"z":2}]}]`, nil,
			`duplicate key "z" in [1].y[0]: each key may appear once per object`},
		{"odd key in the path", `{"a b":{"c":{"d":1,"d":2}}}`, nil,
			`duplicate key "d" in ["a b"].c: each key may appear once per object`},
		{"deep repeat", deepDup, nil,
			`duplicate key "b" in ….a.a.a.a.a.a.a.a: each key may appear once per object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkDuplicateKeys([]byte(tt.body), tt.t)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tt.want != "" && err == nil:
				t.Fatalf("no error, want %q", tt.want)
			case tt.want != "" && err.Error() != tt.want:
				t.Fatalf("error %q\nwant  %q", err, tt.want)
			}
			var re *requestError
			if err != nil && (!asRequestError(err, &re) || re.code != "duplicate_key") {
				t.Errorf("error %#v, want a requestError with code duplicate_key", err)
			}
		})
	}
}

func asRequestError(err error, target **requestError) bool {
	re, ok := err.(*requestError)
	*target = re
	return ok
}
