package agent

import (
	"slices"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

// BenchmarkKernelRoundTrip measures an `x + 1` cell of a warm kernel: from
// writing Execute to reading Done, with the result event in between.
func BenchmarkKernelRoundTrip(b *testing.B) {
	for _, lang := range []string{LanguagePython, LanguageNode} {
		b.Run(lang, func(b *testing.B) {
			k := startKernel(b, testConfig(b, lang), nil)
			k.execute(wire.Execute{Code: "x = 41"})
			for range 20 { // warm both sides
				k.execute(wire.Execute{Code: "x + 1"})
			}
			b.ResetTimer()
			for b.Loop() {
				res := k.execute(wire.Execute{Code: "x + 1"})
				if res.resultText() != "42" {
					b.Fatalf("result %+v", res.events)
				}
			}
		})
	}
}

// BenchmarkRun measures a one-shot `print(1)` on a pre-started agent: from
// writing Run to reading Exit, reported as the median µs/run-p50 (ns/op
// counts the agent's start too).
func BenchmarkRun(b *testing.B) {
	for _, lang := range []string{LanguagePython, LanguageNode} {
		b.Run(lang, func(b *testing.B) {
			code := "print(1)"
			if lang == LanguageNode {
				code = "console.log(1)"
			}
			var runs []time.Duration
			for range b.N {
				c := startAgent(b, testConfig(b, lang))
				c.hello()
				time.Sleep(20 * time.Millisecond) // let the start settle
				res := c.run(wire.Run{Code: code})
				runs = append(runs, res.elapsed)
				if res.exit == nil || string(res.stdout) != "1\n" {
					b.Fatalf("run: %+v", res)
				}
				c.stdin.Close()
			}
			slices.Sort(runs)
			b.ReportMetric(float64(runs[len(runs)/2].Microseconds()), "µs/run-p50")
		})
	}
}
