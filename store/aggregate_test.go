package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/store"
)

func TestAggregates(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		s := open(t, e.cfg)
		at := t0.Add(-30 * time.Minute)
		// python/pool: totals 1..100 ms (written in reverse), acquire a
		// tenth of that, start zero.
		for i := 100; i >= 1; i-- {
			s.RecordRun(store.Run{Kind: store.KindRun, At: at, Tenant: "a", Template: "python", StartKind: "pool",
				TotalMS: int64(i), AcquireMS: int64(i / 10)})
		}
		// python/cold: three runs.
		for _, ms := range []int64{900, 1200, 1000} {
			s.RecordRun(store.Run{Kind: store.KindRun, At: at, Tenant: "a", Template: "python", StartKind: "cold",
				TotalMS: ms, AcquireMS: ms - 100, StartMS: ms - 150})
		}
		// Not counted: a run Paddock failed, a cell, a run outside the
		// window, and another tenant's run (counted only for all).
		s.RecordRun(store.Run{Kind: store.KindRun, At: at, Tenant: "a", Template: "python", StartKind: "cold", TotalMS: 99999, Error: "saturated"})
		s.RecordRun(store.Run{Kind: store.KindCell, At: at, Tenant: "a", Template: "python", StartKind: "cold", TotalMS: 99999})
		s.RecordRun(store.Run{Kind: store.KindRun, At: t0.Add(-2 * time.Hour), Tenant: "a", Template: "python", StartKind: "cold", TotalMS: 99999})
		s.RecordRun(store.Run{Kind: store.KindRun, At: at, Tenant: "b", Template: "node", StartKind: "restore", TotalMS: 150, AcquireMS: 140, StartMS: 130})
		flush(t, s)

		got, err := s.Aggregates(t.Context(), store.AggregateFilter{Scope: store.Scope{Tenant: "a"}})
		if err != nil {
			t.Fatal(err)
		}
		want := []store.Aggregate{
			{StartKind: "cold", Template: "python", Count: 3, TotalP50: 1000, TotalP99: 1200,
				AcquireP50: 900, AcquireP99: 1100, StartP50: 850, StartP99: 1050},
			{StartKind: "pool", Template: "python", Count: 100, TotalP50: 50, TotalP99: 99,
				AcquireP50: 5, AcquireP99: 9, StartP50: 0, StartP99: 0},
		}
		if len(got) != len(want) {
			t.Fatalf("aggregates = %+v, want %+v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("aggregate %d = %+v, want %+v", i, got[i], want[i])
			}
		}

		all, err := s.Aggregates(t.Context(), store.AggregateFilter{Scope: store.Scope{All: true}, Since: t0.Add(-time.Hour), Until: t0})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 3 || all[2] != (store.Aggregate{StartKind: "restore", Template: "node", Count: 1,
			TotalP50: 150, TotalP99: 150, AcquireP50: 140, AcquireP99: 140, StartP50: 130, StartP99: 130}) {
			t.Errorf("all tenants' aggregates = %+v", all)
		}

		if _, err := s.Aggregates(t.Context(), store.AggregateFilter{Since: t0, Until: t0}); !errors.Is(err, store.ErrBadFilter) {
			t.Errorf("empty window: %v, want ErrBadFilter", err)
		}
	})
}
