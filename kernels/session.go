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
	StateLost = "lost" // the kernel died and no fresh one could be had; only Get and Delete work
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
	// Restarts counts the kernels that died (or were killed) under this
	// session and were replaced by a fresh one (see replace.go).
	Restarts int
	// ImageBytes is the size of a hibernated session's image on disk.
	ImageBytes int64
	// LostReason says, in words fit for the client, why a lost session's
	// kernel died and why no fresh one could be had; empty unless lost.
	LostReason string
	// Network is the session's egress policy as the core gave it
	// (CreateOptions.Network); empty without a network.
	Network string
}

// OpenTiming splits a session's creation into its phases.
type OpenTiming struct {
	Acquire time.Duration // getting a sandbox from the pool, Start included
	Start   time.Duration // restoring or starting one on the request path; zero on a pool hit
	Kernel  time.Duration // turning its interpreter into a kernel
}

// session is one kernel at a time on one leased sandbox at a time: when
// its kernel dies the session goes on with a fresh one (replace.go).
// Fields below mu's comment are guarded by Manager.mu.
type session struct {
	id, owner, template string
	created             time.Time
	ttl                 time.Duration
	// env and limits are the session's own, for every kernel it opens.
	env    map[string]string
	limits runner.Limits
	// network is the egress policy of every sandbox the session leases
	// (network.go); empty: none.
	network string

	// ended is closed once the session is closed or lost: turn waiters
	// give up and the loss watcher stops.
	ended   chan struct{}
	endOnce sync.Once

	// Guarded by Manager.mu.
	cur      *lease // the kernel and its sandbox; replaced only by the turn's holder
	lastUsed time.Time
	count    int             // execution count of the last cell
	active   int             // calls in progress or waiting; never expire while > 0
	held     bool            // the turn (one Execute, Restart or replacement) is taken
	waiters  []chan struct{} // FIFO; a waiter's channel is closed to hand it the turn
	queued   int             // waiters that count against MaxQueue
	commands int             // commands running (Command)
	// replacing is set while the turn's holder replaces a dead kernel:
	// executions then wait for it rather than finding the session busy.
	replacing bool
	restarts  int
	// diedIdle is why the kernel died between cells and was replaced,
	// for the next cell's answer to say; idleDeaths counts such deaths
	// in a row, with no cell run in between (see maxIdleDeaths).
	diedIdle   string
	idleDeaths int
	lost       bool
	lostWhy    string // why, for the client (Info.LostReason)
	// sleepAtExpiry: the idle TTL hibernates the session rather than
	// ends it (CreateOptions.HibernateAtExpiry); cleared if that fails.
	sleepAtExpiry bool
	// note is a door's bookkeeping about the session (note.go).
	noteDoor string
	note     []byte
	// Hibernation (hibernate.go): asleep while the session's state is in
	// the image at image (imageBytes on disk, saved at sleptAt) and its
	// sandbox is gone; sleeps numbers its images.
	asleep     bool
	pausing    bool // being hibernated; its turn is held
	image      string
	imageBytes int64
	sleptAt    time.Time
	sleeps     int
	// checkpoints are the session's named saved points (checkpoint.go).
	checkpoints map[string]*checkpoint
	closed      bool // removed from the table
	kept        bool // closed by Close with its record kept for the next server
}

// lease is one kernel on one sandbox leased from the pool: a session has
// one at a time.
type lease struct {
	sb          runner.Sandbox
	k           runner.Kernel
	start       pool.StartKind
	opening     OpenTiming
	releaseOnce sync.Once
	net         NetworkHandle // the sandbox's egress (network.go); nil without a network
}

func (s *session) markEnded() { s.endOnce.Do(func() { close(s.ended) }) }

// expiresAtLocked is when s expires if left alone.
// A session that hibernates at its expiry and sleeps waits for its
// lifetime's end.
func (m *Manager) expiresAtLocked(s *session) time.Time {
	idle, life := s.lastUsed.Add(s.ttl), s.created.Add(m.cfg.MaxLifetime)
	if s.sleepAtExpiry && s.asleep || life.Before(idle) {
		return life
	}
	return idle
}

// expiredLocked reports whether s is past its expiry and nothing uses it.
// One that hibernates at its expiry is due to sleep (sleepsAtExpiryLocked)
// there, not to end, until its lifetime's end.
func (m *Manager) expiredLocked(s *session, now time.Time) bool {
	if s.sleepAtExpiry && !s.asleep && !s.lost && now.Before(s.created.Add(m.cfg.MaxLifetime)) {
		return false
	}
	return s.active == 0 && !now.Before(m.expiresAtLocked(s))
}

// sleepsAtExpiryLocked reports whether s is awake past its idle TTL and
// hibernates then, rather than ends.
func (m *Manager) sleepsAtExpiryLocked(s *session, now time.Time) bool {
	return s.sleepAtExpiry && !s.asleep && !s.lost && !now.Before(s.lastUsed.Add(s.ttl))
}

func (m *Manager) infoLocked(s *session) Info {
	state := StateIdle
	sandbox := s.cur.sb.ID()
	switch {
	case s.lost:
		state = StateLost
	case s.held:
		state = StateBusy
	case s.asleep:
		state, sandbox = StateHibernated, ""
	}
	return Info{
		ID:             s.id,
		Owner:          s.owner,
		Template:       s.template,
		Network:        s.network,
		SandboxID:      sandbox,
		ImageBytes:     s.imageBytes,
		CreatedAt:      s.created,
		LastUsed:       s.lastUsed,
		ExpiresAt:      m.expiresAtLocked(s),
		TTL:            s.ttl,
		ExecutionCount: s.count,
		State:          state,
		Queued:         s.queued,
		Commands:       s.commands,
		Start:          s.cur.start,
		Opening:        s.cur.opening,
		Restarts:       s.restarts,
		LostReason:     s.lostWhy,
	}
}
