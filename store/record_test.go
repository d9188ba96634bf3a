package store_test

import (
	"testing"
	"time"

	"github.com/paddock-dev/paddock/store"
)

const printHash = "d287bb7f9d15abdc5b6e98536263815744b6ef21c8f3c839fc434ca70d8efe99" // sha256("print(1)")

func TestRecordRunRoundTrip(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		for _, tc := range []struct {
			name       string
			recordCode bool
			wantCode   string
		}{
			{"code off", false, ""},
			{"code on", true, "print(1)"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ce := e
				if tc.recordCode { // a database of its own
					ce = newEnv(t, e.driver)
				}
				cfg := ce.cfg
				cfg.RecordCode = tc.recordCode
				s := open(t, cfg)
				s.RecordRun(store.Run{Kind: store.KindRun, At: t0.Add(1500 * time.Millisecond), Tenant: "acme", Door: "rest",
					Template: "python", Runtime: "gvisor", StartKind: "pool",
					QueueMS: 1, AcquireMS: 2, StartMS: 3, ExecMS: 40, TotalMS: 46,
					Reason: "error", ExitCode: 3, StdoutBytes: 10, StderrBytes: 20, Code: "print(1)",
					Network: "allow pypi.org:443 *.pythonhosted.org:443"})
				flush(t, s)
				runs := allRuns(t, s)
				if len(runs) != 1 {
					t.Fatalf("runs = %+v, want 1", runs)
				}
				got := runs[0]
				if got.ID <= 0 {
					t.Errorf("ID = %d, want > 0", got.ID)
				}
				got.ID = 0
				want := store.Run{Kind: store.KindRun, At: time.Date(2026, 3, 1, 12, 0, 1, 500e6, time.UTC), Tenant: "acme", Door: "rest",
					Template: "python", Runtime: "gvisor", StartKind: "pool",
					QueueMS: 1, AcquireMS: 2, StartMS: 3, ExecMS: 40, TotalMS: 46,
					Reason: "error", ExitCode: 3, StdoutBytes: 10, StderrBytes: 20, CodeSHA256: printHash, Code: tc.wantCode,
					Network: "allow pypi.org:443 *.pythonhosted.org:443"}
				if got != want {
					t.Errorf("run =\n%+v, want\n%+v", got, want)
				}
				if n := metric(t, ce.reg, "paddock_store_written_total", "table", "runs"); n != 1 {
					t.Errorf("written{runs} = %v, want 1", n)
				}
			})
		}
	})
}

func TestRecordDefaultsTimeAndCell(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		s := open(t, e.cfg)
		s.RecordRun(store.Run{Kind: store.KindCell, Tenant: "acme", Door: "jupyter", Template: "python",
			StartKind: "kernel", SessionID: "s-1", Reason: "ok", Code: "x = 1", ExecMS: 5, TotalMS: 6})
		flush(t, s)
		runs := allRuns(t, s)
		if len(runs) != 1 {
			t.Fatalf("runs = %+v", runs)
		}
		r := runs[0]
		if !r.At.Equal(t0) || r.Kind != store.KindCell || r.SessionID != "s-1" || r.Door != "jupyter" ||
			r.CodeSHA256 != "8ff436def1451285599a1b1ad70800493b8dcafde2912e1a38345633054e4c26" || r.Code != "" {
			t.Errorf("cell = %+v", r)
		}
	})
}

func TestRecordOnNilStore(t *testing.T) {
	var s *store.Store
	s.RecordRun(store.Run{Kind: store.KindRun})
	s.RecordSessionEvent(store.SessionEvent{})
	s.RecordAuthFailure(store.AuthFailure{})
	s.RecordAdminAction(store.AdminAction{})
	if err := s.Close(t.Context()); err != nil {
		t.Errorf("Close of nil = %v", err)
	}
}

func TestSessionEvents(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		s := open(t, e.cfg)
		for i, ev := range []string{store.EventCreated, store.EventStateLost, store.EventRestarted, store.EventDeleted} {
			s.RecordSessionEvent(store.SessionEvent{At: t0.Add(time.Duration(i) * time.Second), Tenant: "acme", Door: "rest",
				SessionID: "s-1", Template: "python", Event: ev, Detail: "d" + ev})
		}
		s.RecordSessionEvent(store.SessionEvent{At: t0, Tenant: "other", SessionID: "s-2", Event: store.EventExpired})
		flush(t, s)
		page, err := s.SessionEvents(t.Context(), store.EventFilter{Scope: store.Scope{Tenant: "acme"}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range page.Events {
			if ev.SessionID != "s-1" || ev.Tenant != "acme" || ev.Detail != "d"+ev.Event {
				t.Errorf("event %+v", ev)
			}
			got = append(got, ev.Event)
		}
		if want := []string{"deleted", "restarted", "state_lost", "created"}; !equal(got, want) {
			t.Errorf("events = %v, want %v", got, want)
		}
		page, err = s.SessionEvents(t.Context(), store.EventFilter{Scope: store.Scope{All: true}, Event: store.EventExpired})
		if err != nil || len(page.Events) != 1 || page.Events[0].SessionID != "s-2" {
			t.Errorf("expired events = %+v, %v", page.Events, err)
		}
	})
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
