package report

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// PrintHibernation writes each template's image size and server resume
// time, then what the capacity measurement found and what it
// extrapolates.
func PrintHibernation(w io.Writer, hs []Hibernation, caps []Capacity) {
	if len(hs) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "template\tpauses\timage_bytes mean MiB\tdisk (du) mean MiB\tresumes\tserver resume_ms p50\tmax\t")
		for _, h := range hs {
			p50, top := floatP50Max(h.ResumeMS)
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%d\t%.1f\t%.1f\t\n", h.Template, len(h.ImageBytes), h.MeanImageMiB(), h.MeanDiskMiB(), len(h.ResumeMS), p50, top)
		}
		_ = tw.Flush()
		fmt.Fprintln(w, "the latency rows \"hibernation, …\" are the HTTP round trips; server resume_ms is the server's own time of each resume (image check, restore, kernel hand-over)")
	}
	for _, c := range caps {
		printCapacity(w, c)
	}
}

func printCapacity(w io.Writer, c Capacity) {
	gib := func(b uint64) float64 { return float64(b) / (1 << 30) }
	fmt.Fprintf(w, "\n%s sessions held at once: %d opened (took %s), then all hibernated (took %s)\n", c.Template, c.Sessions,
		c.Open.Round(100*time.Millisecond), c.Pause.Round(100*time.Millisecond))
	fmt.Fprintf(w, "  live:       %.1f MiB per session (sandbox cgroup usage, %d read; anon %.1f, shmem %.1f); host MemAvailable fell %.1f MiB per session (host-wide: other processes move it too)\n",
		c.LiveMiB(), len(c.Live), meanMiB(c.Live, func(s MemSample) uint64 { return s.RSS }), meanMiB(c.Live, func(s MemSample) uint64 { return s.Shmem }), c.HostLiveMiB())
	fmt.Fprintf(w, "  hibernated: %.1f MiB of disk per session (du of the hibernate dir / %d; image_bytes mean %.1f), %d sandboxes left in memory; host MemAvailable, against the start: %+.1f MiB per session still taken\n",
		c.DiskMiB(), c.Sessions, meanBytesMiB(c.ImageBytes), c.LeftLive, c.HostHibernatedMiB())
	fmt.Fprintf(w, "  extrapolated, not measured beyond %d sessions: live only, %.1f GiB of memory / %.1f MiB = %d sessions; hibernated, %.1f GiB of free disk / %.1f MiB = %d sessions",
		c.Sessions, gib(c.MemTotal), c.LiveMiB(), c.LiveCeiling(), gib(c.DiskFree), c.DiskMiB(), c.DiskCeiling())
	if n := c.BudgetCeiling(); n > 0 {
		fmt.Fprintf(w, ", of which --hibernate-budget-mb (%d MiB) keeps %d before dropping the oldest", c.BudgetBytes>>20, n)
	}
	fmt.Fprintln(w, " (the live figure leaves out the server, the host and what cells allocate; a session may grow to its template's memory limit)")
	verdict := "counts hibernated sessions"
	if !c.CountsHibernated() {
		verdict = "does not count hibernated sessions"
	}
	fmt.Fprintf(w, "  limit: --max-sessions %s: with %d hibernated and --max-sessions=%d, %d more opened, then %s; open sessions, live or hibernated, stop at --max-sessions (64 by default; each tenant's at --tenant-max-sessions, 8)\n",
		verdict, c.Sessions, c.MaxSessions, c.MoreCreated, c.Refusal)
	fmt.Fprintln(w, "  raise the measured count with --hibernate-sessions (it opens that many at once; disk and memory as above)")
}

// floatP50Max is the nearest-rank median and the maximum of v; 0, 0 for
// none.
func floatP50Max(v []float64) (float64, float64) {
	if len(v) == 0 {
		return 0, 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)-1]
}
