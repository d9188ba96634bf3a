package hibernate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/memory"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// capacity opens k sessions of template at once on s (a server with no
// pool, so that each of its sandboxes is a session's), sets their state
// and reads their memory, then hibernates them all and reads the disk
// they take and the memory left; last it opens sessions until the server
// refuses, to see whether the hibernated ones hold slots of
// --max-sessions (maxSessions).
func capacity(ctx context.Context, s *server.Server, cg host.Cgroups, template string, k, maxSessions int, budget int64, settle time.Duration) (c report.Capacity, err error) {
	c = report.Capacity{Template: template, MaxSessions: maxSessions, BudgetBytes: budget}
	st := states[template]
	hibDir := filepath.Join(s.StateDir(), "hibernate")
	mem0, err := host.ReadMemInfo("/proc/meminfo")
	if err != nil {
		return c, err
	}
	c.MemTotal, c.AvailBefore = mem0.Total, mem0.Available
	var ids []string
	defer func() {
		for _, id := range ids {
			remove(ctx, s, id)
		}
	}()
	begin := time.Now()
	for i := range k {
		in, _, err := create(ctx, s, template)
		if err != nil {
			return c, fmt.Errorf("opening session %d of %d: %w", i+1, k, err)
		}
		ids = append(ids, in.ID)
		if _, _, err := execute(ctx, s, in.ID, st.setup); err != nil {
			return c, err
		}
	}
	c.Open, c.Sessions = time.Since(begin), k
	bench.Progress("  %d %s sessions open in %s; reading their memory after %s", k, template, c.Open.Round(100*time.Millisecond), settle)
	if err := bench.Sleep(ctx, settle); err != nil {
		return c, err
	}
	if c.Live, err = memory.Sandboxes(s, cg); err != nil {
		return c, err
	}
	if len(c.Live) != k {
		return c, fmt.Errorf("%d sandboxes for %d open sessions (the server must have no pool)", len(c.Live), k)
	}
	memLive, err := host.ReadMemInfo("/proc/meminfo")
	if err != nil {
		return c, err
	}
	c.AvailLive = memLive.Available
	if c.DiskFree, err = host.DiskFree(hibDir); err != nil {
		return c, err
	}
	begin = time.Now()
	for _, id := range ids {
		p, _, err := action(ctx, s, id, "pause")
		if err != nil {
			return c, err
		}
		if p.State != "hibernated" {
			return c, fmt.Errorf("session %s after pause: state %q", id, p.State)
		}
		c.ImageBytes = append(c.ImageBytes, p.ImageBytes)
	}
	c.Pause = time.Since(begin)
	if c.DirBytes, err = host.DiskUsage(hibDir); err != nil {
		return c, err
	}
	if err := bench.Sleep(ctx, settle); err != nil {
		return c, err
	}
	left, err := memory.Sandboxes(s, cg)
	if err != nil {
		return c, err
	}
	c.LeftLive = len(left)
	memHib, err := host.ReadMemInfo("/proc/meminfo")
	if err != nil {
		return c, err
	}
	c.AvailHibernated = memHib.Available
	bench.Progress("  all %d hibernated in %s: %.1f MiB of disk each, %d sandboxes left", k, c.Pause.Round(100*time.Millisecond), c.DiskMiB(), c.LeftLive)
	// One more than the limit could allow if the hibernated did not count.
	for range maxSessions + 1 {
		in, _, err := create(ctx, s, template)
		if err == nil {
			ids = append(ids, in.ID)
			c.MoreCreated++
			continue
		}
		var ae apiError
		if !errors.As(err, &ae) {
			return c, err
		}
		c.Refusal = refusal(ae)
		break
	}
	return c, nil
}

// refusal names an error answer by its status, code and message.
func refusal(e apiError) string {
	var body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(e.body), &body) != nil || body.Code == "" {
		return e.Error()
	}
	return fmt.Sprintf("HTTP %d %s (%q)", e.status, body.Code, body.Message)
}
