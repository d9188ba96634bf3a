package discovery

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"
)

// Resolver looks up SRV records; *net.Resolver is one.
type Resolver interface {
	LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error)
}

// SRVConfig names the records an SRV source follows: _Service._Proto.Name
// (Service and Proto empty: Name is the whole record name).
type SRVConfig struct {
	Service  string
	Proto    string
	Name     string
	Interval time.Duration // how often the records are resolved again
}

// SRV is a node set from DNS SRV records, resolved again every Interval.
// Each target is a node: its name is the target's first label (the pod's
// host name, for a headless Service's records), its address the target
// and the record's port.
type SRV struct {
	set
	r   Resolver
	cfg SRVConfig
	log *slog.Logger
}

var _ Source = (*SRV)(nil)

// NewSRV returns a source following cfg's records through r.
func NewSRV(r Resolver, cfg SRVConfig, log *slog.Logger) *SRV {
	return &SRV{r: r, cfg: cfg, log: log}
}

// Run resolves the records now and then every Interval until ctx ends. A
// failed lookup keeps the last set, except a name that does not exist,
// which empties it.
func (s *SRV) Run(ctx context.Context) error {
	if s.cfg.Interval <= 0 {
		return errors.New("discovery: SRV interval must be positive")
	}
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		s.resolve(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (s *SRV) resolve(ctx context.Context) {
	_, records, err := s.r.LookupSRV(ctx, s.cfg.Service, s.cfg.Proto, s.cfg.Name)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			s.update(nil)
			return
		}
		if ctx.Err() == nil {
			s.log.Warn("resolving the node SRV records; keeping the last set", "name", s.cfg.Name, "err", err)
		}
		return
	}
	nodes := make([]Node, 0, len(records))
	for _, r := range records {
		host := strings.TrimSuffix(r.Target, ".")
		if host == "" {
			continue
		}
		name, _, _ := strings.Cut(host, ".")
		nodes = append(nodes, Node{Name: name, Addr: net.JoinHostPort(host, strconv.Itoa(int(r.Port)))})
	}
	s.update(nodes)
}
