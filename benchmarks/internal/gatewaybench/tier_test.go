package gatewaybench

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/gateway"
)

// A request through signer reaches a handler behind the node's
// credential check with the token; without the credential it is refused.
func TestSignerPassesTheNodeCheck(t *testing.T) {
	cred, err := gateway.NewCredential([]byte("0123456789abcdef0123456789abcdef"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var auth string
	node := httptest.NewServer(gateway.RequireCredential(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
	}), cred))
	t.Cleanup(node.Close)
	for _, tc := range []struct {
		name string
		cred *gateway.Credential
		want int
	}{{"signed", cred, http.StatusOK}, {"unsigned", nil, http.StatusUnauthorized}} {
		t.Run(tc.name, func(t *testing.T) {
			c := &http.Client{Transport: signer{http.DefaultTransport, tc.cred, "tok"}}
			resp, err := c.Get(node.URL + "/v1/templates?x=1")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("HTTP %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
	if auth != "Bearer tok" {
		t.Errorf("the node saw Authorization %q, want \"Bearer tok\"", auth)
	}
}

func TestMergeSumsWindows(t *testing.T) {
	a := report.Throughput{Concurrency: 4, Elapsed: 10 * time.Second, Runs: 50, Busy: 1, Starts: map[string]int{"pool": 30, "restore": 20},
		Latencies: []time.Duration{1, 2}, BusyByStatus: map[int]int{503: 1}}
	b := report.Throughput{Concurrency: 4, Elapsed: 11 * time.Second, Runs: 55, Starts: map[string]int{"restore": 55},
		Latencies: []time.Duration{3}}
	m := merge(merge(report.Throughput{}, a), b)
	if m.Runs != 105 || m.Elapsed != 21*time.Second || m.Busy != 1 || m.Concurrency != 4 || len(m.Latencies) != 3 ||
		m.Starts["pool"] != 30 || m.Starts["restore"] != 75 || m.BusyByStatus[503] != 1 {
		t.Errorf("merge = %+v", m)
	}
	if m.Rate() != 5 {
		t.Errorf("Rate() = %v, want 5", m.Rate())
	}
}
