package kernels

import (
	"context"
	"fmt"

	"github.com/paddock-dev/paddock/runner"
)

// Completion, inspection and the completeness check ask the session's live
// interpreter about code without running it. Like file operations they
// never take the session's turn: they may come while a cell runs, and keep
// the session from expiring while they wait. A kernel without the ability
// is runner.ErrNotSupported.

// Complete offers completions at cursorPos (code points) in code, from the
// owner's session id.
func (m *Manager) Complete(ctx context.Context, owner, id, code string, cursorPos int) (runner.Completion, error) {
	var out runner.Completion
	err := m.introspect(ctx, owner, id, "completing in", func(in runner.Introspector) (err error) {
		out, err = in.Complete(ctx, code, cursorPos)
		return err
	})
	return out, err
}

// Inspect describes the object at cursorPos in code, from the owner's
// session id.
func (m *Manager) Inspect(ctx context.Context, owner, id, code string, cursorPos, detailLevel int) (runner.Inspection, error) {
	var out runner.Inspection
	err := m.introspect(ctx, owner, id, "inspecting in", func(in runner.Introspector) (err error) {
		out, err = in.Inspect(ctx, code, cursorPos, detailLevel)
		return err
	})
	return out, err
}

// IsComplete says whether code is ready to run in the owner's session id.
func (m *Manager) IsComplete(ctx context.Context, owner, id, code string) (runner.Completeness, error) {
	var out runner.Completeness
	err := m.introspect(ctx, owner, id, "checking code in", func(in runner.Introspector) (err error) {
		out, err = in.IsComplete(ctx, code)
		return err
	})
	return out, err
}

func (m *Manager) introspect(ctx context.Context, owner, id, op string, call func(runner.Introspector) error) error {
	s, l, err := m.pinAwake(ctx, owner, id)
	if err != nil {
		return err
	}
	defer m.unpin(s)
	in, ok := l.k.(runner.Introspector)
	if !ok {
		return fmt.Errorf("%s session %s: %w", op, s.id, runner.ErrNotSupported)
	}
	return m.kernelErr(s, op, call(in))
}
