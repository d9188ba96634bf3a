package egress

import (
	"sync"
	"sync/atomic"
)

// Stats is what one proxy has carried and refused, for a run's answer.
type Stats struct {
	Connections int64            `json:"connections"`
	BytesOut    int64            `json:"bytes_out"`
	BytesIn     int64            `json:"bytes_in"`
	Refused     map[string]int64 `json:"refused,omitempty"`
}

// direction of a byte count: out to the upstream, in from it.
type direction int

const (
	dirOut direction = iota
	dirIn
)

func (d direction) String() string {
	if d == dirOut {
		return "out"
	}
	return "in"
}

// counters are a proxy's running totals; bytes double as the budgets of
// Limits.MaxBytesOut and MaxBytesIn.
type counters struct {
	max   [2]int64
	bytes [2]atomic.Int64
	conns atomic.Int64

	mu      sync.Mutex
	refused map[string]int64
}

// spend takes up to n bytes of d's budget and returns how many it got.
func (c *counters) spend(d direction, n int) int {
	for {
		used := c.bytes[d].Load()
		got := min(int64(n), c.max[d]-used)
		if got <= 0 {
			return 0
		}
		if c.bytes[d].CompareAndSwap(used, used+got) {
			return int(got)
		}
	}
}

// exhausted reports whether either budget is used up.
func (c *counters) exhausted() bool {
	return c.bytes[dirOut].Load() >= c.max[dirOut] || c.bytes[dirIn].Load() >= c.max[dirIn]
}

func (c *counters) refuse(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refused == nil {
		c.refused = map[string]int64{}
	}
	c.refused[reason]++
}

func (c *counters) stats() Stats {
	s := Stats{Connections: c.conns.Load(), BytesOut: c.bytes[dirOut].Load(), BytesIn: c.bytes[dirIn].Load()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.refused) > 0 {
		s.Refused = make(map[string]int64, len(c.refused))
		for k, v := range c.refused {
			s.Refused[k] = v
		}
	}
	return s
}
