package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// graphqlAnswer is one of doors/clients/graphql_client.mjs's answers:
// data, or the refusal as graphql-request saw it.
type graphqlAnswer struct {
	Status   int             `json:"status"`
	Data     json.RawMessage `json:"data"`
	Codes    []string        `json:"codes"`
	Messages []string        `json:"messages"`
}

type graphqlRun struct {
	ID, Kind, Tenant, Door, Template, Runtime, StartKind, CodeSHA256 string
	Reason, Error, Code, SessionID                                   *string
	TotalMS, ExitCode, StdoutBytes                                   int64
}

type graphqlClientOut struct {
	Introspection struct {
		QueryFields []string `json:"queryFields"`
		RunFields   []string `json:"runFields"`
		SDLBytes    int      `json:"sdlBytes"`
	} `json:"introspection"`
	Valid map[string][]string `json:"valid"`
	Viewer, Templates, Pools, Runs, RunsPage2, Sessions, Events, Aggregates, Fragments,
	Deep, DeepChain, Costly, BadFirst, BadTime, OtherTenant, Invalid *graphqlAnswer
}

func (a *graphqlAnswer) decode(t *testing.T, name string, into any) {
	t.Helper()
	if a == nil || a.Status != 0 {
		t.Fatalf("%s: refused: %+v", name, a)
	}
	if err := json.Unmarshal(a.Data, into); err != nil {
		t.Fatalf("%s: %s: %v", name, a.Data, err)
	}
}

func (a *graphqlAnswer) refused(t *testing.T, name, code string) {
	t.Helper()
	if a == nil || a.Status != http.StatusBadRequest || !slices.Contains(a.Codes, code) {
		t.Errorf("%s: want HTTP 400 with a %s error, got %+v", name, code, a)
	}
}

