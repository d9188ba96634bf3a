package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkForward is one small run-shaped request through a gateway to
// a node that answers at once, against the same request signed and sent
// to the node directly: the difference is the gateway's cost per request
// (make bench measures it over real nodes).
func BenchmarkForward(b *testing.B) {
	node := newFakeNodeB(b)
	cred, _ := NewCredential([]byte(testSecret), nil)
	g, err := New(Config{Source: Static{{Name: "a", URL: node.URL}}, Credential: cred})
	if err != nil {
		b.Fatal(err)
	}
	g.Start(b.Context())
	gw := httptest.NewServer(g)
	b.Cleanup(gw.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	for _, tc := range []struct {
		name, url string
		sign      bool
	}{{"direct", node.URL, true}, {"gateway", gw.URL, false}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				req, _ := http.NewRequest("POST", tc.url+"/v1/run", strings.NewReader(runBody))
				if tc.sign {
					cred.Sign(req, "")
				}
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("HTTP %d", resp.StatusCode)
				}
			}
		})
	}
}

func newFakeNodeB(b *testing.B) *httptest.Server {
	cred, _ := NewCredential([]byte(testSecret), nil)
	srv := httptest.NewServer(RequireCredential(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			_, _ = io.WriteString(w, `{"templates":[{"name":"python","ready":1}]}`)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"stdout":"42\n","exit_code":0}`)
	}), cred))
	b.Cleanup(srv.Close)
	return srv
}
