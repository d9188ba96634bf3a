package report

import (
	"time"
)

// Targets of a throughput measurement.
const (
	TargetPaddock    = "paddock one-shot"
	TargetRunc       = "paddock one-shot on runc"
	TargetRaw        = "raw runsc run+delete"
	TargetRawRestore = "raw runsc restore+delete"
	// TargetEmpty is raw `runsc run` + delete of /bin/true under the
	// template's limits: a sandbox that runs nothing, the least any
	// design that makes one gVisor sandbox per run can spend on it.
	TargetEmpty = "empty sandbox run+delete"
)

// Throughput is a sustained rate of runs, each on a fresh sandbox.
type Throughput struct {
	Lang        string
	Target      string
	Concurrency int
	Elapsed     time.Duration
	Runs        int
	// Busy counts answers that asked to come back later (429, 503);
	// BusyByStatus splits them by HTTP status.
	Busy         int
	BusyByStatus map[int]int `json:",omitempty"`
	// Errors counts failed runs when the loop keeps going past them
	// (load.Loop's keepGoing); FirstError is the first one's message.
	Errors     int
	FirstError string `json:",omitempty"`
	// Starts counts the server's start kinds (pool, restore, cold).
	Starts map[string]int
	// Made counts the sandboxes the server made during the measurement,
	// by how (restore, cold), pool refills included.
	Made      map[string]int
	Latencies []time.Duration
	// Waited is what each answered run cost its client: from its first
	// attempt, through any busy answers and the pauses they asked for,
	// to its answer. It equals Latencies when nothing was busy.
	Waited []time.Duration
	// Unanswered is, for each client still refused (busy) when the
	// measurement ended, how long it had been trying; Starved counts the
	// clients that got no run answered at all. Waited cannot show either.
	Unanswered []time.Duration
	Starved    int
}

// Rate is the completed runs per second.
func (t Throughput) Rate() float64 {
	if t.Elapsed <= 0 {
		return 0
	}
	return float64(t.Runs) / t.Elapsed.Seconds()
}