// TestE2EGraphQL drives the GraphQL door with the real npm clients
// (graphql-request; graphql-js's introspection, buildClientSchema and
// validate) against a real Paddock on gVisor with auth on: introspection,
// every root field, cursor pages, fragments and directives, the depth,
// cost and input refusals, tenants kept apart, and the parse cache.
func TestE2EGraphQL(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("graphql-secret-", 3)), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newE2EWith(t, "--jwt-hs256-secret-file="+secret)
	alice, bob := mintToken(t, secret, "alice"), mintToken(t, secret, "bob")

	// alice: three runs and a session with two cells, one raising.
	for _, code := range []string{"print(1)", "print(2)", "raise SystemExit(4)"} {
		if status, raw := e.call(t, "POST", "/v1/run", alice, map[string]any{"language": "python", "code": code}); status != http.StatusOK {
			t.Fatalf("run: HTTP %d %s", status, raw)
		}
	}
	status, raw := e.call(t, "POST", "/v1/sessions", alice, map[string]any{"language": "python"})
	var s struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &s); status != http.StatusCreated || s.ID == "" {
		t.Fatalf("session: HTTP %d %s", status, raw)
	}
	for _, code := range []string{"x = 41", "x / 0"} {
		if status, raw := e.call(t, "POST", "/v1/sessions/"+s.ID+"/execute", alice, map[string]any{"code": code}); status != http.StatusOK {
			t.Fatalf("execute: HTTP %d %s", status, raw)
		}
	}
	if err := e.st.History.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	url := e.srv.URL + "/v1/graphql"

	var out graphqlClientOut
	node(t, &out, "graphql_client.mjs", url, alice)
	t.Logf("introspection: query fields %v, %d bytes of SDL", out.Introspection.QueryFields, out.Introspection.SDLBytes)
	for _, f := range []string{"aggregates", "pools", "runs", "sessionEvents", "sessions", "templates", "viewer"} {
		if !slices.Contains(out.Introspection.QueryFields, f) {
			t.Errorf("introspection lacks Query.%s: %v", f, out.Introspection.QueryFields)
		}
	}
	for name, errs := range out.Valid {
		if len(errs) > 0 {
			t.Errorf("graphql-js finds %s invalid against the introspected schema: %v", name, errs)
		}
	}

	var viewer struct {
		Viewer struct {
			Tenant         string
			Scopes         []string
			HistoryEnabled bool
		}
	}
	out.Viewer.decode(t, "viewer", &viewer)
	if viewer.Viewer.Tenant != "alice" || !viewer.Viewer.HistoryEnabled {
		t.Errorf("viewer %+v", viewer.Viewer)
	}
	var templates struct {
		Templates []struct {
			Name, Language, Runtime string
			Limits                  struct{ MemoryMB, TimeoutMS int }
		}
	}
	out.Templates.decode(t, "templates", &templates)
	var pools struct {
		Pools []struct {
			Template string
			Ready    int
			Hits     int
			Typename string `json:"__typename"`
		}
	}
	out.Pools.decode(t, "pools", &pools)
	if len(pools.Pools) != len(templates.Templates) || len(pools.Pools) == 0 || pools.Pools[0].Typename != "Pool" {
		t.Errorf("pools %+v for templates %+v", pools.Pools, templates.Templates)
	}

	var runs struct {
		Runs struct {
			Items []graphqlRun
			Next  *string
		}
	}
	out.Runs.decode(t, "runs", &runs)
	if len(runs.Runs.Items) != 2 || runs.Runs.Next == nil {
		t.Fatalf("first page of 2: %+v", runs.Runs)
	}
	newest := runs.Runs.Items[0]
	if newest.Kind != "CELL" || newest.Tenant != "alice" || newest.Door != "rest" || newest.SessionID == nil || *newest.SessionID != s.ID ||
		newest.Reason == nil || *newest.Reason != "error" || newest.Code != nil || newest.CodeSHA256 != sha("x / 0") {
		t.Errorf("newest row %+v: want alice's raising cell, its code hashed and not kept", newest)
	}
	var page2 struct {
		Runs struct {
			Items []struct{ ID string }
		}
	}
	out.RunsPage2.decode(t, "runs page 2", &page2)
	if len(page2.Runs.Items) != 2 || page2.Runs.Items[0].ID == runs.Runs.Items[1].ID {
		t.Errorf("second page %+v after %+v", page2.Runs.Items, runs.Runs.Items)
	}
	var sessions struct {
		Sessions []struct {
			ID, Tenant     string
			ExecutionCount int
			Cells          struct {
				Items []struct{ Kind, SessionID string }
			}
		}
	}
	out.Sessions.decode(t, "sessions", &sessions)
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].ID != s.ID || sessions.Sessions[0].ExecutionCount != 2 ||
		len(sessions.Sessions[0].Cells.Items) != 2 {
		t.Errorf("sessions %+v", sessions.Sessions)
	}
	var events struct {
		SessionEvents struct {
			Items []struct{ Event, SessionID string }
		}
	}
	out.Events.decode(t, "session events", &events)
	if len(events.SessionEvents.Items) == 0 || events.SessionEvents.Items[0].Event != "created" {
		t.Errorf("events %+v", events.SessionEvents.Items)
	}
	var aggs struct {
		Aggregates []struct {
			StartKind, Template string
			Count               int
			TotalP50, TotalP99  int
		}
	}
	out.Aggregates.decode(t, "aggregates", &aggs)
	var counted int
	for _, a := range aggs.Aggregates {
		counted += a.Count
		if a.TotalP50 > a.TotalP99 || a.TotalP50 <= 0 {
			t.Errorf("aggregate %+v", a)
		}
	}
	if counted != 3 {
		t.Errorf("aggregates count %d runs, want alice's 3: %+v", counted, aggs.Aggregates)
	}
	var frag struct {
		Viewer struct{ Tenant string }
		T      []any `json:"t"`
		P      []struct{ Template string }
	}
	out.Fragments.decode(t, "fragments", &frag)
	if frag.Viewer.Tenant != "alice" || frag.T != nil || len(frag.P) == 0 {
		t.Errorf("fragment, @skip and @include: %s", out.Fragments.Data)
	}

	out.Deep.refused(t, "introspection's lists nested 12 deep", "depth_limit")
	out.DeepChain.refused(t, "fields nested 23 deep", "depth_limit")
	out.Costly.refused(t, "ten pages of 500 runs", "cost_limit")
	out.Invalid.refused(t, "an unknown field", "invalid_query")
	for name, a := range map[string]*graphqlAnswer{"first: 501": out.BadFirst, "since: yesterday": out.BadTime,
		"another tenant's runs": out.OtherTenant} {
		if a == nil || a.Status != http.StatusOK || len(a.Codes) != 1 {
			t.Errorf("%s: want a field error in a 200 answer, got %+v", name, a)
		}
	}
	if !slices.Contains(out.BadFirst.Codes, "invalid_request") || !slices.Contains(out.BadTime.Codes, "invalid_request") ||
		!slices.Contains(out.OtherTenant.Codes, "insufficient_scope") {
		t.Errorf("codes: first %v, since %v, other tenant %v", out.BadFirst.Codes, out.BadTime.Codes, out.OtherTenant.Codes)
	}

	// The parse cache, as /metrics counts it.
	var admin bytes.Buffer
	if err := tokenCmd([]string{"--subject=ops", "--scopes=admin", "--jwt-hs256-secret-file=" + secret}, &admin); err != nil {
		t.Fatal(err)
	}
	cache := func() (hits, misses float64) {
		status, raw := e.call(t, "GET", "/metrics", strings.TrimSpace(admin.String()), nil)
		if status != http.StatusOK {
			t.Fatalf("/metrics: HTTP %d", status)
		}
		return metricValue(t, string(raw), `paddock_graphql_documents_total{result="hit"}`),
			metricValue(t, string(raw), `paddock_graphql_documents_total{result="miss"}`)
	}
	hits0, misses0 := cache()

	// bob sees none of alice's runs, cells or sessions.
	var bobOut graphqlClientOut
	node(t, &bobOut, "graphql_client.mjs", url, bob)
	hits, misses := cache()
	var bobRuns struct {
		Runs struct{ Items []graphqlRun }
	}
	bobOut.Runs.decode(t, "bob's runs", &bobRuns)
	var bobSessions struct{ Sessions []any }
	bobOut.Sessions.decode(t, "bob's sessions", &bobSessions)
	var bobEvents struct {
		SessionEvents struct{ Items []any }
	}
	bobOut.Events.decode(t, "bob's events", &bobEvents)
	var bobAggs struct{ Aggregates []any }
	bobOut.Aggregates.decode(t, "bob's aggregates", &bobAggs)
	if len(bobRuns.Runs.Items)+len(bobSessions.Sessions)+len(bobEvents.SessionEvents.Items)+len(bobAggs.Aggregates) != 0 {
		t.Errorf("bob sees alice's rows: runs %+v sessions %v events %v aggregates %v",
			bobRuns.Runs.Items, bobSessions.Sessions, bobEvents.SessionEvents.Items, bobAggs.Aggregates)
	}
	status, raw = e.call(t, "POST", "/v1/graphql", bob, map[string]any{"query": `{ session(id: "` + s.ID + `") { id } }`})
	if status != http.StatusOK || string(raw) != `{"data":{"session":null}}` {
		t.Errorf("bob asking for alice's session: HTTP %d %s", status, raw)
	}

	// bob's client sent the same documents: the cache answered them.
	t.Logf("parse cache: %v hits, %v misses after alice's client; %v hits, %v misses after bob's", hits0, misses0, hits, misses)
	if misses != misses0 || hits <= hits0 {
		t.Errorf("bob's client sent alice's documents again: want only hits, got %v more misses and %v more hits", misses-misses0, hits-hits0)
	}
	// The admin scope reads every tenant's rows, and the read is audited.
	status, raw = e.call(t, "POST", "/v1/graphql", strings.TrimSpace(admin.String()),
		map[string]any{"query": `{ runs(first: 500, filter: {allTenants: true}) { items { tenant } } }`})
	var all struct {
		Data struct {
			Runs struct{ Items []struct{ Tenant string } }
		}
	}
	if json.Unmarshal(raw, &all); status != http.StatusOK || len(all.Data.Runs.Items) != 5 || all.Data.Runs.Items[0].Tenant != "alice" {
		t.Errorf("admin, all tenants: HTTP %d %s; want alice's 3 runs and 2 cells", status, raw)
	}
	if err := e.st.History.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, filepath.Join(e.cfg.StateDir, "history.db"), "SELECT COUNT(*) FROM admin_actions WHERE tenant = 'ops' AND action = 'read_history' AND door = 'graphql'"); n != 1 {
		t.Errorf("%d read_history admin actions recorded for ops through graphql, want 1", n)
	}

	// No token: 401 with a GraphQL body.
	status, raw = e.call(t, "POST", "/v1/graphql", "", map[string]any{"query": "{ viewer { tenant } }"})
	if status != http.StatusUnauthorized || !strings.Contains(string(raw), `"errors"`) {
		t.Errorf("no token: HTTP %d %s", status, raw)
	}
}

// metricValue is the value of the sample named series in a scrape.
func metricValue(t *testing.T, scrape, series string) float64 {
	t.Helper()
	for _, l := range strings.Split(scrape, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s:\n%s", series, grepLines(scrape, "paddock_graphql"))
	return 0
}
