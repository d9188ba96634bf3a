package hibernate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// state is what a measured session holds before it is hibernated, and
// the cell that reads it back after.
type state struct{ setup, check, want string }

// states are, per template, a session's state and its check: in Python a
// pandas DataFrame beside x (the template's pandas is imported by its
// warm-up), in Node a variable.
var states = map[string]state{
	"python": {setup: "import pandas as pd\ndf = pd.DataFrame({'v': range(100000)})\nx = 1", check: "x + int(df.v.iloc[-1] == 99999)", want: "2"},
	"node":   {setup: "var x = 1", check: "x + 1", want: "2"},
}

// pairRows are one template's rows for one mode: the pause, the resume by
// POST .../resume, the first cell after it, and a cell that wakes a
// hibernated session itself.
type pairRows struct{ pause, resume, first, wake stats.Row }

func newPairRows(template, mode string) pairRows {
	row := func(probe string) stats.Row { return stats.Row{Lang: template, Probe: probe, Mode: mode} }
	return pairRows{row(report.ProbePause), row(report.ProbeResume), row(report.ProbeFirstCell), row(report.ProbeWakeCell)}
}

func (p pairRows) all() []stats.Row { return []stats.Row{p.pause, p.resume, p.first, p.wake} }

// measurePairs opens a session of template on s, sets its state, then n+1
// times (the first not counted: first-use costs) pauses it, resumes it,
// times the first cell, pauses it again and lets a cell wake it. Every
// pause must leave an image and every wake must find the state. before,
// when set, runs before each round (a cold start of the same template,
// taken in turns with the rounds so that the machine's drift falls on
// both alike). The rows, image sizes and server resume times go to rows
// and h.
func measurePairs(ctx context.Context, s *server.Server, template string, n int, rows *pairRows, h *report.Hibernation, before func(i int) error) error {
	st, ok := states[template]
	if !ok {
		return fmt.Errorf("no session state for template %s", template)
	}
	in, _, err := create(ctx, s, template)
	if err != nil {
		return err
	}
	defer remove(ctx, s, in.ID)
	if _, _, err := execute(ctx, s, in.ID, st.setup); err != nil {
		return err
	}
	hibDir := filepath.Join(s.StateDir(), "hibernate")
	add := func(r *stats.Row, d time.Duration, counted bool) {
		r.Samples = append(r.Samples, stats.Sample{D: d, Counted: counted})
	}
	pause := func(counted bool) error {
		p, d, err := action(ctx, s, in.ID, "pause")
		if err != nil {
			return err
		}
		if p.State != "hibernated" || p.ImageBytes <= 0 {
			return fmt.Errorf("%s session %s after pause: state %q, image_bytes %d", template, in.ID, p.State, p.ImageBytes)
		}
		add(&rows.pause, d, counted)
		du, err := imageUsage(hibDir, in.ID)
		if err != nil {
			return err
		}
		if counted {
			h.ImageBytes, h.DiskBytes = append(h.ImageBytes, p.ImageBytes), append(h.DiskBytes, du)
		}
		return nil
	}
	check := func(c cell) error {
		if got := c.text(); got != st.want {
			return fmt.Errorf("%s session %s after waking: %q gave %q, want %q", template, in.ID, st.check, got, st.want)
		}
		return nil
	}
	for i := range n + 1 {
		if before != nil {
			if err := before(i); err != nil {
				return err
			}
		}
		counted := i > 0
		if err := pause(counted); err != nil {
			return err
		}
		r, d, err := action(ctx, s, in.ID, "resume")
		if err != nil {
			return err
		}
		if !r.Resumed || r.State != "idle" || r.Start != "wake" {
			return fmt.Errorf("%s session %s resume answered resumed %v, state %q, start %q", template, in.ID, r.Resumed, r.State, r.Start)
		}
		add(&rows.resume, d, counted)
		c, d, err := execute(ctx, s, in.ID, st.check)
		if err != nil {
			return err
		}
		if err := check(c); err != nil {
			return err
		}
		if c.Resumed {
			return fmt.Errorf("%s session %s: the first cell after a resume woke it again", template, in.ID)
		}
		add(&rows.first, d, counted)
		if err := pause(counted); err != nil {
			return err
		}
		c, d, err = execute(ctx, s, in.ID, st.check)
		if err != nil {
			return err
		}
		if err := check(c); err != nil {
			return err
		}
		if !c.Resumed || c.Timing.ResumeMS <= 0 {
			return fmt.Errorf("%s session %s: a cell on a hibernated session says resumed %v, resume_ms %v", template, in.ID, c.Resumed, c.Timing.ResumeMS)
		}
		add(&rows.wake, d, counted)
		if counted {
			h.ResumeMS = append(h.ResumeMS, r.ResumeMS, c.Timing.ResumeMS)
		}
	}
	return nil
}

// imageUsage is the disk that session id's newest image under dir takes:
// its images are named id-N, N counting its hibernations, and the one
// before may still be being removed.
func imageUsage(dir, id string) (int64, error) {
	name, err := newestImage(dir, id)
	if err != nil {
		return 0, err
	}
	return host.DiskUsage(filepath.Join(dir, name))
}

// newestImage is the name of session id's image under dir with the
// highest generation.
func newestImage(dir, id string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	best, gen := "", -1
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), id+"-")
		if !ok || !e.IsDir() {
			continue
		}
		if n, err := strconv.Atoi(rest); err == nil && n > gen {
			best, gen = e.Name(), n
		}
	}
	if best == "" {
		return "", fmt.Errorf("no image of session %s under %s", id, dir)
	}
	return best, nil
}
