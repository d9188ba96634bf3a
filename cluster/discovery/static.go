package discovery

import "context"

// Static is a fixed node set.
type Static struct{ set }

var _ Source = (*Static)(nil)

// NewStatic returns a source that always yields nodes.
func NewStatic(nodes []Node) *Static {
	s := &Static{}
	s.update(nodes)
	return s
}

// Run waits for ctx to end: the set never changes.
func (s *Static) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}
