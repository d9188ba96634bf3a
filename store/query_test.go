package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/store"
)

// seed records runs of two tenants, one a second apart from t0 on.
func seed(t *testing.T, s *store.Store) {
	t.Helper()
	rows := []store.Run{
		{Kind: store.KindRun, Tenant: "a", Door: "rest", Template: "python", Reason: "ok"},
		{Kind: store.KindRun, Tenant: "a", Door: "mcp", Template: "node", Reason: "timeout"},
		{Kind: store.KindCell, Tenant: "a", Door: "jupyter", Template: "python", Reason: "ok", SessionID: "s-1"},
		{Kind: store.KindRun, Tenant: "b", Door: "rest", Template: "python", Reason: "oom"},
		{Kind: store.KindRun, Tenant: "", Door: "e2b", Template: "python", Reason: "ok"},
	}
	for i, r := range rows {
		r.At = t0.Add(time.Duration(i) * time.Second)
		r.Code = fmt.Sprintf("run %d", i)
		s.RecordRun(r)
	}
	flush(t, s)
}

func TestRunsFilters(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		s := open(t, e.cfg)
		seed(t, s)
		for _, tc := range []struct {
			name string
			f    store.RunFilter
			want []string // the runs' door/reason, newest first
		}{
			{"tenant a", store.RunFilter{Scope: store.Scope{Tenant: "a"}}, []string{"jupyter/ok", "mcp/timeout", "rest/ok"}},
			{"anonymous tenant", store.RunFilter{}, []string{"e2b/ok"}},
			{"all tenants", store.RunFilter{Scope: store.Scope{All: true}}, []string{"e2b/ok", "rest/oom", "jupyter/ok", "mcp/timeout", "rest/ok"}},
			{"door", store.RunFilter{Scope: store.Scope{All: true}, Door: "rest"}, []string{"rest/oom", "rest/ok"}},
			{"template", store.RunFilter{Scope: store.Scope{Tenant: "a"}, Template: "node"}, []string{"mcp/timeout"}},
			{"reason", store.RunFilter{Scope: store.Scope{All: true}, Reason: "ok"}, []string{"e2b/ok", "jupyter/ok", "rest/ok"}},
			{"kind cell", store.RunFilter{Scope: store.Scope{All: true}, Kind: store.KindCell}, []string{"jupyter/ok"}},
			{"session", store.RunFilter{Scope: store.Scope{All: true}, SessionID: "s-1"}, []string{"jupyter/ok"}},
			{"time range", store.RunFilter{Scope: store.Scope{All: true}, Since: t0.Add(time.Second), Until: t0.Add(3 * time.Second)},
				[]string{"jupyter/ok", "mcp/timeout"}},
			{"tenant b sees none of a", store.RunFilter{Scope: store.Scope{Tenant: "b"}, Door: "mcp"}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				page, err := s.Runs(t.Context(), tc.f)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, r := range page.Runs {
					got = append(got, r.Door+"/"+r.Reason)
				}
				if !equal(got, tc.want) || page.Next != "" {
					t.Errorf("runs = %v next %q, want %v and no next", got, page.Next, tc.want)
				}
			})
		}
	})
}

func TestRunsPagination(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		s := open(t, e.cfg)
		// Seven runs, the middle three at the same millisecond: the
		// cursor's id breaks the tie.
		ats := []time.Duration{0, time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}
		for i, d := range ats {
			s.RecordRun(store.Run{Kind: store.KindRun, At: t0.Add(d), Template: fmt.Sprint("t", i)})
		}
		flush(t, s)
		var got []string
		var pages int
		cur := ""
		for {
			page, err := s.Runs(t.Context(), store.RunFilter{Limit: 3, Cursor: cur})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, r := range page.Runs {
				got = append(got, r.Template)
			}
			if pages == 1 { // a newer run meanwhile shows on no later page
				s.RecordRun(store.Run{Kind: store.KindRun, At: t0.Add(time.Hour), Template: "late"})
				flush(t, s)
			}
			if page.Next == "" {
				break
			}
			cur = page.Next
		}
		if want := []string{"t6", "t5", "t4", "t3", "t2", "t1", "t0"}; !equal(got, want) || pages != 3 {
			t.Errorf("pages %d of %v, want 3 of %v", pages, got, want)
		}
	})
}

func TestRunsRefusals(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		s := open(t, e.cfg)
		for _, tc := range []struct {
			name string
			f    store.RunFilter
			want error
		}{
			{"not base64", store.RunFilter{Cursor: "%%%"}, store.ErrBadCursor},
			{"another prefix", store.RunFilter{Cursor: "eDE6MTox"}, store.ErrBadCursor}, // "x1:1:1"
			{"no id", store.RunFilter{Cursor: "YzE6MTI"}, store.ErrBadCursor},           // "c1:12"
			{"limit too large", store.RunFilter{Limit: store.MaxPageSize + 1}, store.ErrBadFilter},
			{"negative limit", store.RunFilter{Limit: -1}, store.ErrBadFilter},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := s.Runs(t.Context(), tc.f)
				if !errors.Is(err, tc.want) {
					t.Errorf("Runs = %v, want %v", err, tc.want)
				}
			})
		}
		_, err := s.Runs(t.Context(), store.RunFilter{Cursor: "bogus"})
		if want := `invalid cursor "bogus": pass the next cursor of an earlier page, as it was, or none`; err == nil || err.Error() != want {
			t.Errorf("error = %v, want %q", err, want)
		}
	})
}
