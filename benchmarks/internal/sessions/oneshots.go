package sessions

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/load"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// oneShotRates is one client count's one-shot throughput in windows of
// the same length, with the busy session idle and with it running its
// loop, in turns.
type oneShotRates struct {
	clients       int
	without, with []report.Throughput
	busyCells     int           // busy cells that ran to their end in the with windows
	busyFor       time.Duration // the with windows' time
}

// busyFirst says whether a turn's window with the busy session comes
// before the one without: they swap every turn (without, with, with,
// without, …), so that neither always follows the other.
func busyFirst(turn int) bool { return turn%2 == 1 }

// measureOneShots counts the print(1) one-shots clients finish in
// window on s, turns times with busy idle and turns times with it
// running, each window from a full pool.
func measureOneShots(ctx context.Context, s *server.Server, busy *busySession, clients, turns int, window time.Duration) (oneShotRates, error) {
	r := oneShotRates{clients: clients}
	once := func(ctx context.Context) (string, time.Duration, error) {
		resp, d, err := s.RunOnce(ctx, "python", "print(1)")
		if err != nil {
			return "", d, err
		}
		if resp.Reason != "ok" || resp.Stdout != "1\n" {
			return "", d, fmt.Errorf("print(1): reason %q, stdout %q, stderr %q", resp.Reason, resp.Stdout, resp.Stderr)
		}
		return resp.StartKind(), d, nil
	}
	for turn := range turns {
		for _, withBusy := range []bool{busyFirst(turn), !busyFirst(turn)} {
			if err := s.AwaitFull(ctx, "python"); err != nil {
				return r, err
			}
			bench.Progress("session tail: one-shots, %d clients, busy session %v, turn %d", clients, withBusy, turn+1)
			if withBusy {
				busy.start(ctx)
			}
			t, err := load.Rate(ctx, clients, window, once)
			if withBusy {
				n, berr := busy.stop()
				r.busyCells += n
				r.busyFor += t.Elapsed
				if err == nil {
					err = berr
				}
			}
			if err != nil {
				return r, err
			}
			if withBusy {
				r.with = append(r.with, t)
			} else {
				r.without = append(r.without, t)
			}
		}
	}
	return r, nil
}

// pooledRate is the runs per second over every window together.
func pooledRate(ts []report.Throughput) float64 {
	var runs int
	var took time.Duration
	for _, t := range ts {
		runs += t.Runs
		took += t.Elapsed
	}
	if took <= 0 {
		return 0
	}
	return float64(runs) / took.Seconds()
}

// startsIn sums the server's start kinds over ts: "pool 12 restore 3",
// kinds in order of name.
func startsIn(ts []report.Throughput) string {
	sum := map[string]int{}
	for _, t := range ts {
		for k, n := range t.Starts {
			sum[k] += n
		}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(sum)) {
		out = append(out, fmt.Sprintf("%s %d", k, sum[k]))
	}
	return strings.Join(out, " ")
}

// latencies pools the answered runs' round trips over ts.
func latencies(ts []report.Throughput) []time.Duration {
	var out []time.Duration
	for _, t := range ts {
		out = append(out, t.Latencies...)
	}
	return out
}

// refusedIn counts the busy answers over ts.
func refusedIn(ts []report.Throughput) int {
	n := 0
	for _, t := range ts {
		n += t.Busy
	}
	return n
}
