package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// headline is one of the targets in docs/architecture.md, measured, or a ratio shown
// beside them without a target of its own (Target 0).
type headline struct {
	What  string  `json:"what"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"` // "x" for a ratio
	// AtMost says the target is an upper bound; otherwise a lower one.
	AtMost bool    `json:"at_most"`
	Target float64 `json:"target,omitempty"`
	Meets  *bool   `json:"meets,omitempty"`
}

func (h headline) String() string {
	if h.Meets == nil {
		return fmt.Sprintf("%-80s %9.3f %-6s no target", h.What, h.Value, h.Unit)
	}
	op := "≥"
	if h.AtMost {
		op = "≤"
	}
	verdict := "misses"
	if *h.Meets {
		verdict = "meets"
	}
	return fmt.Sprintf("%-80s %9.3f %-6s target %s %g: %s", h.What, h.Value, h.Unit, op, h.Target, verdict)
}

func newHeadline(what string, value float64, unit string, atMost bool, target float64) headline {
	meets := value >= target
	if atMost {
		meets = value <= target
	}
	return headline{What: what, Value: value, Unit: unit, AtMost: atMost, Target: target, Meets: &meets}
}

// untargeted is a ratio shown among the headlines without a target.
func untargeted(what string, value float64, unit string) headline {
	return headline{What: what, Value: value, Unit: unit}
}

// headlines computes the targets in docs/architecture.md that this run measured,
// each against the baseline that starts the same way: native rows are
// the template's own interpreter (modeNative), raw runsc rows run under
// Paddock's limits with their delete counted, and throughput is compared
// with the raw rate of the start its pool uses. Targets whose inputs are
// missing are left out.
func headlines(rows []stats.Row, tps []Throughput, mems []MemRow, natives []NativeRSS) []headline {
	var out []headline
	p50 := func(l, p, mode string) time.Duration {
		r, _ := stats.FindRow(rows, l, p, mode)
		return r.P50()
	}
	for _, l := range langs.All {
		for _, p := range l.Probes {
			if p.Trivial || !l.Snapshotted {
				continue
			}
			if v, ok := stats.Ratio(p50(l.Name, p.Name, stats.ModeRestore), p50(l.Name, p.Name, stats.ModeCold)); ok {
				out = append(out, newHeadline(fmt.Sprintf("%s `%s`: snapshot restore p50 / cold p50", l.Name, p.Name), v, "x", true, 0.15))
			}
		}
	}
	for _, mode := range []string{stats.ModePool, stats.ModeBusy} {
		for _, l := range langs.All {
			p := l.Probes[0]
			if v, ok := stats.Ratio(p50(l.Name, p.Name, mode), p50(l.Name, p.Name, stats.ModeNative)); ok {
				out = append(out, newHeadline(fmt.Sprintf("%s `%s`: %s p50 / native rootfs p50", l.Name, p.Name, mode), v, "x", true, 0.2))
			}
		}
	}
	rates := map[string]map[string]float64{}
	for _, t := range tps {
		if rates[t.Lang] == nil {
			rates[t.Lang] = map[string]float64{}
		}
		rates[t.Lang][t.Target] = t.Rate()
	}
	for _, l := range langs.All {
		r, ok := rates[l.Name]
		if !ok {
			continue
		}
		same, kind := TargetRaw, "cold"
		if l.Snapshotted {
			same, kind = TargetRawRestore, "restore"
		}
		if r[TargetPaddock] > 0 && r[same] > 0 {
			out = append(out, newHeadline(fmt.Sprintf("%s one-shot throughput / %s rate (same start: %s)", l.Name, same, kind), r[TargetPaddock]/r[same], "x", false, 0.8))
		}
		if l.Snapshotted && r[TargetPaddock] > 0 && r[TargetRaw] > 0 {
			out = append(out, newHeadline(fmt.Sprintf("%s one-shot throughput / %s rate (the doc's target)", l.Name, TargetRaw), r[TargetPaddock]/r[TargetRaw], "x", false, 2))
		}
	}
	for _, l := range langs.All {
		if r, ok := rates[l.Name]; ok && r[TargetPaddock] > 0 {
			out = append(out, newHeadline(fmt.Sprintf("%s one-shot throughput, fresh sandbox per run", l.Name), r[TargetPaddock], "runs/s", false, 10))
		}
	}
	for _, l := range langs.All {
		if d := p50(l.Name, l.Expr, stats.ModeSession); d > 0 {
			out = append(out, newHeadline(fmt.Sprintf("%s session `%s` round trip p50", l.Name, l.Expr), stats.MS(d), "ms", true, 1))
		}
	}
	out = append(out, jupyterHeadlines(rows)...)
	out = append(out, memHeadlines(mems, natives)...)
	for _, l := range langs.All {
		p := l.Probes[0]
		if v, ok := stats.Ratio(p50(l.Name, p.Name, stats.ModeCold), p50(l.Name, p.Name, stats.ModeRaw)); ok {
			out = append(out, newHeadline(fmt.Sprintf("%s `%s`: cold one-shot p50 / raw runsc run+delete p50", l.Name, p.Name), v, "x", true, 1.2))
		}
	}
	for _, l := range langs.All {
		for _, p := range l.Probes {
			if v, ok := stats.Ratio(p50(l.Name, p.Name, stats.ModeRestore), p50(l.Name, p.Name, stats.ModeRawRestore)); ok {
				out = append(out, untargeted(fmt.Sprintf("%s `%s`: restore one-shot p50 / raw runsc restore+delete p50", l.Name, p.Name), v, "x"))
			}
		}
	}
	out = append(out, e2bHeadlines(rows)...)
	out = append(out, historyHeadlines(rows, tps)...)
	out = append(out, hibernateHeadlines(rows)...)
	return append(out, runcHeadlines(rows, tps, mems)...)
}

