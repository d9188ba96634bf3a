package egress

import (
	"fmt"
	"time"
)

// Limits bound one proxy, that is one sandbox. A zero field takes its
// default; none is unlimited.
type Limits struct {
	// MaxConns bounds the upstream connections open at once (tunnels
	// and plain-HTTP requests in flight); one more is refused conn_limit.
	MaxConns int
	// MaxBytesOut and MaxBytesIn bound the bytes sent upstream and
	// received from upstream over the proxy's life; the connection that
	// crosses one is cut there (byte_limit) and later ones are refused.
	MaxBytesOut, MaxBytesIn int64
	// BytesPerSecond is the token bucket's rate, each way, shared by the
	// proxy's connections; its burst is one second's worth.
	BytesPerSecond int64
	// ConnectTimeout bounds resolving a name and connecting to it.
	ConnectTimeout time.Duration
	// IdleTimeout cuts a connection over which nothing has crossed, in
	// either direction, for that long.
	IdleTimeout time.Duration
}

// Default limits.
const (
	DefaultMaxConns       = 32
	DefaultMaxBytes       = 256 << 20
	DefaultBytesPerSecond = 4 << 20
	DefaultConnectTimeout = 10 * time.Second
	DefaultIdleTimeout    = 60 * time.Second
)

// withDefaults checks l and fills its zero fields.
func (l Limits) withDefaults() (Limits, error) {
	if l.MaxConns < 0 || l.MaxBytesOut < 0 || l.MaxBytesIn < 0 || l.BytesPerSecond < 0 || l.ConnectTimeout < 0 || l.IdleTimeout < 0 {
		return Limits{}, fmt.Errorf("%w: negative limit in %+v", ErrBadConfig, l)
	}
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	if l.MaxConns == 0 {
		l.MaxConns = DefaultMaxConns
	}
	def(&l.MaxBytesOut, DefaultMaxBytes)
	def(&l.MaxBytesIn, DefaultMaxBytes)
	def(&l.BytesPerSecond, DefaultBytesPerSecond)
	if l.ConnectTimeout == 0 {
		l.ConnectTimeout = DefaultConnectTimeout
	}
	if l.IdleTimeout == 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	return l, nil
}
