package report

import (
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// Session hibernation (issue 29): a session paused to disk
// (POST /v1/sessions/{id}/pause) and woken (POST .../resume, or by its
// next cell), timed per template on an idle server and beside a session
// running a busy loop; the resume against the same template's cold
// session start measured in the same run.
const (
	ModeHibernateIdle = "hibernation, idle server"
	ModeHibernateBusy = "hibernation, a busy session beside"
	ModeSessionCold   = "session, cold (no pool, no snapshots)"

	ProbePause     = "pause (hibernate)"
	ProbeResume    = "resume"
	ProbeFirstCell = "first cell after resume"
	ProbeWakeCell  = "cell that wakes it"
	ProbeColdStart = "create → first result"
	// ProbeColdState is a cold session brought to the state the
	// hibernated sessions hold (Python: pandas imported, a DataFrame
	// made), read back: what a resume saves. A sandbox booted on the
	// request path skips its template's warm-up, so the bare first result
	// is of an interpreter that has imported nothing.
	ProbeColdState = "create → its state set → first result"

	// resumeColdAim is the resume's aim as a share of a cold session
	// start, and resumeAimMS the aim in time.
	resumeColdAim = 0.5
	resumeAimMS   = 200
)

// HibernateTemplates are the templates the hibernation phase measures:
// the pandas-ready Python and Node.
var HibernateTemplates = []string{"python", "node"}

// Hibernation is the disk one template's hibernated session took, per
// pause, and the server's own time of each resume.
type Hibernation struct {
	Template string `json:"template"`
	// ImageBytes is image_bytes from each pause's answer: the files of
	// the image as the server counted them.
	ImageBytes []int64 `json:"image_bytes"`
	// DiskBytes is the disk each image took (du of its directory).
	DiskBytes []int64 `json:"disk_bytes"`
	// ResumeMS is resume_ms from each resume's answer.
	ResumeMS []float64 `json:"server_resume_ms"`
}

// MeanImageMiB is the mean image_bytes in MiB; 0 without pauses.
func (h Hibernation) MeanImageMiB() float64 { return meanBytesMiB(h.ImageBytes) }

// MeanDiskMiB is the mean disk of an image in MiB; 0 without pauses.
func (h Hibernation) MeanDiskMiB() float64 { return meanBytesMiB(h.DiskBytes) }

func meanBytesMiB(v []int64) float64 {
	if len(v) == 0 {
		return 0
	}
	var sum float64
	for _, b := range v {
		sum += float64(b)
	}
	return sum / float64(len(v)) / MiB
}

// hibernateHeadlines are each template's resume against its cold session
// start brought to the same state (the aim: at most half of it), against
// the bare cold start, and against the 0.2 s aim, idle and beside a busy session, with
// the pause and the first cell after a resume shown beside them.
func hibernateHeadlines(rows []stats.Row) []headline {
	var out []headline
	for _, name := range HibernateTemplates {
		cold, okCold := stats.FindRow(rows, name, ProbeColdState, ModeSessionCold)
		bare, okBare := stats.FindRow(rows, name, ProbeColdStart, ModeSessionCold)
		for _, mode := range []string{ModeHibernateIdle, ModeHibernateBusy} {
			where := "idle"
			if mode == ModeHibernateBusy {
				where = "busy neighbour"
			}
			resume, ok := stats.FindRow(rows, name, ProbeResume, mode)
			if !ok {
				continue
			}
			if okCold {
				if v, ok := stats.Ratio(resume.P50(), cold.P50()); ok {
					out = append(out, newHeadline(fmt.Sprintf("%s resume p50 (%s) / cold session to its state p50", name, where), v, "x", true, resumeColdAim))
				}
			}
			if okBare {
				if v, ok := stats.Ratio(resume.P50(), bare.P50()); ok {
					out = append(out, untargeted(fmt.Sprintf("%s resume p50 (%s) / bare cold session start p50", name, where), v, "x"))
				}
			}
			out = append(out, newHeadline(fmt.Sprintf("%s resume p50 (%s)", name, where), stats.MS(resume.P50()), "ms", true, resumeAimMS))
			if pause, ok := stats.FindRow(rows, name, ProbePause, mode); ok {
				out = append(out, untargeted(fmt.Sprintf("%s pause p50 (%s)", name, where), stats.MS(pause.P50()), "ms"))
			}
			if first, ok := stats.FindRow(rows, name, ProbeFirstCell, mode); ok {
				out = append(out, untargeted(fmt.Sprintf("%s first cell after resume p50 (%s)", name, where), stats.MS(first.P50()), "ms"))
			}
		}
		idle, ok1 := stats.FindRow(rows, name, ProbeResume, ModeHibernateIdle)
		busy, ok2 := stats.FindRow(rows, name, ProbeResume, ModeHibernateBusy)
		if ok1 && ok2 {
			if v, ok := stats.Ratio(busy.P50(), idle.P50()); ok {
				out = append(out, untargeted(fmt.Sprintf("%s resume p50, busy neighbour / idle", name), v, "x"))
			}
		}
	}
	return out
}

// Capacity is how many sessions of one template one machine holds open:
// Sessions opened at once and read live, then all hibernated.
type Capacity struct {
	Template string `json:"template"`
	Sessions int    `json:"sessions"` // opened at once: the measured K
	// Live is each live session's sandbox memory (its cgroup).
	Live []MemSample `json:"live"`
	// The host's MemTotal, and MemAvailable before the sessions were
	// opened, with all of them live, and with all of them hibernated.
	MemTotal        uint64 `json:"mem_total_bytes"`
	AvailBefore     uint64 `json:"mem_available_before_bytes"`
	AvailLive       uint64 `json:"mem_available_live_bytes"`
	AvailHibernated uint64 `json:"mem_available_hibernated_bytes"`
	// LeftLive counts the server's sandboxes once all were hibernated.
	LeftLive int `json:"sandboxes_left_hibernated"`
	// ImageBytes is image_bytes from each pause's answer; DirBytes the du
	// of the hibernate directory holding them all; DiskFree the space left
	// on its file system before they were written.
	ImageBytes []int64 `json:"image_bytes"`
	DirBytes   int64   `json:"hibernate_dir_bytes"`
	DiskFree   uint64  `json:"disk_free_bytes"`
	// BudgetBytes is the server's --hibernate-budget-mb in bytes (0: none).
	BudgetBytes int64 `json:"hibernate_budget_bytes"`
	// MaxSessions is the server's --max-sessions; MoreCreated how many
	// more sessions it let open with all Sessions hibernated, and Refusal
	// the answer that stopped them.
	MaxSessions int    `json:"max_sessions"`
	MoreCreated int    `json:"more_created"`
	Refusal     string `json:"refusal"`
	// Open and Pause are how long opening and hibernating all took.
	Open  time.Duration `json:"open_ns"`
	Pause time.Duration `json:"pause_ns"`
}

// LiveMiB is the mean live session's sandbox memory (cgroup usage) in
// MiB.
func (c Capacity) LiveMiB() float64 {
	return meanMiB(c.Live, func(s MemSample) uint64 { return s.Usage })
}

// HostLiveMiB is the host's MemAvailable drop per live session in MiB:
// the sandboxes and whatever the host spends beside them.
func (c Capacity) HostLiveMiB() float64 { return c.perSession(c.AvailBefore, c.AvailLive) }

// HostHibernatedMiB is the same drop per session once all are
// hibernated (images in the page cache count as available).
func (c Capacity) HostHibernatedMiB() float64 { return c.perSession(c.AvailBefore, c.AvailHibernated) }

func (c Capacity) perSession(before, after uint64) float64 {
	if c.Sessions == 0 {
		return 0
	}
	return (float64(before) - float64(after)) / float64(c.Sessions) / MiB
}

// DiskMiB is the hibernate directory's disk per hibernated session in MiB.
func (c Capacity) DiskMiB() float64 {
	if c.Sessions == 0 {
		return 0
	}
	return float64(c.DirBytes) / float64(c.Sessions) / MiB
}

// LiveCeiling extrapolates the sessions the machine's memory holds live:
// MemTotal over the mean live cost; 0 when not measured.
func (c Capacity) LiveCeiling() int {
	if m := c.LiveMiB(); m > 0 {
		return int(float64(c.MemTotal) / MiB / m)
	}
	return 0
}

// DiskCeiling extrapolates the sessions the free disk holds hibernated:
// the free space over the disk per image; 0 when not measured.
func (c Capacity) DiskCeiling() int {
	if d := c.DiskMiB(); d > 0 {
		return int(float64(c.DiskFree) / MiB / d)
	}
	return 0
}

// BudgetCeiling is the hibernated sessions --hibernate-budget-mb keeps
// before it drops the oldest; 0 without a budget or an image.
func (c Capacity) BudgetCeiling() int {
	if m := meanBytesMiB(c.ImageBytes); m > 0 && c.BudgetBytes > 0 {
		return int(float64(c.BudgetBytes) / MiB / m)
	}
	return 0
}

// CountsHibernated says whether the hibernated sessions held slots of
// --max-sessions: with Sessions asleep, no more than MaxSessions-Sessions
// more could be opened.
func (c Capacity) CountsHibernated() bool {
	return c.MoreCreated <= c.MaxSessions-c.Sessions
}
