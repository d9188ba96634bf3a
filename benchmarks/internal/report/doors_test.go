package report

import (
	"strings"
	"testing"
	"time"
)

func TestPrintDoors(t *testing.T) {
	ms := func(v ...float64) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x*float64(time.Millisecond)))
		}
		return out
	}
	var b strings.Builder
	printDoors(&b, []DoorRow{
		{Door: "mcp", Op: "run_code print(1)", Lang: "python", V1: ms(10, 20, 30), Via: ms(11, 21, 31)},
		{Door: "mcp", Op: "execute, no such session", Lang: "-", V1: ms(0.2, 0.2, 0.2), Via: ms(0.5, 0.5, 0.5), Bare: true},
	})
	want := "door  operation                 lang    n  /v1 p50 ms  door p50 ms  difference ms  ratio\n" +
		"mcp   run_code print(1)         python  3  20.00       21.00        +1.00          1.050× (aim ≤ 1.05×)\n" +
		"mcp   execute, no such session  -       3  0.20        0.50         +0.30          2.500×\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
