package kernels_test

import (
	"testing"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// ListAll shows every owner's sessions, oldest first, each with its
// owner; expired and deleted ones are left out as List leaves them out.
func TestListAll(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{})
	if got := f.m.ListAll(); got == nil || len(got) != 0 {
		t.Fatalf("ListAll on an empty table = %#v, want an empty list", got)
	}
	short := f.create(t, "carol", kernels.CreateOptions{TTL: 30 * time.Second})
	f.clock.Advance(time.Second)
	alice := f.create(t, "alice", kernels.CreateOptions{TTL: time.Minute})
	f.clock.Advance(time.Second)
	anon := f.create(t, "", kernels.CreateOptions{Template: "node", TTL: time.Minute})
	f.clock.Advance(time.Second)
	gone := f.create(t, "bob", kernels.CreateOptions{TTL: time.Minute})
	if err := f.m.Delete(t.Context(), "bob", gone.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	f.clock.Advance(28 * time.Second) // carol's session is 31 s idle: expired

	type row struct{ id, owner, template string }
	want := []row{{alice.ID, "alice", "python"}, {anon.ID, "", "node"}}
	got := f.m.ListAll()
	if len(got) != len(want) {
		t.Fatalf("ListAll = %+v, want %d sessions", got, len(want))
	}
	for i, info := range got {
		if r := (row{info.ID, info.Owner, info.Template}); r != want[i] {
			t.Errorf("ListAll[%d] = %+v, want %+v", i, r, want[i])
		}
	}
	if got := f.m.List("carol"); len(got) != 0 {
		t.Errorf("List(carol) = %+v, want none (%s expired)", got, short.ID)
	}
}
