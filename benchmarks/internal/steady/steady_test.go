package steady

import (
	"testing"
)

func TestSteadyCode(t *testing.T) {
	for _, c := range []struct{ lang, code, want string }{{"python", "print(7)", "7\n"}, {"node", "console.log(7)", "7\n"}} {
		code, want, ok := steadyCode(c.lang, 7)
		if !ok || code != c.code || want != c.want {
			t.Errorf("%s: %q %q %v", c.lang, code, want, ok)
		}
	}
	if _, _, ok := steadyCode("ruby", 1); ok {
		t.Error("ruby: ok")
	}
}

func TestSameRawLimits(t *testing.T) {
	ts := []steadyTemplate{{name: "python", limits: `{"memory_mb":512}`}, {name: "python-slim", limits: `{"memory_mb":512}`},
		{name: "big", limits: `{"memory_mb":1024}`}, {name: "unlisted"}}
	for _, tc := range []struct {
		a, b string
		want bool
	}{{"python", "python-slim", true}, {"python", "big", false}, {"unlisted", "unlisted", false}, {"python", "gone", false}} {
		if got := sameRawLimits(ts, tc.a, tc.b); got != tc.want {
			t.Errorf("sameRawLimits(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}
