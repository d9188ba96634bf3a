package pool

import (
	"fmt"
)

// A deferred template (Template.Deferred) is configured before its root
// filesystem exists, so that a server can take requests for the others
// while it is being built: it keeps nothing and refuses requests with an
// *UnavailableError until Provide hands over its root filesystem, or for
// good once Fail says it will not come.

// Image states of a template (Stats.Image).
const (
	ImageReady    = "ready"    // its root filesystem is there
	ImageBuilding = "building" // deferred, not yet provided
	ImageFailed   = "failed"   // deferred, and it will not come (Fail)
)

// UnavailableError refuses a request for a deferred template that has no
// root filesystem yet. It is ErrUnavailable under errors.Is.
type UnavailableError struct {
	Template string
	// Failed is set when the root filesystem will not come (Fail); else it
	// is still being built.
	Failed bool
}

func (e *UnavailableError) Error() string {
	if e.Failed {
		return fmt.Sprintf("template %s: its root filesystem could not be built", e.Template)
	}
	return fmt.Sprintf("template %s: its root filesystem is still being built", e.Template)
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// available returns nil once tp takes requests. The flag is set after the
// spec is, so a caller that sees it may read tp.tmpl.Spec.
func (m *Manager) available(tp *tpool) error {
	if tp.provided.Load() {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if tp.provided.Load() {
		return nil
	}
	return &UnavailableError{Template: tp.tmpl.Name, Failed: tp.failed}
}

// Provide gives a deferred template its root filesystem (the directory and
// the identity snapshots are keyed by: runner.Spec's Rootfs and RootfsID);
// its pool starts filling if the manager has started. Providing a template
// twice, or one that is not deferred, is an error.
func (m *Manager) Provide(name, rootfs, rootfsID string) error {
	tp, ok := m.pools[name]
	if !ok {
		return fmt.Errorf("providing %q: %w", name, ErrUnknownTemplate)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.closed:
		return fmt.Errorf("providing %s: %w", name, ErrClosed)
	case !tp.tmpl.Deferred || tp.provided.Load():
		return fmt.Errorf("providing %s: it already has its root filesystem", name)
	}
	tp.tmpl.Spec.Rootfs, tp.tmpl.Spec.RootfsID = rootfs, rootfsID
	tp.failed = false
	tp.provided.Store(true)
	if m.started {
		m.startFillersLocked(tp)
	}
	m.log.Info("template root filesystem provided; its pool starts", keyTemplate, name)
	return nil
}

// Fail says a deferred template's root filesystem will not come: its
// requests are refused as failed rather than building.
func (m *Manager) Fail(name string) error {
	tp, ok := m.pools[name]
	if !ok {
		return fmt.Errorf("failing %q: %w", name, ErrUnknownTemplate)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !tp.tmpl.Deferred || tp.provided.Load() {
		return fmt.Errorf("failing %s: it already has its root filesystem", name)
	}
	tp.failed = true
	return nil
}

// imageLocked is tp's Stats.Image.
func (tp *tpool) imageLocked() string {
	switch {
	case tp.provided.Load():
		return ImageReady
	case tp.failed:
		return ImageFailed
	}
	return ImageBuilding
}
