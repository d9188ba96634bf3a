package pool

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// Defaults for zero Config fields.
const (
	DefaultMaxRuns       = 16
	DefaultQueueDeadline = 5 * time.Second
	DefaultStartTimeout  = 30 * time.Second
	DefaultMaxRefills    = 1
)

// DefaultStartBudget is the start slots a zero Config.StartBudget gets:
// two per CPU. A restore or a boot also waits (on the disk, on its
// processes starting, on the agent's first answer), so one per CPU left
// the CPUs part idle: measured on 2 cores, 16 clients, 4 slots served
// 2.4x the runs of 2.
func DefaultStartBudget() int { return 2 * max(1, runtime.NumCPU()) }

// Template is one kind of sandbox the manager keeps warm.
type Template struct {
	// Name identifies the template in Acquire and Run.
	Name string
	// Spec is what the runtime starts. An empty Spec.Template is set to
	// Name.
	Spec runner.Spec
	// Size is the floor: the ready sandboxes kept however idle the
	// template is. Zero means an idle template keeps none.
	Size int
	// Max is the ceiling the pool may grow to under demand. Zero (or less
	// than Size) means Size: a fixed pool.
	Max int
	// Snapshot makes the pool start sandboxes by restoring a snapshot of a
	// freshly warmed-up one, when the runtime can (runner.Snapshotter).
	// Leave it off for a spec whose clones could not be told apart.
	Snapshot bool
	// Kernels is how many sandboxes with their kernel already open are
	// kept for sessions besides the ready ones (kernels.go). Zero keeps
	// none: every session opens its kernel when it is created.
	Kernels int
	// Deferred means Spec.Rootfs is not there yet: the template keeps
	// nothing and refuses requests until Manager.Provide gives it
	// (deferred.go).
	Deferred bool
}

// Config is the manager's typed configuration. Zero fields take defaults.
type Config struct {
	Templates []Template
	// MaxRuns caps concurrent one-shot runs across all templates.
	MaxRuns int
	// QueueDeadline is how long a request may wait in the admission queue
	// (for a run slot and a sandbox or a start slot) before ErrSaturated.
	QueueDeadline time.Duration
	// StartBudget caps the sandbox starts (restores and cold starts, for
	// the pool and on the request path) running at once.
	StartBudget int
	// StartTimeout bounds one sandbox start.
	StartTimeout time.Duration
	// MaxSandboxes caps the sandboxes alive at once (ready, starting, in
	// use) above which pools stop refilling. Zero means no cap.
	MaxSandboxes int
	// MemoryBudget caps, in bytes, the memory limits of the sandboxes alive
	// at once above which pools stop refilling. Every template's floor is
	// reserved within it. Zero means no cap.
	MemoryBudget int64
	// MaxRefills caps concurrent pool refills (starts or restores off the
	// request path), within StartBudget.
	MaxRefills int
	// BusyStartBudget caps the starts running at once, within StartBudget,
	// while a session's cell runs and for BusyHold after the last one ends
	// (see CellBegin). Zero means no cap.
	BusyStartBudget int
	// BusyHold is how long the cap outlasts the last cell, so that cells
	// sent back to back keep it between them.
	BusyHold time.Duration
	// BusyCellMax is how long a running cell keeps the cap; zero means
	// for as long as it runs.
	BusyCellMax time.Duration
}

// withDefaults validates c and returns a copy with defaults filled in.
func (c Config) withDefaults() (Config, error) {
	if c.MaxRuns < 0 || c.StartBudget < 0 || c.QueueDeadline < 0 || c.StartTimeout < 0 ||
		c.MaxSandboxes < 0 || c.MemoryBudget < 0 || c.MaxRefills < 0 || c.BusyStartBudget < 0 || c.BusyHold < 0 || c.BusyCellMax < 0 {
		return Config{}, errors.New("pool config: negative limit")
	}
	if c.MaxRuns == 0 {
		c.MaxRuns = DefaultMaxRuns
	}
	if c.QueueDeadline == 0 {
		c.QueueDeadline = DefaultQueueDeadline
	}
	if c.StartBudget == 0 {
		c.StartBudget = DefaultStartBudget()
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	if c.MaxRefills == 0 {
		c.MaxRefills = DefaultMaxRefills
	}
	var floors, floorMemory int64
	seen := make(map[string]bool, len(c.Templates))
	tmpls := make([]Template, len(c.Templates))
	for i, t := range c.Templates {
		switch {
		case t.Name == "":
			return Config{}, fmt.Errorf("pool config: template %d has no name", i)
		case seen[t.Name]:
			return Config{}, fmt.Errorf("pool config: duplicate template %q", t.Name)
		case t.Size < 0:
			return Config{}, fmt.Errorf("pool config: template %q has negative size", t.Name)
		case t.Kernels < 0:
			return Config{}, fmt.Errorf("pool config: template %q keeps a negative number of kernels", t.Name)
		}
		seen[t.Name] = true
		if t.Spec.Template == "" {
			t.Spec.Template = t.Name
		}
		t.Max = max(t.Max, t.Size)
		floors += int64(t.Size)
		floorMemory += int64(t.Size) * t.Spec.Limits.MemoryBytes
		tmpls[i] = t
	}
	if c.MaxSandboxes > 0 && floors > int64(c.MaxSandboxes) {
		return Config{}, fmt.Errorf("pool config: the pool floors add up to %d sandboxes, over the cap of %d", floors, c.MaxSandboxes)
	}
	if c.MemoryBudget > 0 && floorMemory > c.MemoryBudget {
		return Config{}, fmt.Errorf("pool config: the pool floors need %d MiB, over the memory budget of %d MiB", floorMemory>>20, c.MemoryBudget>>20)
	}
	c.Templates = tmpls
	return c, nil
}
