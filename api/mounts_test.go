package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// Another door mounted on the API's engine serves on the same handler and
// shares the one core: its runs are counted under its name beside /v1's,
// and a tenant's request bucket is the same through either door.
func TestMounts(t *testing.T) {
	p, err := pool.New(&runnertest.Runtime{}, pool.Config{Templates: []pool.Template{
		{Name: "python", Spec: runner.Spec{Language: "python"}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("pool Close: %v", err)
		}
	})
	svc, err := core.New(core.Config{Pool: p, Templates: []core.Template{{Name: "python", Language: "python"}},
		TenantRate: 0.001, TenantBurst: 3})
	if err != nil {
		t.Fatal(err)
	}
	door := func(r *gin.Engine) {
		r.POST("/door/run", func(c *gin.Context) {
			caller := core.Caller{Door: "test"}
			if err := svc.Admit(caller); err != nil {
				c.String(http.StatusTooManyRequests, core.Classify(err).Code)
				return
			}
			res, err := svc.Run(c.Request.Context(), caller, core.RunInput{Language: "python", Code: "hello"}, nil)
			if err != nil {
				c.String(http.StatusInternalServerError, err.Error())
				return
			}
			c.String(http.StatusOK, string(res.Result.Stdout))
		})
	}
	h := api.New(api.Config{Core: svc, Mounts: []func(*gin.Engine){door}})

	if rec := serveAs(t, h, http.MethodPost, "/door/run", "", ""); rec.Code != http.StatusOK || rec.Body.String() != "hello" {
		t.Fatalf("door run: %d %s", rec.Code, rec.Body)
	}
	if rec := serveAs(t, h, http.MethodPost, "/v1/run", `{"language":"python","code":"1"}`, ""); rec.Code != http.StatusOK {
		t.Fatalf("REST run: %d %s", rec.Code, rec.Body)
	}
	// Three requests of the bucket's three are spent (the scrape below is
	// outside /v1): the next, through either door, is refused.
	if rec := serveAs(t, h, http.MethodGet, "/v1/templates", "", ""); rec.Code != http.StatusOK {
		t.Fatalf("templates: %d", rec.Code)
	}
	if rec := serveAs(t, h, http.MethodPost, "/door/run", "", ""); rec.Code != http.StatusTooManyRequests || rec.Body.String() != "rate_limited" {
		t.Errorf("door run over the shared bucket: %d %s", rec.Code, rec.Body)
	}
	if rec := serveAs(t, h, http.MethodGet, "/v1/templates", "", ""); rec.Code != http.StatusTooManyRequests {
		t.Errorf("REST over the shared bucket: %d", rec.Code)
	}
	body := scrape(t, h, "")
	checkLines(t, body, []string{
		`paddock_core_calls_total{door="rest",operation="run",outcome="ok"} 1`,
		`paddock_core_calls_total{door="test",operation="run",outcome="ok"} 1`,
		`paddock_core_calls_total{door="test",operation="admit",outcome="rate_limited"} 1`,
		`paddock_core_calls_total{door="rest",operation="admit",outcome="rate_limited"} 1`,
		`paddock_run_phase_seconds_count{phase="total",start="cold",template="python"} 2`,
	})
	if t.Failed() {
		t.Log(strings.Join(strings.Split(body, "\n")[:20], "\n"))
	}
}