// runcHeadlines are the ratios users ask for: what gVisor costs against
// plain containers on the same machine, each measured the same way on
// both ("gVisor ÷ runc"; above 1, gVisor is slower, bigger or, for
// throughput, faster).
func runcHeadlines(rows []stats.Row, tps []Throughput, mems []MemRow) []headline {
	var out []headline
	p50 := func(l, p, mode string) time.Duration {
		r, _ := stats.FindRow(rows, l, p, mode)
		return r.P50()
	}
	for _, l := range langs.All {
		p := l.Probes[0]
		if v, ok := stats.Ratio(p50(l.Name, p.Name, stats.ModeCold), p50(l.Name, p.Name, stats.ModeRuncCold)); ok {
			out = append(out, untargeted(fmt.Sprintf("%s `%s`: cold start p50, gVisor ÷ runc", l.Name, p.Name), v, "x"))
		}
		if v, ok := stats.Ratio(p50(l.Name, p.Name, stats.ModePool), p50(l.Name, p.Name, stats.ModeRuncPool)); ok {
			out = append(out, untargeted(fmt.Sprintf("%s `%s`: warm one-shot p50, gVisor ÷ runc", l.Name, p.Name), v, "x"))
		}
		if v, ok := stats.Ratio(p50(l.Name, l.Expr, stats.ModeSession), p50(l.Name, l.Expr, stats.ModeRuncSession)); ok {
			out = append(out, untargeted(fmt.Sprintf("%s session `%s` round trip p50, gVisor ÷ runc", l.Name, l.Expr), v, "x"))
		}
	}
	rates := map[string]map[string]float64{}
	for _, t := range tps {
		if rates[t.Lang] == nil {
			rates[t.Lang] = map[string]float64{}
		}
		rates[t.Lang][t.Target] = t.Rate()
	}
	for _, l := range langs.All {
		if r := rates[l.Name]; r[TargetPaddock] > 0 && r[TargetRunc] > 0 {
			out = append(out, untargeted(fmt.Sprintf("%s one-shot throughput, gVisor ÷ runc (below 1: runc serves more)", l.Name), r[TargetPaddock]/r[TargetRunc], "x"))
		}
	}
	usage := func(s MemSample) uint64 { return s.Usage }
	for _, l := range langs.All {
		var gv, rc []MemRow
		for _, m := range mems {
			switch {
			case m.Lang != l.Name || len(m.Samples) == 0:
			case m.Start == "runc":
				rc = append(rc, m)
			case strings.HasPrefix(m.Server, "pooled"):
				gv = append(gv, m) // the pooled server's: how make run fills its pools
			}
		}
		if len(gv) == 1 && len(rc) == 1 && rc[0].MeanMB(usage) > 0 {
			out = append(out, untargeted(fmt.Sprintf("%s idle pooled sandbox host memory (gVisor made by %s), gVisor ÷ runc", l.Name, gv[0].Start),
				gv[0].MeanMB(usage)/rc[0].MeanMB(usage), "x"))
		}
	}
	return out
}
