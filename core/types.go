package core

import (
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
)

// The core's own names for what the layers below report, so that a door
// imports the core alone: what the pool and the kernels call these may
// change without a door noticing.

// StartKind says how a sandbox was had: from the pool, restored from a
// snapshot, cold, or (a session) a pre-started kernel.
type StartKind = pool.StartKind

// Start kinds.
const (
	StartPool    = pool.StartPool
	StartRestore = pool.StartRestore
	StartCold    = pool.StartCold
	StartKernel  = pool.StartKernel
	StartWake    = pool.StartWake
)

// Outcome is how a one-shot run went: its result, start kind, sandbox
// and phase timings.
type Outcome = pool.Outcome

// Checkpoint is a session's named saved point.
type Checkpoint = kernels.Checkpoint

// Execution is how a cell went.
type Execution = kernels.Execution

// A template's root filesystem, as PoolInfo.Image reports it.
const (
	ImageReady    = pool.ImageReady
	ImageBuilding = pool.ImageBuilding
	ImageFailed   = pool.ImageFailed
)

// Session states, as Session.State reports them.
const (
	SessionIdle = kernels.StateIdle
	SessionBusy = kernels.StateBusy
	SessionLost = kernels.StateLost
	// SessionHibernated is a session saved to disk, its sandbox freed: the
	// next call that needs its kernel, or ResumeSession, wakes it.
	SessionHibernated = kernels.StateHibernated
)

// Wake says whether ResumeSession had to wake the session, and how long
// that took.
type Wake = kernels.Wake
