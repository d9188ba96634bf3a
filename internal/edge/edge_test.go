package edge

import (
	"net/http"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/core"
)

func TestCredential(t *testing.T) {
	cases := []struct {
		header string
		want   string
		err    error
	}{
		{"Bearer abc", "abc", nil},
		{"bearer  abc ", "abc", nil},
		{"  Bearer abc", "abc", nil},
		{"", "", ErrNoCredential},
		{"Bearer", "", ErrNoCredential},
		{"Bearer   ", "", ErrNoCredential},
		{"Basic abc", "", ErrScheme},
		{"abc", "", ErrScheme},
	}
	for _, c := range cases {
		got, err := Bearer(c.header)
		if got != c.want || err != c.err {
			t.Errorf("Bearer(%q) = %q, %v; want %q, %v", c.header, got, err, c.want, c.err)
		}
	}
	if got, err := Credential("token xyz", "token", "bearer"); got != "xyz" || err != nil {
		t.Errorf(`Credential("token xyz", token, bearer) = %q, %v`, got, err)
	}
}

func TestRetryAfter(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "", -time.Second: "", time.Millisecond: "1", time.Second: "1", 1500 * time.Millisecond: "2", 30 * time.Second: "30"} {
		h := http.Header{}
		RetryAfter(h, d)
		if got := h.Get("Retry-After"); got != want {
			t.Errorf("RetryAfter(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestStatus(t *testing.T) {
	if got := Status(core.KindGone, nil); got != http.StatusGone {
		t.Errorf("gone: %d", got)
	}
	if got := Status(core.KindGone, map[core.Kind]int{core.KindGone: http.StatusConflict}); got != http.StatusConflict {
		t.Errorf("gone, overridden: %d", got)
	}
	if got := Status(core.KindInternal, nil); got != http.StatusInternalServerError {
		t.Errorf("internal: %d", got)
	}
	for k := core.KindInvalid; k <= core.KindCanceled; k++ {
		if Status(k, nil) == http.StatusInternalServerError {
			t.Errorf("kind %v has no status of its own", k)
		}
	}
}

func TestRateLimit(t *testing.T) {
	h := http.Header{}
	RateLimit(h, core.Quota{})
	if len(h) != 0 {
		t.Errorf("no rate set: headers %v", h)
	}
	RateLimit(h, core.Quota{Limit: 10, Remaining: 3, Reset: 2100 * time.Millisecond})
	if h.Get("RateLimit-Limit") != "10" || h.Get("RateLimit-Remaining") != "3" || h.Get("RateLimit-Reset") != "3" {
		t.Errorf("headers %v", h)
	}
}
