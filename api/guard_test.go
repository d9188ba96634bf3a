package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/internal/webguard"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// A web page's cross-site POST and a DNS-rebound Host are refused on
// every door of the engine, before any door's own handler or auth runs;
// clients that are not browsers, and listed origins, pass.
func TestGuardBrowsers(t *testing.T) {
	reached := 0
	door := func(r *gin.Engine) {
		r.POST("/door", func(c *gin.Context) { reached++; c.String(http.StatusOK, "door") })
	}
	guard, err := webguard.New([]string{"paddock.example.com"}, []string{"https://lab.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{Guard: guard, Mounts: []func(*gin.Engine){door}}, true)
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		path, host, origin string
		want               int
		code               string
	}{
		{"/door", "", "", http.StatusOK, ""},
		{"/door", "", "http://evil.example", http.StatusForbidden, "forbidden_origin"},
		{"/v1/run", "", "http://evil.example", http.StatusForbidden, "forbidden_origin"},
		{"/door", "", "null", http.StatusForbidden, "forbidden_origin"},
		{"/door", "", "https://lab.example.com", http.StatusOK, ""},
		{"/door", "evil.example:8080", "", http.StatusForbidden, "forbidden_host"},
		{"/door", "paddock.example.com", "", http.StatusOK, ""},
		{"/door", "paddock.example.com", "https://paddock.example.com", http.StatusOK, ""}, // TLS ended by a proxy: same host
		{"/door", "paddock.example.com", "https://other.example.com", http.StatusForbidden, "forbidden_origin"},
		{"/door", "paddock.example.com", "http://paddock.example.com", http.StatusOK, ""},
	} {
		req, err := http.NewRequest(http.MethodPost, srv.URL+tc.path, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		before := reached
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || (tc.code != "" && !strings.Contains(string(body), `"code":"`+tc.code+`"`)) {
			t.Errorf("POST %s Host %q Origin %q: %d %s, want %d %s", tc.path, tc.host, tc.origin, resp.StatusCode, body, tc.want, tc.code)
		}
		if tc.path == "/door" && tc.want != http.StatusOK && reached != before {
			t.Errorf("Host %q Origin %q: the door's handler ran", tc.host, tc.origin)
		}
	}
}
