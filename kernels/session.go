package kernels

import (
	"sync"
	"time"

	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
)

// Session states as Info reports them.
const (
	StateIdle = "idle" // no execution runs
	StateBusy = "busy" // an execution (or a restart) runs
	StateLost = "lost" // the kernel died; only Get and Delete work
)

// Info describes a session.
type Info struct {
	ID        string
	Owner     string
	Template  string
	SandboxID string
	CreatedAt time.Time
	LastUsed  time.Time
	// ExpiresAt is when the session expires unless it is used before:
	// LastUsed plus its TTL, capped by CreatedAt plus MaxLifetime.
	ExpiresAt      time.Time
	TTL            time.Duration
	ExecutionCount int
	State          string
	// Queued is the number of executions waiting for their turn.
	Queued int
	// Commands is the number of commands running beside the kernel.
	Commands int
	// Start is how the session's sandbox was made; Opening how long the
	// session took to open, by phase.
	Start   pool.StartKind
	Opening OpenTiming
}

// OpenTiming splits a session's creation into its phases.
type OpenTiming struct {
	Acquire time.Duration // getting a sandbox from the pool, Start included
	Start   time.Duration // restoring or starting one on the request path; zero on a pool hit
	Kernel  time.Duration // turning its interpreter into a kernel
}

// session is one kernel on one leased sandbox. Fields below mu's comment
// are guarded by Manager.mu.
type session struct {
	id, owner, template string
	sb                  runner.Sandbox
	k                   runner.Kernel
	created             time.Time
	start               pool.StartKind
	opening             OpenTiming
	ttl                 time.Duration

	// ended is closed once the session is closed or lost: turn waiters
	// give up and the loss watcher stops.
	ended       chan struct{}
	endOnce     sync.Once
	releaseOnce sync.Once

	// Guarded by Manager.mu.
	lastUsed time.Time
	count    int             // execution count of the last cell
	active   int             // calls in progress or waiting; never expire while > 0
	held     bool            // the turn (one Execute or Restart) is taken
	waiters  []chan struct{} // FIFO; a waiter's channel is closed to hand it the turn
	queued   int             // waiters that count against MaxQueue
	commands int             // commands running (Command)
	lost     bool
	closed   bool // removed from the table
}

func (s *session) markEnded() { s.endOnce.Do(func() { close(s.ended) }) }

// expiresAtLocked is when s expires if left alone.
func (m *Manager) expiresAtLocked(s *session) time.Time {
	idle, life := s.lastUsed.Add(s.ttl), s.created.Add(m.cfg.MaxLifetime)
	if life.Before(idle) {
		return life
	}
	return idle
}

// expiredLocked reports whether s is past its expiry and nothing uses it.
func (m *Manager) expiredLocked(s *session, now time.Time) bool {
	return s.active == 0 && !now.Before(m.expiresAtLocked(s))
}

func (m *Manager) infoLocked(s *session) Info {
	state := StateIdle
	switch {
	case s.lost:
		state = StateLost
	case s.held:
		state = StateBusy
	}
	return Info{
		ID:             s.id,
		Owner:          s.owner,
		Template:       s.template,
		SandboxID:      s.sb.ID(),
		CreatedAt:      s.created,
		LastUsed:       s.lastUsed,
		ExpiresAt:      m.expiresAtLocked(s),
		TTL:            s.ttl,
		ExecutionCount: s.count,
		State:          state,
		Queued:         s.queued,
		Commands:       s.commands,
		Start:          s.start,
		Opening:        s.opening,
	}
}
