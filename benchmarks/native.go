package main

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

// nativeRow times n starts of the unsandboxed interpreter running p: the
// baseline every sandboxed row is a multiple of.
func nativeRow(ctx context.Context, l lang, p probe, n int) (row, error) {
	r := row{Lang: l.name, Probe: p.name, Mode: modeNative}
	argv := append(append([]string(nil), l.native...), p.code)
	for range n {
		start := time.Now()
		out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
		d := time.Since(start)
		if err != nil || !p.ok(string(out)) {
			return r, fmt.Errorf("native %s %s: %v: %q", l.name, p.name, err, out)
		}
		r.Samples = append(r.Samples, sample{D: d, Counted: true})
	}
	return r, nil
}
