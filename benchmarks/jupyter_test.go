package main

import "testing"

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
		rows []row
		want []want
	}{
		{
			name: "nagle off is faster: it is the target's baseline, stock shown without one",
			rows: []row{
				rowOf("python", "x + 1", modeJupyterPaddock, 4),
				rowOf("python", "x + 1", modeJupyterNative, 48),
				rowOf("python", "x + 1", modeJupyterNoDelay, 7),
			},
			want: []want{{noDelay, 1.75, 7}, {stock, 12, 0}},
		},
		{
			name: "stock is faster: it is the baseline, alone",
			rows: []row{
				rowOf("python", "x + 1", modeJupyterPaddock, 2),
				rowOf("python", "x + 1", modeJupyterNative, 20),
				rowOf("python", "x + 1", modeJupyterNoDelay, 30),
			},
			want: []want{{stock, 10, 7}},
		},
		{
			name: "only the stock row",
			rows: []row{
				rowOf("python", "x + 1", modeJupyterPaddock, 4),
				rowOf("python", "x + 1", modeJupyterNative, 48),
			},
			want: []want{{stock, 12, 7}},
		},
		{
			name: "only the nodelay row",
			rows: []row{
				rowOf("python", "x + 1", modeJupyterPaddock, 1),
				rowOf("python", "x + 1", modeJupyterNoDelay, 8),
			},
			want: []want{{noDelay, 8, 7}},
		},
		{
			name: "no Paddock row",
			rows: []row{
				rowOf("python", "x + 1", modeJupyterNative, 48),
				rowOf("python", "x + 1", modeJupyterNoDelay, 7),
			},
		},
		{
			name: "no native row",
			rows: []row{rowOf("python", "x + 1", modeJupyterPaddock, 4)},
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
