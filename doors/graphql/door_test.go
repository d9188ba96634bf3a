package graphqldoor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/store"
)

// fakeCore answers the door's calls from fixed values; a query's error
// makes every history call fail with it.
type fakeCore struct {
	templates []core.TemplateInfo
	runs      []store.Run
	err       error
	scopes    []store.Scope
	mu        sync.Mutex
}

func (f *fakeCore) AuthenticateWith(_ netip.Addr, door string, token func() (string, error)) (core.Caller, error) {
	tok, _ := token()
	if tok == "bad" {
		return core.Caller{}, &core.Error{Kind: core.KindUnauthenticated, Code: "invalid_token", Message: "bad token"}
	}
	return core.Caller{Tenant: tok, Door: door}, nil
}
func (f *fakeCore) AdmitQuota(core.Caller) (core.Quota, error) { return core.Quota{}, nil }
func (f *fakeCore) Templates() []core.TemplateInfo             { return f.templates }
func (f *fakeCore) Sessions(core.Caller) []core.Session        { return nil }
func (f *fakeCore) AllSessions(core.Caller) ([]core.Session, error) {
	return nil, &core.Error{Kind: core.KindForbidden, Code: "insufficient_scope", Message: "admin only"}
}
func (f *fakeCore) Session(core.Caller, string) (core.Session, error) {
	return core.Session{}, &core.Error{Kind: core.KindNotFound, Code: "session_not_found", Message: "no such session"}
}
func (f *fakeCore) HistoryEnabled() bool { return true }
func (f *fakeCore) RunHistory(_ context.Context, c core.Caller, q core.HistoryQuery, rf store.RunFilter) (store.RunPage, error) {
	f.mu.Lock()
	f.scopes = append(f.scopes, store.Scope{Tenant: c.Tenant})
	f.mu.Unlock()
	if f.err != nil {
		return store.RunPage{}, f.err
	}
	return store.RunPage{Runs: f.runs[:min(rf.Limit, len(f.runs))]}, nil
}
func (f *fakeCore) SessionEventHistory(context.Context, core.Caller, core.HistoryQuery, store.EventFilter) (store.EventPage, error) {
	return store.EventPage{}, f.err
}
func (f *fakeCore) RunAggregates(context.Context, core.Caller, core.HistoryQuery, store.AggregateFilter) ([]store.Aggregate, error) {
	return nil, f.err
}

type answer struct {
	status int
	Data   json.RawMessage
	Errors []struct {
		Message    string
		Path       []any
		Extensions struct{ Code string }
	}
}

func serve(t *testing.T, f *fakeCore, opts Options, token, query string, vars map[string]any) answer {
	t.Helper()
	mount, err := Mount(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	mount(r)
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	var a answer
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		t.Fatalf("HTTP %d %s: %v", w.Code, w.Body, err)
	}
	a.status = w.Code
	return a
}

func (a answer) code(t *testing.T, status int, code string) {
	t.Helper()
	if a.status != status || len(a.Errors) == 0 || a.Errors[0].Extensions.Code != code {
		t.Errorf("want HTTP %d with a %s error, got HTTP %d %+v", status, code, a.status, a.Errors)
	}
}

func someRuns(n int) []store.Run {
	out := make([]store.Run, n)
	for i := range out {
		out[i] = store.Run{ID: int64(i + 1), Kind: store.KindRun, Tenant: "alice", Reason: "ok"}
	}
	return out
}

