package egressbench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// Title is the phase's title, which --egress-only keeps.
const Title = "egress: downloads from a stand-in internet, host against sandbox through the proxy and direct; networked one-shot starts"

// The server's egress limits: a rate far above anything measured
// (1 TiB/s each way), so that the proxy's rate bucket is not what is
// measured, and bytes enough for every proxied run's downloads.
const (
	rateMB  = 1 << 20
	maxMB   = 64 << 10
	maxConn = 8
)

// Phase makes the stand-in internet, starts one python server, with no
// pool and snapshots on, whose runs may reach it (and only it) by name, opens the direct listener in
// the server's egress namespace once a first networked run has made it,
// then takes the download rounds and the start samples.
func Phase(ctx context.Context, o bench.Options, rep *report.Report) (err error) {
	if !server.ServeHas(o.Paddock, "egress-rate-mb") {
		return fmt.Errorf("%s serve has no --egress-rate-mb (rebuild it with `make build`)", o.Paddock)
	}
	if _, err := os.Stat(hostPython); err != nil {
		return fmt.Errorf("the host's downloads need %s: %w", hostPython, err)
	}
	if o.EgressBig <= 0 || o.EgressSmall <= 0 || o.EgressBig > maxStandin || o.EgressSmall > maxStandin {
		return fmt.Errorf("download sizes %d and %d bytes: each must be in 1..%d", o.EgressBig, o.EgressSmall, maxStandin)
	}
	in, err := newInternet()
	if err != nil {
		return fmt.Errorf("making the stand-in internet: %w", err)
	}
	defer in.close()
	srv := standin()
	defer srv.Close()
	ln, err := listenIn(in.ns, net.JoinHostPort(standinAddr, strconv.Itoa(standinPort)))
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }()

	s, err := server.Start(ctx, o, server.Config{Name: "egress", Templates: []string{"python"}, Pool: 0, Snapshots: true, Extra: []string{
		fmt.Sprintf("--egress-allow=%s:%d", standinName, standinPort),
		fmt.Sprintf("--egress-hosts=%s=%s", standinName, standinAddr),
		"--egress-rate-mb=" + strconv.Itoa(rateMB), "--egress-max-mb=" + strconv.Itoa(maxMB), "--egress-max-conns=" + strconv.Itoa(maxConn)}})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Finish(ctx, rep)) }()
	bench.Progress("  --egress-rate-mb=%d (1 TiB/s each way): the proxy's rate bucket is not what is measured", rateMB)

	// One unmeasured networked run: it makes the egress namespace and
	// pays the first start's costs.
	if _, err := run(ctx, s, "print(1)", true, nil); err != nil {
		return fmt.Errorf("the first networked run: %w", err)
	}
	ens := egressNS(s.StateDir())
	direct, err := listenIn(ens, net.JoinHostPort("0.0.0.0", strconv.Itoa(directPort)))
	if err != nil {
		return fmt.Errorf("the direct listener in the server's egress namespace: %w", err)
	}
	go func() { _ = srv.Serve(direct) }()

	e := &report.Egress{RateMB: rateMB, Sizes: []int64{o.EgressSmall, o.EgressBig}}
	rep.Egress = e
	if o.EgressRounds > 0 {
		if err := downloads(ctx, o, s, ens, e); err != nil {
			return err
		}
	}
	if o.EgressStarts > 0 {
		return starts(ctx, o, s, rep)
	}
	return nil
}
