package main

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestMeasureRate(t *testing.T) {
	var calls atomic.Int64
	tp, err := measureRate(t.Context(), 2, 100*time.Millisecond, func(ctx context.Context) (string, time.Duration, error) {
		n := calls.Add(1)
		time.Sleep(5 * time.Millisecond)
		if n%4 == 0 {
			return "", 0, errBusy{status: 429}
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
	if tp.Elapsed < 100*time.Millisecond || tp.rate() <= 0 {
		t.Errorf("elapsed %v, rate %v", tp.Elapsed, tp.rate())
	}
}

func TestMeasureRateStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	begin := time.Now()
	_, err := measureRate(t.Context(), 2, time.Minute, func(ctx context.Context) (string, time.Duration, error) {
		return "", 0, boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
	if time.Since(begin) > 10*time.Second {
		t.Error("an error did not stop the measurement")
	}
}

func TestThroughputRate(t *testing.T) {
	if got := (throughput{Runs: 30, Elapsed: 2 * time.Second}).rate(); got != 15 {
		t.Errorf("rate = %v, want 15", got)
	}
	if got := (throughput{Runs: 30}).rate(); got != 0 {
		t.Errorf("rate without elapsed time = %v, want 0", got)
	}
}
