package main

import (
	"fmt"
	"time"
)

// headline is one of the targets in docs/architecture.md, measured.
type headline struct {
	What  string  `json:"what"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"` // "x" for a ratio
	// AtMost says the target is an upper bound; otherwise a lower one.
	AtMost bool    `json:"at_most"`
	Target float64 `json:"target"`
	Meets  bool    `json:"meets"`
}

func (h headline) String() string {
	op := "≥"
	if h.AtMost {
		op = "≤"
	}
	verdict := "misses"
	if h.Meets {
		verdict = "meets"
	}
	return fmt.Sprintf("%-58s %9.3f %-6s target %s %g: %s", h.What, h.Value, h.Unit, op, h.Target, verdict)
}

func newHeadline(what string, value float64, unit string, atMost bool, target float64) headline {
	meets := value >= target
	if atMost {
		meets = value <= target
	}
	return headline{What: what, Value: value, Unit: unit, AtMost: atMost, Target: target, Meets: meets}
}

// headlines computes the targets of docs/architecture.md that this run measured,
// the three the issue asks for first. Targets whose inputs are missing
// are left out.
func headlines(rows []row, tps []throughput, mems []memRow) []headline {
	var out []headline
	p50 := func(l, p, mode string) time.Duration {
		r, _ := findRow(rows, l, p, mode)
		return r.p50()
	}
	for _, l := range langs {
		for _, p := range l.probes {
			if p.trivial || !l.snapshotted {
				continue
			}
			if v, ok := ratio(p50(l.name, p.name, modeRestore), p50(l.name, p.name, modeCold)); ok {
				out = append(out, newHeadline(fmt.Sprintf("%s `%s`: snapshot restore p50 / cold p50", l.name, p.name), v, "x", true, 0.15))
			}
		}
	}
	for _, l := range langs {
		p := l.probes[0]
		if v, ok := ratio(p50(l.name, p.name, modePool), p50(l.name, p.name, modeNative)); ok {
			out = append(out, newHeadline(fmt.Sprintf("%s `%s`: warm pool p50 / native process p50", l.name, p.name), v, "x", true, 0.2))
		}
	}
	rates := map[string]map[string]float64{}
	for _, t := range tps {
		if rates[t.Lang] == nil {
			rates[t.Lang] = map[string]float64{}
		}
		rates[t.Lang][t.Target] = t.rate()
	}
	for _, l := range langs {
		r, ok := rates[l.name]
		if !ok || r[targetRaw] <= 0 {
			continue
		}
		out = append(out, newHeadline(fmt.Sprintf("%s one-shot throughput / raw runsc rate", l.name), r[targetPaddock]/r[targetRaw], "x", false, 0.8))
	}
	for _, l := range langs {
		if r, ok := rates[l.name]; ok {
			out = append(out, newHeadline(fmt.Sprintf("%s one-shot throughput, fresh sandbox per run", l.name), r[targetPaddock], "runs/s", false, 10))
		}
	}
	for _, l := range langs {
		if d := p50(l.name, l.expr, modeSession); d > 0 {
			out = append(out, newHeadline(fmt.Sprintf("%s session `%s` round trip p50", l.name, l.expr), msOf(d), "ms", true, 1))
		}
	}
	for _, m := range mems {
		if len(m.Samples) > 0 {
			out = append(out, newHeadline(fmt.Sprintf("%s idle pooled sandbox (%s), host memory", m.Lang, m.Start), m.meanMB(func(s memSample) uint64 { return s.Usage }), "MiB", true, 25))
		}
	}
	for _, l := range langs {
		p := l.probes[0]
		if v, ok := ratio(p50(l.name, p.name, modeCold), p50(l.name, p.name, modeRaw)); ok {
			out = append(out, newHeadline(fmt.Sprintf("%s `%s`: cold one-shot p50 / raw runsc run p50", l.name, p.name), v, "x", true, 1.2))
		}
	}
	return out
}
