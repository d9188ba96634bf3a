package pool

import (
	"errors"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// Defaults for zero Config fields.
const (
	DefaultMaxRuns       = 16
	DefaultQueueTimeout  = 10 * time.Second
	DefaultMaxColdStarts = 4
	DefaultStartTimeout  = 30 * time.Second
)

// Template is one kind of sandbox the manager keeps warm.
type Template struct {
	// Name identifies the template in Acquire and Run.
	Name string
	// Spec is what the runtime starts. An empty Spec.Template is set to
	// Name.
	Spec runner.Spec
	// Size is the number of ready sandboxes to keep. Zero means every
	// acquire is a cold start.
	Size int
}

// Config is the manager's typed configuration. Zero fields take defaults.
type Config struct {
	Templates []Template
	// MaxRuns caps concurrent one-shot runs across all templates.
	MaxRuns int
	// QueueTimeout is how long a run may wait for a run slot before
	// ErrBusy.
	QueueTimeout time.Duration
	// MaxColdStarts caps concurrent cold starts on the request path.
	MaxColdStarts int
	// StartTimeout bounds one sandbox start.
	StartTimeout time.Duration
}

// withDefaults validates c and returns a copy with defaults filled in.
func (c Config) withDefaults() (Config, error) {
	if c.MaxRuns < 0 || c.MaxColdStarts < 0 || c.QueueTimeout < 0 || c.StartTimeout < 0 {
		return Config{}, errors.New("pool config: negative limit")
	}
	if c.MaxRuns == 0 {
		c.MaxRuns = DefaultMaxRuns
	}
	if c.QueueTimeout == 0 {
		c.QueueTimeout = DefaultQueueTimeout
	}
	if c.MaxColdStarts == 0 {
		c.MaxColdStarts = DefaultMaxColdStarts
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = DefaultStartTimeout
	}
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
		}
		seen[t.Name] = true
		if t.Spec.Template == "" {
			t.Spec.Template = t.Name
		}
		tmpls[i] = t
	}
	c.Templates = tmpls
	return c, nil
}
