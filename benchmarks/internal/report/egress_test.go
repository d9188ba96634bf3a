package report

import (
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// fetch is a counted download of size bytes in total.
func fetch(path string, size int64, total time.Duration) EgressFetch {
	return EgressFetch{Path: path, Bytes: size, FirstByte: time.Millisecond, Total: total, Counted: true}
}

func TestEgressThroughputAndHeadlines(t *testing.T) {
	big, small := int64(64*MiB), int64(MiB)
	e := Egress{RateMB: 1 << 20, Sizes: []int64{small, big}, Fetches: []EgressFetch{
		// Host: 64 MiB in 0.1 s (640 MiB/s), twice, and an uncounted slow one.
		fetch(EgressHost, big, 100*time.Millisecond), fetch(EgressHost, big, 100*time.Millisecond),
		{Path: EgressHost, Bytes: big, Total: time.Second},
		// CONNECT: 0.125 s and 0.2 s: the median of two is the lower one, 320 MiB/s.
		fetch(EgressConnect, big, 125*time.Millisecond), fetch(EgressConnect, big, 200*time.Millisecond),
		// Direct: 0.08 s, 800 MiB/s.
		fetch(EgressDirect, big, 80*time.Millisecond),
		fetch(EgressHost, small, 10*time.Millisecond), fetch(EgressConnect, small, 100*time.Millisecond),
	}}
	if got := e.Throughput(EgressHost, big); got != 640 {
		t.Errorf("host throughput %v, want 640", got)
	}
	if got := e.Throughput(EgressConnect, big); got != 320 {
		t.Errorf("CONNECT throughput %v, want 320 (the lower median of 512 and 320)", got)
	}
	if got := e.Throughput(EgressForward, big); got != 0 {
		t.Errorf("plain HTTP throughput %v without fetches, want 0", got)
	}
	hs := map[string]headline{}
	for _, h := range egressHeadlines(e, nil) {
		hs[h.What] = h
	}
	want := []struct {
		what  string
		value float64
		meets *bool
	}{
		{"egress 64 MiB download, sandbox, proxy CONNECT / host throughput", 0.5, new(false)},
		{"egress 64 MiB download, sandbox, proxy CONNECT / sandbox direct throughput", 0.4, nil},
		{"egress 64 MiB download, sandbox direct / host throughput (gVisor's netstack)", 1.25, nil},
		{"egress 1 MiB download, sandbox, proxy CONNECT / host throughput", 0.1, nil},
	}
	for _, w := range want {
		h, ok := hs[w.what]
		if !ok {
			t.Errorf("no headline %q in %v", w.what, hs)
			continue
		}
		if d := h.Value - w.value; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s = %v, want %v", w.what, h.Value, w.value)
		}
		if (h.Meets == nil) != (w.meets == nil) || (h.Meets != nil && *h.Meets != *w.meets) {
			t.Errorf("%s: meets %v, want %v", w.what, h.Meets, w.meets)
		}
	}
	var b strings.Builder
	PrintEgress(&b, e)
	found := false
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); strings.HasPrefix(l, EgressConnect) && len(f) > 8 && f[3] == "64" && f[5] == "2" && f[6] == "320.0" && f[7] == "0.500" {
			found = true
		}
	}
	if !strings.Contains(b.String(), "--egress-rate-mb=1048576") || !found {
		t.Errorf("want the rate and a 64 MiB CONNECT line of 2 fetches at 320.0 MiB/s, 0.500 of the host's:\n%s", b.String())
	}
}

func TestEgressStartHeadlinesPickTheSameStart(t *testing.T) {
	row := func(mode, start string, ms ...int) stats.Row {
		r := stats.Row{Lang: "python", Probe: ProbeEgressStart, Mode: mode}
		for _, v := range ms {
			r.Samples = append(r.Samples, stats.Sample{D: time.Duration(v) * time.Millisecond, Start: start, Counted: true})
		}
		return r
	}
	for _, tc := range []struct {
		name, start, want string
		value             float64
	}{
		{"restored", "restore", "python networked one-shot p50 / the same without a network (restored, no pool)", 1.5},
		{"booted", "cold", "python networked one-shot p50 / the same without a network (booted, no pool)", 0.75},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := []stats.Row{row(ModeNetworked, tc.start, 300, 300, 300), row(ModeNoNetwork, "restore", 200, 200, 200),
				row(ModeOwnLimits, "cold", 400, 400, 400)}
			for _, h := range egressStartHeadlines(rows) {
				if h.What == tc.want {
					if h.Value != tc.value {
						t.Errorf("%s = %v, want %v", h.What, h.Value, tc.value)
					}
					return
				}
			}
			t.Errorf("no headline %q in %v", tc.want, egressStartHeadlines(rows))
		})
	}
}
