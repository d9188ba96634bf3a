package hibernate

import (
	"context"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// coldSample times a session's cold start on s (no pool, no snapshots)
// two ways, in one session: POST /v1/sessions then the first execute of
// `1+1` (first), and on to the measured sessions' state set and read back
// (state): a sandbox booted on the request path skips its template's
// warm-up, so a Python session is pandas-ready, as a woken one is, only
// once its cells have imported pandas. The delete after is not timed.
// The samples count only if the sandbox was booted on the request path.
func coldSample(ctx context.Context, s *server.Server, template string, counted bool) (first, state stats.Sample, err error) {
	st, ok := states[template]
	if !ok {
		return first, state, fmt.Errorf("no session state for template %s", template)
	}
	begin := time.Now()
	in, _, err := create(ctx, s, template)
	if err != nil {
		return first, state, err
	}
	defer remove(ctx, s, in.ID)
	c, _, err := execute(ctx, s, in.ID, "1+1")
	if err != nil {
		return first, state, err
	}
	if c.text() != "2" {
		return first, state, fmt.Errorf("%s cold session: 1+1 gave %q", template, c.text())
	}
	counted = counted && in.Start == "cold"
	first = stats.Sample{D: time.Since(begin), Start: in.Start, Counted: counted}
	if _, _, err := execute(ctx, s, in.ID, st.setup); err != nil {
		return first, state, err
	}
	if c, _, err = execute(ctx, s, in.ID, st.check); err != nil {
		return first, state, err
	}
	if c.text() != st.want {
		return first, state, fmt.Errorf("%s cold session: %q gave %q, want %q", template, st.check, c.text(), st.want)
	}
	state = stats.Sample{D: time.Since(begin), Start: in.Start, Counted: counted}
	return first, state, nil
}
