package egress

import (
	"net/http"
	"slices"
	"testing"
)

func TestStripHop(t *testing.T) {
	h := http.Header{
		"Connection":          {"X-Hop, keep-alive", "X-Other-Hop"},
		"Keep-Alive":          {"timeout=5"},
		"X-Hop":               {"1"},
		"X-Other-Hop":         {"1"},
		"Te":                  {"trailers"},
		"Trailer":             {"X-T"},
		"Transfer-Encoding":   {"chunked"},
		"Upgrade":             {"websocket"},
		"Expect":              {"100-continue"},
		"Proxy-Authorization": {"Basic eA=="},
		"Proxy-Connection":    {"keep-alive"},
		"Proxy-Anything":      {"x"},
		"Content-Type":        {"text/plain"},
		"X-Keep":              {"kept"},
	}
	stripHop(h)
	var left []string
	for k := range h {
		left = append(left, k)
	}
	slices.Sort(left)
	if !slices.Equal(left, []string{"Content-Type", "X-Keep"}) {
		t.Errorf("left %v, want [Content-Type X-Keep]", left)
	}
}

func TestScrubSecrets(t *testing.T) {
	h := http.Header{
		"Authorization": {"Bearer s3cret"},
		"X-Debug":       {"saw token=Bearer s3cret here"},
		"X-Api-Key":     {"other"},
		"Set-Cookie":    {"a=1", "leak=s3cr3t-key"},
		"X-Plain":       {"fine"},
	}
	scrubSecrets(h, http.Header{"Authorization": {"Bearer s3cret"}, "X-Api-Key": {"s3cr3t-key"}})
	var left []string
	for k := range h {
		left = append(left, k)
	}
	slices.Sort(left)
	if !slices.Equal(left, []string{"X-Plain"}) {
		t.Errorf("left %v, want [X-Plain]", left)
	}
}
