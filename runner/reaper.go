package runner

import "context"

// Reaper is the optional ability of a Runtime to find the sandboxes that
// outlived their owner and destroy them: those a server that died left
// in the runtime's state, and those whose start finished only after the
// server that asked gave up on it. Find it by type assertion. A runtime
// whose sandboxes cannot outlive the process needs none.
type Reaper interface {
	// Cleanup destroys every sandbox in the runtime's state, whoever made
	// it, and returns how many it destroyed. For a server's start and
	// end, when none of its own may be alive.
	Cleanup(ctx context.Context) (int, error)
	// ReapOthers destroys every sandbox whose label (Spec.Labels) is
	// not value, and returns how many it destroyed.
	ReapOthers(ctx context.Context, label, value string) (int, error)
}
