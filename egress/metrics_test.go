package egress

import (
	"encoding/json"
	"io"
	"maps"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// gathered reads reg's counters of family name, keyed by their reason
// label ("" when unlabelled).
func gathered(t *testing.T, reg prometheus.Gatherer, name string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			key := ""
			for _, l := range m.GetLabel() {
				key = l.GetValue()
			}
			out[key] = m.GetCounter().GetValue()
		}
	}
	return out
}

func TestMetricsAndStatsCountByReason(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	port := tcpUpstream(t, echo)
	ps := strconv.Itoa(port)
	res := &fakeResolver{names: map[string][]netip.Addr{"api.test": {loopback}, "lan.test": {netip.MustParseAddr("10.9.9.9")}}}
	pol := mustPolicy(t, []string{"api.test:" + ps, "lan.test:" + ps, "*.api.test:" + ps}, []string{"x.api.test"})
	p, addr, _ := testProxy(t, Config{Policy: pol, Resolver: res, Metrics: m})
	// A second proxy of the same server shares the instruments.
	p2, addr2, _ := testProxy(t, Config{Policy: pol, Resolver: res, Metrics: m})

	for _, target := range []string{"no.test:" + ps, "no.test:" + ps, "x.api.test:" + ps, "127.0.0.1:" + ps, "lan.test:" + ps} {
		_, _, resp := connect(t, addr, target)
		readBody(t, resp)
	}
	_, _, resp := connect(t, addr2, "no.test:"+ps)
	readBody(t, resp)
	for _, a := range []string{addr, addr2} {
		c, br, resp := connect(t, a, "api.test:"+ps)
		if resp.StatusCode != 200 {
			t.Fatalf("allowed CONNECT: %d", resp.StatusCode)
		}
		if _, err := io.WriteString(c, "abc"); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(br, make([]byte, 3)); err != nil {
			t.Fatal(err)
		}
	}

	refused := gathered(t, reg, "paddock_egress_refused_total")
	want := map[string]float64{ReasonNotAllowed: 3, ReasonDenied: 1, ReasonRawIP: 1, ReasonBlockedAddress: 1, ReasonConnLimit: 0}
	for reason, n := range want {
		if got := refused[reason]; got != n {
			t.Errorf("paddock_egress_refused_total{reason=%q} = %v, want %v", reason, got, n)
		}
	}
	if len(refused) != len(Reasons) {
		t.Errorf("%d refused series, want one per reason, %d", len(refused), len(Reasons))
	}
	if got := gathered(t, reg, "paddock_egress_connections_total")[""]; got != 2 {
		t.Errorf("paddock_egress_connections_total = %v, want 2", got)
	}
	if got := gathered(t, reg, "paddock_egress_bytes_total"); got["out"] != 6 || got["in"] != 6 || len(got) != 2 {
		t.Errorf("paddock_egress_bytes_total = %v, want 6 out and 6 in", got)
	}

	wantStats := map[string]int64{ReasonNotAllowed: 2, ReasonDenied: 1, ReasonRawIP: 1, ReasonBlockedAddress: 1}
	if s := p.Stats(); s.Connections != 1 || !maps.Equal(s.Refused, wantStats) {
		t.Errorf("first proxy Stats = %+v, want 1 connection and %v", s, wantStats)
	}
	if s := p2.Stats(); s.Connections != 1 || !maps.Equal(s.Refused, map[string]int64{ReasonNotAllowed: 1}) {
		t.Errorf("second proxy Stats = %+v", s)
	}
}

func TestMetricsRegisterOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("a second NewMetrics on one registry succeeded")
	}
}

func TestStatsJSON(t *testing.T) {
	b, err := json.Marshal(Stats{Connections: 2, BytesOut: 10, BytesIn: 20, Refused: map[string]int64{ReasonDenied: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"connections":2,"bytes_out":10,"bytes_in":20,"refused":{"denied":1}}`; string(b) != want {
		t.Errorf("Stats JSON = %s, want %s", b, want)
	}
}

func TestLimitsDefaults(t *testing.T) {
	got, err := Limits{MaxConns: 3}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{MaxConns: 3, MaxBytesOut: 256 << 20, MaxBytesIn: 256 << 20, BytesPerSecond: 4 << 20,
		ConnectTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second}
	if got != want {
		t.Errorf("withDefaults = %+v, want %+v", got, want)
	}
}
