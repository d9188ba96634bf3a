package report

import (
	"testing"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

func TestJupyterHeadlines(t *testing.T) {
	const (
		noDelay = "python `x + 1` Jupyter cell round trip: native Jupyter Server + ipykernel with TCP_NODELAY p50 / Paddock p50"
		stock   = "python `x + 1` Jupyter cell round trip: native Jupyter Server + ipykernel p50 / Paddock p50"
	)
	type want struct {
		what   string
		value  float64
		target float64
	}
	for _, tc := range []struct {
		name string
		rows []stats.Row
		want []want
	}{
		{
			name: "nagle off is faster: it is the target's baseline, stock shown without one",
			rows: []stats.Row{
				rowOf("python", "x + 1", stats.ModeJupyterPaddock, 4),
				rowOf("python", "x + 1", stats.ModeJupyterNative, 48),
				rowOf("python", "x + 1", stats.ModeJupyterNoDelay, 7),
			},
			want: []want{{noDelay, 1.75, 7}, {stock, 12, 0}},
		},
		{
			name: "stock is faster: it is the baseline, alone",
			rows: []stats.Row{
				rowOf("python", "x + 1", stats.ModeJupyterPaddock, 2),
				rowOf("python", "x + 1", stats.ModeJupyterNative, 20),
				rowOf("python", "x + 1", stats.ModeJupyterNoDelay, 30),
			},
			want: []want{{stock, 10, 7}},
		},
		{
			name: "only the stock row",
			rows: []stats.Row{
				rowOf("python", "x + 1", stats.ModeJupyterPaddock, 4),
				rowOf("python", "x + 1", stats.ModeJupyterNative, 48),
			},
			want: []want{{stock, 12, 7}},
		},
		{
			name: "only the nodelay row",
			rows: []stats.Row{
				rowOf("python", "x + 1", stats.ModeJupyterPaddock, 1),
				rowOf("python", "x + 1", stats.ModeJupyterNoDelay, 8),
			},
			want: []want{{noDelay, 8, 7}},
		},
		{
			name: "no Paddock row",
			rows: []stats.Row{
				rowOf("python", "x + 1", stats.ModeJupyterNative, 48),
				rowOf("python", "x + 1", stats.ModeJupyterNoDelay, 7),
			},
		},
		{
			name: "no native row",
			rows: []stats.Row{rowOf("python", "x + 1", stats.ModeJupyterPaddock, 4)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := jupyterHeadlines(tc.rows)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d headlines %v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.What != w.what || g.Value != w.value || g.Target != w.target || (g.Meets == nil) != (w.target == 0) {
					t.Errorf("headline %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}
