package load

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func TestMeasureRate(t *testing.T) {
	var calls atomic.Int64
	tp, err := Rate(t.Context(), 2, 100*time.Millisecond, func(ctx context.Context) (string, time.Duration, error) {
		n := calls.Add(1)
		time.Sleep(5 * time.Millisecond)
		if n%4 == 0 {
			return "", 0, BusyError{Status: 429}
		}
		return "pool", 5 * time.Millisecond, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if tp.Runs+tp.Busy != int(calls.Load()) {
		t.Errorf("runs %d + busy %d != calls %d", tp.Runs, tp.Busy, calls.Load())
	}
	if tp.Busy == 0 || tp.Runs == 0 || tp.Starts["pool"] != tp.Runs || len(tp.Latencies) != tp.Runs {
		t.Errorf("throughput = %+v", tp)
	}
	if tp.Elapsed < 100*time.Millisecond || tp.Rate() <= 0 {
		t.Errorf("elapsed %v, rate %v", tp.Elapsed, tp.Rate())
	}
}

func TestMeasureRateStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	begin := time.Now()
	_, err := Rate(t.Context(), 2, time.Minute, func(ctx context.Context) (string, time.Duration, error) {
		return "", 0, boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
	if time.Since(begin) > 10*time.Second {
		t.Error("an error did not stop the measurement")
	}
}

// A client refused until the end is counted as starved, with how long it
// had been trying; a client answered at the end is neither.
func TestMeasureLoopCountsStarvedClients(t *testing.T) {
	var calls atomic.Int64
	tp, err := Loop(t.Context(), 2, 50*time.Millisecond, true, func(ctx context.Context) (string, time.Duration, error) {
		if calls.Add(1) == 1 {
			// The first client holds its only run past the end.
			time.Sleep(60 * time.Millisecond)
			return "pool", 60 * time.Millisecond, nil
		}
		return "", 0, BusyError{Status: 429}
	})
	if err != nil {
		t.Fatal(err)
	}
	if tp.Runs != 1 || tp.Starved != 1 || len(tp.Unanswered) != 1 || tp.Unanswered[0] <= 0 || tp.Unanswered[0] > tp.Elapsed {
		t.Errorf("runs %d, starved %d, unanswered %v (elapsed %v); want 1, 1 and one wait within the point", tp.Runs, tp.Starved, tp.Unanswered, tp.Elapsed)
	}
}

// TestMeasureLoopKeepsGoing: past a failed run the loop goes on, counting
// it, busy answers by status, and successes; the fourth call stops it.
func TestMeasureLoopKeepsGoing(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	tp, err := Loop(ctx, 1, time.Hour, true, func(ctx context.Context) (string, time.Duration, error) {
		calls++
		switch calls {
		case 1:
			return "", 0, errors.New("boom")
		case 2:
			return "", 0, BusyError{Status: 503}
		case 4:
			cancel()
		}
		return "restore", time.Duration(calls) * time.Millisecond, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 4 || tp.Runs != 2 || tp.Errors != 1 || tp.FirstError != "boom" || tp.Busy != 1 || tp.BusyByStatus[503] != 1 ||
		tp.Starts["restore"] != 2 || !slices.Equal(tp.Latencies, []time.Duration{3 * time.Millisecond, 4 * time.Millisecond}) {
		t.Errorf("calls %d, throughput %+v", calls, tp)
	}
	// The run after the 503 cost its client the pause the 503 asked for;
	// the failed run's attempt is not counted in it.
	if len(tp.Waited) != 2 || tp.Waited[0] < busyPause {
		t.Errorf("waited %v, want 2 with the first ≥ %v", tp.Waited, busyPause)
	}
}

func TestBusyPauseFor(t *testing.T) {
	if got := busyPauseFor(BusyError{Status: 503, RetryAfter: time.Minute}); got != 5*time.Second {
		t.Errorf("capped pause = %v, want 5s", got)
	}
	if got := busyPauseFor(BusyError{Status: 429}); got != 20*time.Millisecond {
		t.Errorf("pause without Retry-After = %v, want 20ms", got)
	}
}
