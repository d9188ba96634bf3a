package kernels

import (
	"errors"
	"time"
)

// Defaults for zero Config fields.
const (
	DefaultMaxSessions    = 64
	DefaultTTL            = 15 * time.Minute
	DefaultMaxTTL         = 24 * time.Hour
	DefaultMaxLifetime    = 12 * time.Hour
	DefaultReapInterval   = 10 * time.Second
	DefaultExecuteTimeout = 30 * time.Second
	DefaultMaxTimeout     = 10 * time.Minute
	DefaultMaxOutput      = 1 << 20
	DefaultMaxQueue       = 8
	DefaultMaxCommands    = 4
)

// Config is the manager's typed configuration. Zero fields take defaults.
type Config struct {
	// MaxSessions caps open sessions (lost ones included, until deleted
	// or expired). Create fails with ErrTooManySessions beyond it; nothing
	// is evicted.
	MaxSessions int
	// MaxLive caps the sessions awake at once, each on its sandbox; one
	// more hibernates the least recently used idle one first (room.go).
	// Zero means MaxSessions alone bounds them.
	MaxLive int
	// DefaultTTL is a session's idle TTL when Create gives none; every use
	// refreshes it. MaxTTL is the largest TTL Create may ask for: at most
	// MaxLifetime (its default), as no session outlives that.
	DefaultTTL time.Duration
	MaxTTL     time.Duration
	// MaxLifetime bounds a session's age, however busy it is.
	MaxLifetime time.Duration
	// ReapInterval is how often the reaper looks for expired sessions.
	ReapInterval time.Duration
	// DefaultTimeout is a cell's wall-time limit when Execute gives none;
	// MaxTimeout is the largest it may ask for.
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	// MaxOutput caps the stream bytes one cell may produce.
	MaxOutput int64
	// MaxQueue caps the executions waiting for their turn in one session.
	MaxQueue int
	// MaxCommands caps the commands running at once in one session
	// (Command); beyond it Command fails with ErrTooManyCommands.
	MaxCommands int
	// HibernateDir is where hibernated sessions' images are kept (made
	// 0700); empty means sessions never hibernate.
	HibernateDir string
	// HibernateAfter is how long a session may be idle before it is
	// hibernated; zero means only when paused. The reaper looks every
	// ReapInterval.
	HibernateAfter time.Duration
	// HibernateBudget caps the disk hibernated sessions' images take, in
	// bytes; past it the oldest are lost. Zero means no cap.
	HibernateBudget int64
	// Catalog, with HibernateDir, keeps a record of every session, so
	// that Close can hibernate them all and the next manager on the same
	// HibernateDir takes them over (catalog.go). Nil means sessions end
	// with the manager. FileCatalog is one; cmd wires the history
	// store's when there is one.
	Catalog Catalog
	// IDPrefix, lower-case hex, begins every new session's id (the rest
	// stays random, the id 32 hex digits): a node of a gateway tier
	// names itself in its ids this way (ids.go). Empty: all random.
	IDPrefix string
	// Now is the clock; nil means time.Now. Tests set a fake one.
	Now func() time.Time
	// OnEnd, when set, is told of every session that ends without its
	// owner's Delete: why is "expired", "server closing" or, for a
	// session whose kernel died with no fresh one to be had, "lost: "
	// and the reason. It is called on the manager's goroutines and must
	// not block.
	OnEnd func(owner, id, template, why string)
}

// withDefaults validates c and returns a copy with defaults filled in.
func (c Config) withDefaults() (Config, error) {
	if c.MaxSessions < 0 || c.MaxLive < 0 || c.DefaultTTL < 0 || c.MaxTTL < 0 || c.MaxLifetime < 0 || c.ReapInterval < 0 ||
		c.DefaultTimeout < 0 || c.MaxTimeout < 0 || c.MaxOutput < 0 || c.MaxQueue < 0 || c.MaxCommands < 0 ||
		c.HibernateAfter < 0 || c.HibernateBudget < 0 {
		return Config{}, errors.New("kernels config: negative limit")
	}
	set := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	set(&c.MaxLifetime, DefaultMaxLifetime)
	set(&c.MaxTTL, min(DefaultMaxTTL, c.MaxLifetime))
	set(&c.DefaultTTL, min(DefaultTTL, c.MaxTTL))
	set(&c.ReapInterval, DefaultReapInterval)
	set(&c.MaxTimeout, DefaultMaxTimeout)
	set(&c.DefaultTimeout, min(DefaultExecuteTimeout, c.MaxTimeout))
	if c.MaxOutput == 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.MaxQueue == 0 {
		c.MaxQueue = DefaultMaxQueue
	}
	if c.MaxCommands == 0 {
		c.MaxCommands = DefaultMaxCommands
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	switch {
	case c.MaxTTL > c.MaxLifetime:
		return Config{}, errors.New("kernels config: MaxTTL exceeds MaxLifetime")
	case c.DefaultTTL > c.MaxTTL:
		return Config{}, errors.New("kernels config: DefaultTTL exceeds MaxTTL")
	case c.DefaultTimeout > c.MaxTimeout:
		return Config{}, errors.New("kernels config: DefaultTimeout exceeds MaxTimeout")
	}
	return c, nil
}
