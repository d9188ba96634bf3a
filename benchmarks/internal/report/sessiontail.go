package report

import "fmt"

// SessionTail is the session tail phase's result for one binary in one
// round (issue 32, interactive before batch): a session's `x + 1` idle
// and while clients stream one-shots, and the one-shot rate beside a
// session running a CPU loop and without.
type SessionTail struct {
	Binary   string      `json:"binary"`
	Idle     TailCells   `json:"idle"`
	Loaded   []TailCells `json:"loaded"`
	OneShots []TailRate  `json:"one_shots,omitempty"`
}

// TailCells are one condition's cells; Clients is 0 for the idle ones.
type TailCells struct {
	Clients int     `json:"clients"`
	N       int     `json:"n"`
	P50MS   float64 `json:"p50_ms"`
	P99MS   float64 `json:"p99_ms"`
}

// TailRate is one client count's one-shot rate, pooled over its windows.
type TailRate struct {
	Clients     int     `json:"clients"`
	WithoutRate float64 `json:"without_runs_per_sec"`
	WithRate    float64 `json:"with_busy_session_runs_per_sec"`
}

// The aims of issue 32: the loaded p99 at TailAimClients within
// TailAimRatio times the idle one, and the one-shot rate beside a busy
// session within RateAim of the rate without.
const (
	TailAimClients = 4
	TailAimRatio   = 2.0
	RateAim        = 0.95
)

// tailHeadlines sets each SessionTail against the aims: the p99 ratio at
// TailAimClients and the rate ratio at every count are targeted; the p99
// ratio at the other counts is shown without one.
func tailHeadlines(ts []SessionTail) []headline {
	var out []headline
	for _, t := range ts {
		for _, l := range t.Loaded {
			if t.Idle.P99MS <= 0 {
				continue
			}
			what := fmt.Sprintf("%s: session x + 1 p99 while %d clients stream one-shots ÷ idle p99", t.Binary, l.Clients)
			if l.Clients == TailAimClients {
				out = append(out, newHeadline(what, l.P99MS/t.Idle.P99MS, "x", true, TailAimRatio))
			} else {
				out = append(out, untargeted(what, l.P99MS/t.Idle.P99MS, "x"))
			}
		}
		for _, r := range t.OneShots {
			if r.WithoutRate <= 0 {
				continue
			}
			what := fmt.Sprintf("%s: one-shots/s at %d clients beside a busy session ÷ without", t.Binary, r.Clients)
			out = append(out, newHeadline(what, r.WithRate/r.WithoutRate, "x", false, RateAim))
		}
	}
	return out
}
