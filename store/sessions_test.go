package store_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paddock-dev/paddock/store"
)

// The session catalog keeps each home's records apart, replaces a record
// on save, survives a reopen, and forgets a removed one.
func TestSessionCatalog(t *testing.T) {
	eachDialect(t, func(t *testing.T, e *env) {
		s := open(t, e.cfg)
		a := store.SessionCatalog{Store: s, Home: "/srv/a/hibernate"}
		b := store.SessionCatalog{Store: s, Home: "/srv/b/hibernate"}
		ctx := t.Context()
		for _, step := range []struct {
			c       store.SessionCatalog
			id, doc string
		}{
			{a, "01", `{"owner":"alice","n":1}`},
			{a, "02", `{"owner":"bob"}`},
			{a, "01", `{"owner":"alice","n":2}`},
			{b, "01", `{"owner":"carol"}`},
		} {
			if err := step.c.Save(ctx, step.id, []byte(step.doc)); err != nil {
				t.Fatalf("Save(%s): %v", step.id, err)
			}
		}
		if err := a.Save(ctx, "03", []byte("not json")); err == nil {
			t.Error("a record that is not JSON was saved")
		}
		if err := a.Remove(ctx, "02"); err != nil {
			t.Fatal(err)
		}
		if err := a.Remove(ctx, "never"); err != nil {
			t.Errorf("removing a missing record: %v", err)
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		again := e.cfg
		again.Registerer = prometheus.NewRegistry()
		s = open(t, again)
		a.Store, b.Store = s, s
		got, err := a.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ids := slices.Sorted(maps.Keys(got)); !slices.Equal(ids, []string{"01"}) || string(got["01"]) != `{"owner":"alice","n":2}` {
			t.Errorf("home a after reopen: %q", got)
		}
		if got, err := b.Load(ctx); err != nil || string(got["01"]) != `{"owner":"carol"}` || len(got) != 1 {
			t.Errorf("home b: %q, %v", got, err)
		}
	})
}
