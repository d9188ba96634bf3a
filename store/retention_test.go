package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/store"
)

func TestRetentionByAge(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		cfg := e.cfg
		cfg.MaxAge, cfg.PruneInterval = time.Hour, 10*time.Minute
		s := open(t, cfg)
		for _, age := range []time.Duration{3 * time.Hour, 65 * time.Minute, 55 * time.Minute, time.Minute} {
			at := t0.Add(-age)
			s.RecordRun(store.Run{Kind: store.KindRun, At: at, Template: fmt.Sprint(age)})
			s.RecordSessionEvent(store.SessionEvent{At: at, SessionID: fmt.Sprint(age), Event: store.EventCreated})
			s.RecordAuthFailure(store.AuthFailure{At: at, Door: "rest", Client: "192.0.2.1/32", Reason: "invalid_token"})
			s.RecordAdminAction(store.AdminAction{At: at, Action: "list_all_sessions"})
		}
		flush(t, s) // a prune is not due before PruneInterval has passed
		if got := templates(allRuns(t, s)); !equal(got, []string{"1m0s", "55m0s", "1h5m0s", "3h0m0s"}) {
			t.Fatalf("runs before the prune = %v", got)
		}

		e.clock.Advance(10 * time.Minute) // now t0+10m: older than t0-50m goes
		flush(t, s)
		if got := templates(allRuns(t, s)); !equal(got, []string{"1m0s"}) {
			t.Errorf("runs after the prune = %v, want [1m0s]", got)
		}
		page, err := s.SessionEvents(t.Context(), store.EventFilter{Scope: store.Scope{All: true}})
		if err != nil || len(page.Events) != 1 || page.Events[0].SessionID != "1m0s" {
			t.Errorf("session events after the prune = %+v, %v", page.Events, err)
		}
		for table, want := range map[string]float64{"runs": 3, "session_events": 3, "auth_failures": 3, "admin_actions": 3} {
			if got := metric(t, e.reg, "paddock_store_pruned_total", "table", table); got != want {
				t.Errorf("pruned{%s} = %v, want %v", table, got, want)
			}
		}
	})
}

func TestRetentionByRows(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		cfg := e.cfg
		cfg.MaxRows, cfg.MaxAge, cfg.PruneInterval = 3, -1, time.Minute
		s := open(t, cfg)
		for i := range 5 {
			// Ages do not count: the rows written last are kept.
			s.RecordRun(store.Run{Kind: store.KindRun, At: t0.Add(-time.Duration(i) * 24 * time.Hour * 365), Template: fmt.Sprint("t", i)})
		}
		flush(t, s) // all written before a prune is due
		e.clock.Advance(time.Minute)
		flush(t, s)
		if got := templates(allRuns(t, s)); !equal(got, []string{"t2", "t3", "t4"}) {
			t.Errorf("runs = %v, want the last three written, newest first by time: [t2 t3 t4]", got)
		}
	})
}

func templates(runs []store.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Template)
	}
	return out
}
