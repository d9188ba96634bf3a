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

// NetworkFunc serves sb's egress under policy until the returned
// handle's Stop; the sandbox's destruction closes what it serves on.
type NetworkFunc func(sb runner.Sandbox, policy string) (NetworkHandle, error)

// NetworkHandle is one sandbox's egress as a NetworkFunc serves it.
type NetworkHandle interface {
	// Stop ends it.
	Stop()
	// SetPolicy makes policy decide its later connections.
	SetPolicy(policy string) error
}

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
	h, err := fn(l.sb, policy)
	if err != nil {
		return fmt.Errorf("serving the network of sandbox %s: %w", l.sb.ID(), err)
	}
	l.net = h
	return nil
}

// dropNet stops l's egress; its callers run it once (releaseOnce).
func (l *lease) dropNet() {
	if l.net != nil {
		l.net.Stop()
	}
}

// ErrNetworkFixed: a session created without a network cannot get one;
// its sandboxes have no interface.
var ErrNetworkFixed = errors.New("the session was created without a network, and a running sandbox cannot get one")

// Retarget gives owner's session id the egress policy policy from now on:
// its sandbox's proxy decides every later connection by it, and every
// sandbox it leases later gets it. Only a networked session can change its
// policy (ErrNetworkFixed).
func (m *Manager) Retarget(owner, id, policy string) (Info, error) {
	if policy == "" {
		return Info{}, invalidf("an empty policy: a networked session keeps a network (give it a policy that allows nothing)")
	}
	m.mu.Lock()
	s, err := m.lookupLocked(owner, id)
	switch {
	case err != nil:
		m.mu.Unlock()
		return Info{}, err
	case s.lost:
		m.mu.Unlock()
		return Info{}, lostErr(s)
	case s.network == "":
		m.mu.Unlock()
		return Info{}, ErrNetworkFixed
	}
	s.network = policy
	var live NetworkHandle
	if !s.asleep && s.cur != nil {
		live = s.cur.net
	}
	info := m.infoLocked(s)
	m.mu.Unlock()
	if live != nil {
		if err := live.SetPolicy(policy); err != nil {
			return Info{}, fmt.Errorf("changing the network of session %s: %w", id, err)
		}
	}
	m.persist(s)
	return info, nil
}
