package discovery

import (
	"context"
	"slices"
	"testing"
	"time"
)

// waitNodes waits on src's change notifications until its set is want.
// The deadline only turns a hang into a failure.
func waitNodes(t *testing.T, src Source, want []Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for {
		got, changed := src.Nodes()
		if slices.Equal(got, want) {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("nodes = %v, want %v", got, want)
		}
	}
}

func TestSetUpdate(t *testing.T) {
	var s set
	nodes, changed := s.Nodes()
	if nodes != nil {
		t.Fatalf("new set = %v, want empty", nodes)
	}
	s.update([]Node{{"b", "10.0.0.2:80"}, {"a", "10.0.0.9:80"}, {"a", "10.0.0.1:80"}})
	select {
	case <-changed:
	default:
		t.Fatal("an update did not close the channel")
	}
	nodes, changed = s.Nodes()
	want := []Node{{"a", "10.0.0.1:80"}, {"b", "10.0.0.2:80"}}
	if !slices.Equal(nodes, want) {
		t.Fatalf("nodes = %v, want %v", nodes, want)
	}
	// The same set in another order is no change.
	s.update([]Node{{"b", "10.0.0.2:80"}, {"a", "10.0.0.1:80"}})
	select {
	case <-changed:
		t.Fatal("an update to the same set was announced")
	default:
	}
	// A caller's slice is its own.
	nodes[0].Name = "z"
	if got, _ := s.Nodes(); got[0].Name != "a" {
		t.Fatalf("Nodes shares its slice: %v", got)
	}
	s.update(nil)
	select {
	case <-changed:
	default:
		t.Fatal("emptying the set was not announced")
	}
	if got, _ := s.Nodes(); got != nil {
		t.Fatalf("nodes = %v, want empty", got)
	}
}

func TestStatic(t *testing.T) {
	s := NewStatic([]Node{{"n2", "127.0.0.1:2"}, {"n1", "127.0.0.1:1"}})
	got, _ := s.Nodes()
	want := []Node{{"n1", "127.0.0.1:1"}, {"n2", "127.0.0.1:2"}}
	if !slices.Equal(got, want) {
		t.Fatalf("nodes = %v, want %v", got, want)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}
