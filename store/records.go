package store

import "time"

// Kind says what a Run record is.
type Kind string

// Kinds of Run records.
const (
	KindRun  Kind = "run"  // a one-shot run
	KindCell Kind = "cell" // a cell executed in a session
)

// Run is one run or cell, as it ended.
type Run struct {
	// ID is the store's: zero in a record, set in a query's answer.
	ID   int64
	Kind Kind
	// At is when it ended.
	At       time.Time
	Tenant   string
	Door     string
	Template string
	Runtime  string
	// StartKind is how its sandbox was had: pool, restore, cold or (a
	// session's) kernel.
	StartKind string
	// Phase timings in milliseconds (see pool.Timing); a cell has queue,
	// exec and total only.
	QueueMS   int64
	AcquireMS int64
	StartMS   int64
	ExecMS    int64
	TotalMS   int64
	// Reason is why the program ended (ok, error, timeout, oom, …);
	// empty when Paddock failed to run it, and then Error is the core's
	// error code (saturated, too_many_runs, …).
	Reason   string
	Error    string
	ExitCode int
	// StdoutBytes and StderrBytes are the sizes of the output kept.
	StdoutBytes int64
	StderrBytes int64
	// CodeSHA256 is the hex SHA-256 of Code; Record fills it in.
	CodeSHA256 string
	// Code is the program or cell; Record keeps it only when
	// Config.RecordCode is on, and empties it otherwise.
	Code string
	// SessionID is the session a cell ran in; empty for a run.
	SessionID string
	// Network is the egress policy the run or cell had, in its String
	// form ("allow pypi.org:443 *.pythonhosted.org:443; deny …", or
	// "none" for a networked session narrowed to nothing); empty without
	// a network.
	Network string
}

// Session lifecycle events.
const (
	EventCreated   = "created"    // the session was opened
	EventRestarted = "restarted"  // its owner restarted the interpreter
	EventPaused    = "paused"     // its owner hibernated it
	EventResumed   = "resumed"    // its owner woke it from hibernation
	EventRewound   = "rewound"    // its owner brought it back to a checkpoint
	EventStateLost = "state_lost" // its kernel died; the session went on with a fresh one
	EventLost      = "lost"       // its kernel died and no fresh one could be had
	EventDeleted   = "deleted"    // its owner closed it
	EventExpired   = "expired"    // it was idle past its TTL or reached its lifetime
	EventClosed    = "closed"     // the server closed it as it shut down
)

// SessionEvent is one step in a session's life.
type SessionEvent struct {
	ID        int64
	At        time.Time
	Tenant    string
	Door      string // empty for an event no door caused (expired)
	SessionID string
	Template  string
	Event     string
	// Detail says more, in words: why the state was lost.
	Detail string
}

// AuthFailure is one failed authentication.
type AuthFailure struct {
	ID     int64
	At     time.Time
	Door   string
	Client string // the client address (an IPv4 address or IPv6 /64)
	Reason string // the core's error code (invalid_token, too_many_auth_failures, …)
}

// AdminAction is one use of the admin scope.
type AdminAction struct {
	ID     int64
	At     time.Time
	Tenant string // the admin token's subject
	Door   string
	Action string // what was done: list_all_sessions, …
	Target string // what it was done to, if one thing
	Detail string
}
