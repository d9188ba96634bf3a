package kernels

import (
	"errors"
	"fmt"

	"github.com/paddock-dev/paddock/runner"
)

// Networked sessions. A session created with a network (CreateOptions.
// Network) gets, for every sandbox it leases (its first, each one that
// replaces a dead kernel, each one woken from an image, a fork child's),
// a sandbox with a network interface and the server's egress for it:
// NetworkFunc serves that sandbox's proxy under the session's policy and
// returns what stops it. The policy is opaque here (the core's egress
// policy in its JSON form); the catalog keeps it, so a session woken on
// the next server gets the same network, as that server allows it.

// NetworkFunc serves sb's egress under policy until the returned stop is
// called; the sandbox's destruction closes what it serves on.
type NetworkFunc func(sb runner.Sandbox, policy string) (stop func(), err error)

// ErrNoNetwork: the session asks for a network and this manager was given
// no NetworkFunc.
var ErrNoNetwork = errors.New("this server gives sessions no network")

// SetNetwork gives the manager the function that serves networked
// sessions' egress. Call it before the first networked session opens or
// wakes.
func (m *Manager) SetNetwork(fn NetworkFunc) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.network = fn
}

// serveNetwork starts l's egress under policy; nothing for a session
// without a network. On failure l still holds its sandbox.
func (m *Manager) serveNetwork(l *lease, policy string) error {
	if policy == "" {
		return nil
	}
	m.mu.Lock()
	fn := m.network
	m.mu.Unlock()
	if fn == nil {
		return ErrNoNetwork
	}
	stop, err := fn(l.sb, policy)
	if err != nil {
		return fmt.Errorf("serving the network of sandbox %s: %w", l.sb.ID(), err)
	}
	l.unnet = stop
	return nil
}

// dropNet stops l's egress, once.
func (l *lease) dropNet() {
	if l.unnet != nil {
		l.unnet()
		l.unnet = nil
	}
}
