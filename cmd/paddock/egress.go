package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/egress"
)

// egressConfig is the core's networked-run configuration from the flags:
// the allowance (--egress-allow, less --egress-deny) and names the
// operator pins (--egress-hosts), the secrets the proxy attaches
// (--egress-secrets); nil when nothing is allowed.
func egressConfig(cfg *config, reg prometheus.Registerer, logger *slog.Logger) (*core.Egress, error) {
	allow, deny := strings.Fields(cfg.EgressAllow), strings.Fields(cfg.EgressDeny)
	if len(allow) == 0 {
		if cfg.EgressSecrets != "" {
			return nil, errors.New("--egress-secrets: no host is allowed (--egress-allow is empty), so no secret could be sent")
		}
		return nil, nil
	}
	pol, err := egress.NewPolicy(allow, deny)
	if err != nil {
		return nil, fmt.Errorf("--egress-allow/--egress-deny: %w", err)
	}
	secrets, err := loadSecrets(cfg.EgressSecrets, pol)
	if err != nil {
		return nil, err
	}
	roots, err := loadRoots(cfg.EgressSecretsCA)
	if err != nil {
		return nil, err
	}
	hosts, err := parseHosts(cfg.EgressHosts)
	if err != nil {
		return nil, err
	}
	m, err := egress.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	var res egress.Resolver = net.DefaultResolver
	if len(hosts) > 0 {
		res = pinned{hosts: hosts, next: net.DefaultResolver}
	}
	logger.Info("runs may ask for a network", "allow", pol.String())
	lim := egress.Limits{MaxConns: cfg.EgressMaxConns, MaxBytesOut: cfg.EgressMaxMB << 20, MaxBytesIn: cfg.EgressMaxMB << 20,
		BytesPerSecond: cfg.EgressRateMB << 20}
	if len(secrets) > 0 {
		logger.Info("the egress proxy attaches secrets", "hosts", slices.Sorted(maps.Keys(secrets)))
	}
	return &core.Egress{Allow: pol, Resolver: res, Limits: lim, Secrets: secrets, SecretRoots: roots,
		Metrics: m, Logger: logger.With("component", "egress")}, nil
}

// parseHosts reads --egress-hosts: name=address pairs, comma-separated.
func parseHosts(s string) (map[string][]netip.Addr, error) {
	out := map[string][]netip.Addr{}
	for _, kv := range splitList(s) {
		name, addr, ok := strings.Cut(kv, "=")
		ip, err := netip.ParseAddr(addr)
		if !ok || name == "" || err != nil {
			return nil, fmt.Errorf("--egress-hosts: %q is not name=address", kv)
		}
		name = strings.TrimSuffix(strings.ToLower(name), ".")
		out[name] = append(out[name], ip)
	}
	return out, nil
}

// pinned answers the names the operator pinned, and asks next for the rest.
type pinned struct {
	hosts map[string][]netip.Addr
	next  egress.Resolver
}

func (p pinned) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if addrs, ok := p.hosts[strings.TrimSuffix(strings.ToLower(host), ".")]; ok {
		return addrs, nil
	}
	return p.next.LookupNetIP(ctx, network, host)
}