func TestLimitsRefuseBeforeExecution(t *testing.T) {
	f := &fakeCore{runs: someRuns(10)}
	wide := "{ " + strings.Repeat("viewer { tenant } ", 1) + func() string {
		var b strings.Builder
		for i := range 101 {
			fmt.Fprintf(&b, "a%d: viewer { tenant } ", i)
		}
		return b.String()
	}() + "}"
	serve(t, f, Options{}, "alice", wide, nil).code(t, http.StatusBadRequest, "breadth_limit")
	// 6 fragments of 90 fields each: no set is too wide, the whole is.
	many := "{ ...F0 }"
	for i := range 6 {
		many += fmt.Sprintf(" fragment F%d on Query { %s %s }", i, strings.Repeat("__typename ", 89), map[bool]string{true: fmt.Sprintf("...F%d", i+1), false: ""}[i < 5])
	}
	serve(t, f, Options{}, "alice", many, nil).code(t, http.StatusBadRequest, "breadth_limit")

	costly := `query($n: Int) { a: runs(first: $n) { items { id kind at tenant door } } b: runs(first: $n) { items { id kind at } } }`
	serve(t, f, Options{Limits: Limits{MaxCost: 1000}}, "alice", costly, map[string]any{"n": 200}).code(t, http.StatusBadRequest, "cost_limit")
	if len(f.scopes) != 0 {
		t.Errorf("a refused query reached the core %d times", len(f.scopes))
	}
	a := serve(t, f, Options{Limits: Limits{MaxCost: 1000}}, "alice", costly, map[string]any{"n": 10})
	if a.status != http.StatusOK || len(a.Errors) != 0 {
		t.Errorf("the same query with small pages: HTTP %d %+v", a.status, a.Errors)
	}

	chain := "name"
	for range 20 {
		chain = "ofType { " + chain + " }"
	}
	serve(t, f, Options{}, "alice", `{ __type(name: "Run") { fields { type { `+chain+` } } } }`, nil).code(t, http.StatusBadRequest, "depth_limit")
	long := "{ viewer { tenant } }" + strings.Repeat(" ", 40<<10)
	serve(t, f, Options{}, "alice", long, nil).code(t, http.StatusBadRequest, "query_too_large")

	// A fragment that doubles at each level is weighed without expanding
	// it all: the walk stops at the budget.
	bomb := "query { ...F0 }\n"
	for i := range 30 {
		bomb += fmt.Sprintf("fragment F%d on Query { a%d: viewer { tenant } ...F%d }\n", i, i, i+1)
	}
	bomb += "fragment F30 on Query { viewer { tenant } }"
	serve(t, f, Options{Limits: Limits{MaxCost: 40}}, "alice", bomb, nil).code(t, http.StatusBadRequest, "cost_limit")
}

func TestFieldErrorsAndNulls(t *testing.T) {
	f := &fakeCore{err: &core.Error{Kind: core.KindUnavailable, Code: "history_unavailable", Message: "the history database did not answer"}}
	// runs is non-null: its error nulls data, with the core's code and the path.
	a := serve(t, f, Options{}, "alice", `{ viewer { tenant } runs { items { id } } }`, nil)
	if a.status != http.StatusOK || string(a.Data) != "null" || len(a.Errors) != 1 ||
		a.Errors[0].Extensions.Code != "history_unavailable" || fmt.Sprint(a.Errors[0].Path) != "[runs]" {
		t.Errorf("HTTP %d data %s errors %+v", a.status, a.Data, a.Errors)
	}
	// session is nullable: not found is null, not an error; another
	// tenant's sessions need the admin scope.
	a = serve(t, f, Options{}, "alice", `{ session(id: "x") { id } viewer { tenant } }`, nil)
	if string(a.Data) != `{"session":null,"viewer":{"tenant":"alice"}}` || len(a.Errors) != 0 {
		t.Errorf("data %s errors %+v", a.Data, a.Errors)
	}
	serve(t, f, Options{}, "alice", `{ sessions(allTenants: true) { id } }`, nil).code(t, http.StatusOK, "insufficient_scope")
	serve(t, f, Options{}, "bad", `{ viewer { tenant } }`, nil).code(t, http.StatusUnauthorized, "invalid_token")
	serve(t, f, Options{}, "alice", `{ runs(first: 0) { items { id } } }`, nil).code(t, http.StatusOK, "invalid_request")
	serve(t, f, Options{}, "alice", `query($n: Int!) { runs(first: $n) { next } }`, map[string]any{"n": "ten"}).code(t, http.StatusBadRequest, "invalid_variables")
	serve(t, f, Options{}, "alice", `{ runs { items { nosuch } } }`, nil).code(t, http.StatusBadRequest, "invalid_query")
	serve(t, f, Options{}, "alice", `query A { viewer { tenant } } query B { viewer { tenant } }`, nil).code(t, http.StatusBadRequest, "invalid_request")
}

func TestCacheIsSharedSafely(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := &fakeCore{runs: someRuns(3)}
	mount, err := Mount(f, Options{Registerer: reg, CacheSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	mount(r)
	queries := []string{`{ runs(first: 2) { items { id tenant } } }`, `{ nosuch }`}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			body, _ := json.Marshal(map[string]any{"query": queries[i%2]})
			req := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer alice")
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			if want := []int{http.StatusOK, http.StatusBadRequest}[i%2]; w.Code != want {
				t.Errorf("HTTP %d %s, want %d", w.Code, w.Body, want)
			}
		})
	}
	wg.Wait()
	lookups, err := reg.Gather()
	if err != nil || len(lookups) != 1 {
		t.Fatalf("%v %v", lookups, err)
	}
	var hits, misses float64
	for _, m := range lookups[0].Metric {
		switch m.Label[0].GetValue() {
		case "hit":
			hits = m.Counter.GetValue()
		case "miss":
			misses = m.Counter.GetValue()
		}
	}
	if hits+misses != 20 || misses < 2 || hits < 1 {
		t.Errorf("%v hits, %v misses for 20 lookups of 2 documents", hits, misses)
	}
}
