package main

import (
	"strings"
	"testing"
	"time"
)

func TestParentShare(t *testing.T) {
	ms := time.Millisecond
	before := cgroupUsages{"": 1000 * ms, "pd-a": 300 * ms, "pd-b": 200 * ms}
	// pd-a was destroyed; pd-b used 15 ms meanwhile; the parent 40 ms.
	after := cgroupUsages{"": 1040 * ms, "pd-b": 215 * ms}
	if got, ok := parentShare(before, after, "pd-a"); !ok || got != 25*ms {
		t.Errorf("parentShare = %s, %v; want 25ms, true", got, ok)
	}
	// Another sandbox came meanwhile: what it used is unknown.
	after["pd-c"] = 5 * ms
	if _, ok := parentShare(before, after, "pd-a"); ok {
		t.Error("parentShare with a new child: ok, want not ok")
	}
	// Another sandbox went meanwhile.
	if _, ok := parentShare(before, cgroupUsages{"": 1040 * ms}, "pd-a"); ok {
		t.Error("parentShare with a child gone: ok, want not ok")
	}
	// Read one after another, pd-b's count ran ahead of the parent's.
	if got, ok := parentShare(before, cgroupUsages{"": 1010 * ms, "pd-b": 212 * ms}, "pd-a"); !ok || got != 0 {
		t.Errorf("parentShare with a child read after the parent = %s, %v; want 0s, true", got, ok)
	}
	// A raw run's container appears and goes within the step.
	if got, ok := parentShare(cgroupUsages{"": 10 * ms}, cgroupUsages{"": 70 * ms}, "raw-1"); !ok || got != 60*ms {
		t.Errorf("parentShare of a child that came and went = %s, %v; want 60ms, true", got, ok)
	}
}

func TestCPUTablePrint(t *testing.T) {
	ms := time.Millisecond
	s := func(up, ready, run, del time.Duration, delValid bool) cpuSample {
		var c cpuSample
		c[stepUp] = cpuSplit{runsc: 20 * ms, sandbox: up, self: ms, wall: 100 * ms, valid: true}
		c[stepReady] = cpuSplit{sandbox: ready, wall: 10 * ms, valid: true}
		c[stepRun] = cpuSplit{sandbox: run, wall: 10 * ms, valid: true}
		c[stepDestroy] = cpuSplit{runsc: 10 * ms, sandbox: del, wall: 20 * ms, valid: delValid}
		return c
	}
	tab := cpuTable{lang: "python", variant: "Paddock", kind: "test", samples: []cpuSample{
		s(200*ms, 20*ms, 20*ms, 5*ms, true),
		s(220*ms, 20*ms, 20*ms, 0, false),
		s(240*ms, 20*ms, 20*ms, 7*ms, true),
	}}
	// The p50 is the nearest rank: of two samples, the higher.
	var b strings.Builder
	tab.print(&b)
	out := b.String()
	for _, want := range []string{
		"restore/start           241.00    241.00     20.00    220.00      1.00    100.00\n",
		"destroy+cleanup          17.00     16.00     10.00      6.00      0.00     20.00  (read in 2 of 3 samples; in the others, other sandboxes came or went)\n",
		"per one-shot            318.00    297.00                                  140.00  (p50 of 2 whole samples)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "idle in the pool") {
		t.Errorf("table shows an idle row that was not measured:\n%s", out)
	}
}
