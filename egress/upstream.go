package egress

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

var (
	errByteLimit   = errors.New("egress byte limit reached")
	errIdleTimeout = errors.New("egress connection idle")
)

// upstream is a connection to a checked address. Every byte through it
// is counted against the proxy's budgets and paid for to its rate
// buckets; a watchdog closes it after IdleTimeout with no byte either
// way. Close gives back the proxy's slot.
type upstream struct {
	net.Conn
	p     *Proxy
	idle  *watchdog
	cause atomic.Pointer[string] // the first limit that ended it
	once  sync.Once

	mu     sync.Mutex
	closed bool
	peers  []io.Closer // closed with it: a tunnel's client
}

// closeWith makes Close close c too (at once if already closed).
func (u *upstream) closeWith(c io.Closer) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		_ = c.Close()
		return
	}
	u.peers = append(u.peers, c)
}

func (p *Proxy) newUpstream(c net.Conn) *upstream {
	u := &upstream{Conn: c, p: p}
	u.idle = newWatchdog(p.limits.IdleTimeout, func() {
		u.setCause(ReasonIdleTimeout)
		_ = u.Close()
	})
	p.track(c)
	return u
}

func (u *upstream) setCause(reason string) { u.cause.CompareAndSwap(nil, &reason) }

// limit is the reason a limit ended the connection, or "".
func (u *upstream) limit() string {
	if r := u.cause.Load(); r != nil {
		return *r
	}
	return ""
}

// chunk is the most a read or write moves at once: one burst of the
// rate bucket, so that a slow rate delays bytes a burst at a time rather
// than holding a whole buffer.
func (u *upstream) chunk(n int) int {
	return int(min(int64(n), max(1, u.p.limits.BytesPerSecond)))
}

// Read reads from the upstream, keeping only what MaxBytesIn leaves.
func (u *upstream) Read(b []byte) (int, error) {
	n, err := u.Conn.Read(b[:u.chunk(len(b))])
	if n == 0 {
		return 0, u.wrap(err)
	}
	u.idle.touch()
	got := u.p.counters.spend(dirIn, n)
	u.p.metrics.bytes.WithLabelValues("in").Add(float64(got))
	if werr := u.p.rate[dirIn].take(u.p.ctx, got); werr != nil {
		return got, werr
	}
	if got < n {
		u.setCause(ReasonByteLimit)
		return got, errByteLimit
	}
	return n, err
}

// Write sends b upstream, a burst at a time, as far as MaxBytesOut allows.
func (u *upstream) Write(b []byte) (int, error) {
	written := 0
	for written < len(b) {
		n, err := u.writeChunk(b[written : written+u.chunk(len(b)-written)])
		written += n
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

func (u *upstream) writeChunk(b []byte) (int, error) {
	got := u.p.counters.spend(dirOut, len(b))
	u.p.metrics.bytes.WithLabelValues("out").Add(float64(got))
	if err := u.p.rate[dirOut].take(u.p.ctx, got); err != nil {
		return 0, err
	}
	n, err := u.Conn.Write(b[:got])
	if n > 0 {
		u.idle.touch()
	}
	if err != nil {
		return n, u.wrap(err)
	}
	if got < len(b) {
		u.setCause(ReasonByteLimit)
		return n, errByteLimit
	}
	return n, nil
}

// wrap turns the error of a connection a limit closed into that limit's.
func (u *upstream) wrap(err error) error {
	if err != nil && u.limit() == ReasonIdleTimeout {
		return errIdleTimeout
	}
	return err
}

// CloseWrite half-closes the upstream when it can.
func (u *upstream) CloseWrite() error {
	if cw, ok := u.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close closes the connection and gives back its slot, once.
func (u *upstream) Close() error {
	err := u.Conn.Close()
	u.once.Do(func() {
		u.mu.Lock()
		u.closed = true
		peers := u.peers
		u.mu.Unlock()
		for _, c := range peers {
			_ = c.Close()
		}
		u.idle.stop()
		u.p.untrack(u.Conn)
		<-u.p.slots
	})
	return err
}

// watchdog runs fire once when touch has not been called for d.
type watchdog struct {
	d time.Duration
	t *time.Timer
}

func newWatchdog(d time.Duration, fire func()) *watchdog {
	return &watchdog{d: d, t: time.AfterFunc(d, fire)}
}

func (w *watchdog) touch() { w.t.Reset(w.d) }
func (w *watchdog) stop()  { w.t.Stop() }
