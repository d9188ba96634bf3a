package discovery

import (
	"cmp"
	"context"
	"slices"
	"sync"
)

// Node is one Paddock node: a name unique in the tier and the host:port
// its API listens on.
type Node struct {
	Name string
	Addr string
}

// Source yields the current node set.
type Source interface {
	// Run keeps the set current until ctx ends; it returns an error only
	// when it cannot follow its source at all.
	Run(ctx context.Context) error
	// Nodes returns the current set, sorted by name, and a channel that
	// is closed at the set's next change. The set is empty until the
	// source has first been read.
	Nodes() ([]Node, <-chan struct{})
}

// set is the node set a source keeps, with its change broadcast: each
// change closes the channel handed out with the set before it.
type set struct {
	mu      sync.Mutex
	nodes   []Node
	changed chan struct{}
}

func (s *set) Nodes() ([]Node, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return slices.Clone(s.nodes), s.changed
}

// update sorts nodes, drops repeated names (keeping the lowest address,
// so the choice does not depend on the source's order) and, when the
// result differs from the current set, publishes it.
func (s *set) update(nodes []Node) {
	nodes = normalize(nodes)
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Equal(nodes, s.nodes) {
		return
	}
	s.nodes = nodes
	if s.changed != nil {
		close(s.changed)
	}
	s.changed = make(chan struct{})
}

func normalize(nodes []Node) []Node {
	out := slices.Clone(nodes)
	slices.SortFunc(out, func(a, b Node) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Addr, b.Addr))
	})
	out = slices.CompactFunc(out, func(a, b Node) bool { return a.Name == b.Name })
	if len(out) == 0 {
		return nil
	}
	return out
}
