package load

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
)

// RunFunc does one run and says how its sandbox was started, if known.
type RunFunc func(ctx context.Context) (start string, d time.Duration, err error)

// Rate keeps conc runs going until dur has passed, lets the last
// ones finish and counts the runs per second over the whole time. A busy
// answer (BusyError) is counted and retried after a short pause; any other
// error stops the measurement.
func Rate(ctx context.Context, conc int, dur time.Duration, once RunFunc) (report.Throughput, error) {
	return Loop(ctx, conc, dur, false, once)
}

// Loop is the closed loop behind every rate of the bench: conc
// clients, each starting its next run when its last one ends, until dur
// has passed. A busy answer is counted and retried after the pause it
// asks for (Retry-After, at most busyPauseMax; busyPause without one).
// With keepGoing a failed run is counted too and the loop goes on;
// without, the first one stops it and is returned.
func Loop(ctx context.Context, conc int, dur time.Duration, keepGoing bool, once RunFunc) (report.Throughput, error) {
	t := report.Throughput{Concurrency: conc, Starts: map[string]int{}, BusyByStatus: map[int]int{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	begin := time.Now()
	for range conc {
		wg.Go(func() {
			var first time.Time // the current run's first attempt
			answered := 0
			defer func() {
				mu.Lock()
				defer mu.Unlock()
				if !first.IsZero() {
					t.Unanswered = append(t.Unanswered, time.Since(first))
				}
				if answered == 0 {
					t.Starved++
				}
			}()
			for time.Since(begin) < dur && ctx.Err() == nil {
				if first.IsZero() {
					first = time.Now()
				}
				start, d, err := once(ctx)
				mu.Lock()
				var busy BusyError
				pause := time.Duration(0)
				switch {
				case errors.As(err, &busy):
					t.Busy++
					t.BusyByStatus[busy.Status]++
					pause = busyPauseFor(busy)
				case err != nil && ctx.Err() != nil:
					// The bench is stopping: not the run's fault.
				case err != nil:
					first = time.Time{}
					t.Errors++
					if firstErr == nil {
						firstErr = err
						t.FirstError = err.Error()
					}
					if !keepGoing {
						cancel()
					}
					pause = busyPause
				default:
					answered++
					t.Runs++
					t.Latencies = append(t.Latencies, d)
					t.Waited = append(t.Waited, time.Since(first))
					first = time.Time{}
					if start != "" {
						t.Starts[start]++
					}
				}
				mu.Unlock()
				if pause > 0 {
					_ = bench.Sleep(ctx, pause)
				}
			}
		})
	}
	wg.Wait()
	t.Elapsed = time.Since(begin)
	if keepGoing {
		return t, nil
	}
	return t, firstErr
}

// Pauses of a client after a busy answer or a failed run.
const (
	busyPause    = 20 * time.Millisecond
	busyPauseMax = 5 * time.Second
)

// busyPauseFor is how long a client waits after a busy answer: its
// Retry-After, capped, else busyPause.
func busyPauseFor(b BusyError) time.Duration {
	if b.RetryAfter > 0 {
		return min(b.RetryAfter, busyPauseMax)
	}
	return busyPause
}

// BusyError is an answer that asks the client to come back later (429, 503).
// RetryAfter is its Retry-After (0 when absent or not in seconds).
type BusyError struct {
	Status     int
	RetryAfter time.Duration
}

func (e BusyError) Error() string { return fmt.Sprintf("HTTP %d", e.Status) }
