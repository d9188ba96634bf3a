package egressbench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/runner"
)

// hostPython is the host's interpreter for the host's downloads: the
// same Python 3.11 as the template's, outside any sandbox.
const hostPython = "/usr/bin/python3"

// Downloads per client process of each size.
const (
	smallN = 5
	bigN   = 2
)

// sizes are what one client process fetches: one small warm-up (not
// counted), then smallN small and bigN big downloads.
func sizes(o bench.Options) []int64 {
	out := []int64{o.EgressSmall}
	for range smallN {
		out = append(out, o.EgressSmall)
	}
	for range bigN {
		out = append(out, o.EgressBig)
	}
	return out
}

// path is one way of downloading and the plan of its client.
type path struct {
	name    string
	sandbox bool
	plan    plan
}

func paths(o bench.Options) []path {
	host := net.JoinHostPort(standinName, strconv.Itoa(standinPort))
	sz := sizes(o)
	return []path{
		{report.EgressHost, false, plan{Addr: [2]any{standinAddr, standinPort}, Host: host, Sizes: sz}},
		{report.EgressConnect, true, plan{Addr: [2]any{runner.EgressAddr, runner.EgressPort}, Host: host, Connect: true, Sizes: sz}},
		{report.EgressForward, true, plan{Addr: [2]any{runner.EgressAddr, runner.EgressPort}, Host: host, Absolute: true, Sizes: sz}},
		{report.EgressDirect, true, plan{Addr: [2]any{runner.EgressAddr, directPort}, Host: host, Sizes: sz}},
	}
}

// downloads takes o.EgressRounds rounds; each runs every path's client once, in
// an order turned by one each round, so that a drift of the machine's
// load falls on all alike.
func downloads(ctx context.Context, o bench.Options, s *server.Server, egressNS string, e *report.Egress) error {
	ps := paths(o)
	for round := range o.EgressRounds {
		for k := range ps {
			p := ps[(k+round)%len(ps)]
			var out string
			var err error
			if p.sandbox {
				out, err = sandboxFetch(ctx, s, egressNS, p, e)
			} else {
				out, err = hostFetch(ctx, p)
			}
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round, p.name, err)
			}
			fs, err := parseFetches(out, p.name, round)
			e.Fetches = append(e.Fetches, fs...)
			if err != nil {
				return err
			}
			if len(fs) != len(p.plan.Sizes) {
				return fmt.Errorf("round %d, %s: %d downloads of %d", round, p.name, len(fs), len(p.plan.Sizes))
			}
		}
		bench.Progress("  round %d, %s p50 so far: host %.0f MiB/s, CONNECT %.0f, plain HTTP %.0f, direct %.0f", round+1, report.EgressSizeLabel(o.EgressBig), e.Throughput(report.EgressHost, o.EgressBig), e.Throughput(report.EgressConnect, o.EgressBig),
			e.Throughput(report.EgressForward, o.EgressBig), e.Throughput(report.EgressDirect, o.EgressBig))
	}
	return nil
}

// hostFetch runs p's client on the host, in the bench's namespace.
func hostFetch(ctx context.Context, p path) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, runTimeoutMS*time.Millisecond)
	defer cancel()
	cmd := exec.CommandContext(ctx, hostPython, "-c", program(p.plan))
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("%s: %w: %s", hostPython, err, ee.Stderr)
		}
		return "", err
	}
	return string(out), nil
}

// sandboxFetch runs p's client in a networked sandbox. A direct client's
// sandbox must be the only one networked: the host ends of all the
// sandboxes' veths carry one address, and the direct listener, bound to
// no device, answers by the route to the sandbox's address, which is
// unambiguous only then.
func sandboxFetch(ctx context.Context, s *server.Server, egressNS string, p path, e *report.Egress) (string, error) {
	if p.name == report.EgressDirect {
		if err := awaitNoSandboxNets(ctx, egressNS); err != nil {
			return "", err
		}
	}
	a, err := run(ctx, s, program(p.plan), true, nil)
	if err != nil {
		return "", err
	}
	var want int64
	for _, n := range p.plan.Sizes {
		want += n
	}
	got := a.Network.BytesIn
	if p.name == report.EgressDirect {
		e.DirectBytesIn = append(e.DirectBytesIn, got)
		if got != 0 {
			return "", fmt.Errorf("the proxy read %d bytes during the direct downloads", got)
		}
	} else {
		e.ProxyBytesIn = append(e.ProxyBytesIn, got)
		if got < want {
			return "", fmt.Errorf("the proxy read %d bytes, fewer than the %d downloaded through it", got, want)
		}
	}
	return a.Stdout, nil
}

// awaitNoSandboxNets waits until the egress namespace holds no sandbox's
// veth: the runs before have released theirs.
func awaitNoSandboxNets(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		n, err := sandboxLinks(name)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if err := bench.Sleep(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for %d sandbox veths to go from %s: %w", n, name, err)
		}
	}
}
