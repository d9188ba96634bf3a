package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// The targets the steady phase checks (docs/architecture.md).
const (
	targetRawRatio  = 2.0 // Paddock runs/s ≥ 2× raw runsc run + delete at the same clients
	targetCPUPerRun = 0.3 // ≤ 0.3 host CPU-seconds per run
	targetPeakShare = 0.9 // runs/s at 16 clients ≥ 0.9× the template's own peak
	peakClients     = 16
)

// steadyVerdict is a point's comparison with raw and the targets.
type steadyVerdict struct {
	Template     string
	Clients      int
	Paddock, Raw *SteadyPoint
	RawRatio     float64 // Paddock ÷ raw runs/s; 0 without raw
	// Empty is the empty-sandbox point of the same template and clients,
	// when measured; Ceiling is its runs/s ÷ raw's: the most any design
	// that makes one sandbox per run could reach against raw.
	Empty          *SteadyPoint
	Ceiling        float64
	CPUPerRun      float64 // Paddock's machine CPU-s per run
	PeakShare      float64 // runs/s ÷ the template's peak; only at peakClients
	MeetsRaw       bool
	MeetsCPU       bool
	MeetsPeak      bool
	HasRaw, AtPeak bool
}

// steadyVerdicts pairs each Paddock point with the raw point of the same
// template and clients, and checks the targets.
func steadyVerdicts(points []SteadyPoint) []steadyVerdict {
	peak := map[string]float64{}
	for _, p := range points {
		if p.Target == TargetPaddock {
			peak[p.Template] = max(peak[p.Template], p.T.Rate())
		}
	}
	var out []steadyVerdict
	for i := range points {
		p := &points[i]
		if p.Target != TargetPaddock {
			continue
		}
		v := steadyVerdict{Template: p.Template, Clients: p.Clients, Paddock: p}
		v.CPUPerRun = p.CPU.machinePerRun(p.T.Runs)
		v.MeetsCPU = p.T.Runs > 0 && v.CPUPerRun <= targetCPUPerRun
		for j := range points {
			r := &points[j]
			if r.Target == TargetRaw && r.Template == p.Template && r.Clients == p.Clients {
				v.Raw, v.HasRaw = r, true
				if r.T.Rate() > 0 {
					v.RawRatio = p.T.Rate() / r.T.Rate()
				}
				v.MeetsRaw = v.RawRatio >= targetRawRatio
			}
			if r.Target == TargetEmpty && r.Template == p.Template && r.Clients == p.Clients {
				v.Empty = r
			}
		}
		if v.Empty != nil && v.HasRaw && v.Raw.T.Rate() > 0 {
			v.Ceiling = v.Empty.T.Rate() / v.Raw.T.Rate()
		}
		if p.Clients == peakClients && peak[p.Template] > 0 {
			v.AtPeak = true
			v.PeakShare = p.T.Rate() / peak[p.Template]
			v.MeetsPeak = v.PeakShare >= targetPeakShare
		}
		out = append(out, v)
	}
	return out
}

func meets(ok bool) string {
	if ok {
		return "meets"
	}
	return "misses"
}

// Summary is the point on one line, for the progress log.
func (p SteadyPoint) Summary() string {
	label, up := p.P99()
	return fmt.Sprintf("%s %s %d clients: %.2f runs/s, p50 %s, %s %s, %d ok, %d busy, %d errors, %.2f CPU-s/run (machine), %.2f (attributed), load %s → %s",
		p.Template, p.Target, p.Clients, p.T.Rate(), stats.Secs(p.P50()), label, stats.Secs(up), p.T.Runs, p.T.Busy, p.T.Errors,
		p.CPU.machinePerRun(p.T.Runs), p.CPU.attributedPerRun(p.Target, p.T.Runs), p.LoadBefore, p.LoadAfter)
}

// PrintSteady writes the points and the verdicts as tables.
func PrintSteady(w io.Writer, points []SteadyPoint) {
	if len(points) == 0 {
		return
	}
	fmt.Fprintln(w, "\n== steady state: closed-loop one-shot `print(i)` stream, server as `make run` ships it, beside raw `runsc run` + delete (same limits) and empty sandboxes ==")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "template\ttarget\tclients\tsecs\truns/s\tp50\tp99\tp50 waited\tp99 waited\tok\t429\t503\terrors\tstarved\tCPU-s/run machine\tCPU-s/run attributed\tstarts\tmade\tload before\tload after\t")
	for _, p := range points {
		upperText := func(label string, d time.Duration) string {
			if label != "p99" {
				return stats.Secs(d) + " (max)"
			}
			return stats.Secs(d)
		}
		starts, made := "-", "-"
		if p.Target == TargetPaddock {
			starts, made = stats.CountList(p.T.Starts), stats.CountList(p.T.Made)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%.2f\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%.3f\t%.3f\t%s\t%s\t%s\t%s\t\n",
			p.Template, ShortTarget(p.Target), p.Clients, p.T.Elapsed.Seconds(), p.T.Rate(), stats.Secs(p.P50()), upperText(p.P99()),
			stats.Secs(p.waitedP50()), upperText(p.waitedP99()),
			p.T.Runs, p.T.BusyByStatus[429], p.T.BusyByStatus[503], p.T.Errors, starvedText(p.T),
			p.CPU.machinePerRun(p.T.Runs), p.CPU.attributedPerRun(p.Target, p.T.Runs), starts, made, p.LoadBefore, p.LoadAfter)
	}
	tw.Flush()
	fmt.Fprintln(w, "p50/p99: each answered request; waited: what each run cost its client from its first attempt, through 429/503 answers and the Retry-After pauses they asked for.")
	fmt.Fprintln(w, "starved: clients that got no run answered in the whole point, and the longest a client was still being refused when the point ended; waited counts answered runs only, so it cannot show them.")
	fmt.Fprintln(w, "CPU-s/run machine: /proc/stat busy time of all CPUs over the point less the bench's own (RUSAGE_SELF), ÷ runs; includes other work on a shared machine (see load).")
	fmt.Fprintln(w, "starts: how the server started the answered runs' sandboxes (pool hit, restore or cold start on the request path); made: the sandboxes it made meanwhile (restores, cold starts), refills included.")
	fmt.Fprintln(w, "CPU-s/run attributed: paddock = server process + reaped children (/proc/pid/stat) + its sandbox cgroups' cpuacct (polled every 100 ms: a lower bound); raw and empty = the bench's reaped runsc processes (RUSAGE_CHILDREN).")
	fmt.Fprintln(w, "empty: raw `runsc run` + delete of /bin/true under the template's limits, at the highest client count: a sandbox that runs nothing, the ceiling of any design that makes one sandbox per run once the CPUs are saturated.")
	shared := map[string]string{}
	for _, p := range points {
		if p.RawOf != "" && shared[p.Template] == "" {
			shared[p.Template] = p.RawOf
			fmt.Fprintf(w, "raw and empty rows of %s are those of %s: the same interpreter under the same limits, measured once.\n", p.Template, p.RawOf)
		}
	}
	for _, p := range points {
		if p.T.FirstError != "" {
			fmt.Fprintf(w, "first error, %s %s %d clients: %s\n", p.Template, ShortTarget(p.Target), p.Clients, p.T.FirstError)
		}
	}

	fmt.Fprintln(w, "\n== steady state against the targets (docs/architecture.md: ≥ 2× raw, ≤ 0.3 host CPU-s per run, ≥ 0.9× own peak at 16 clients) ==")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "template\tclients\tpaddock runs/s\traw runs/s\tpaddock ÷ raw\t≥ 2× raw\tempty runs/s\tceiling: empty ÷ raw\tp50 ÷ raw p50\tCPU-s/run\t≤ 0.3\t÷ own peak\t≥ 0.9× peak\t")
	for _, v := range steadyVerdicts(points) {
		raw, ratio, rawOK, latRatio := "-", "-", "-", "-"
		if v.HasRaw {
			raw = fmt.Sprintf("%.2f", v.Raw.T.Rate())
			ratio = fmt.Sprintf("%.2f×", v.RawRatio)
			rawOK = meets(v.MeetsRaw)
			if r, ok := stats.FloatRatio(v.Paddock.P50().Seconds(), v.Raw.P50().Seconds()); ok {
				latRatio = fmt.Sprintf("%.2f×", r)
			}
		}
		empty, ceiling := "-", "-"
		if v.Empty != nil {
			empty = fmt.Sprintf("%.2f", v.Empty.T.Rate())
			if v.Ceiling > 0 {
				ceiling = fmt.Sprintf("%.2f×", v.Ceiling)
			}
		}
		share, peakOK := "-", "-"
		if v.AtPeak {
			share, peakOK = fmt.Sprintf("%.2f", v.PeakShare), meets(v.MeetsPeak)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%s\t%s\t%s\t\n", v.Template, v.Clients, v.Paddock.T.Rate(), raw, ratio, rawOK,
			empty, ceiling, latRatio, v.CPUPerRun, meets(v.MeetsCPU), share, peakOK)
	}
	tw.Flush()
	fmt.Fprintln(w, "ceiling: the empty sandbox's rate ÷ raw's, at the highest client count. Where those clients keep every CPU busy (16 do here), each run's sandbox takes CPU another run needs, and Paddock makes and destroys one sandbox per run with the same runsc commands: unless its sandbox costs less than one that runs nothing, Paddock ÷ raw stays below this. With fewer clients the pool makes sandboxes on CPU the clients leave idle, and Paddock can pass it.")
}

// starvedText is the starved column: the clients with no answered run,
// and the oldest attempt still refused at the end.
func starvedText(t Throughput) string {
	oldest := time.Duration(0)
	for _, d := range t.Unanswered {
		oldest = max(oldest, d)
	}
	if t.Starved == 0 && oldest == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (oldest %s)", t.Starved, stats.Secs(oldest))
}

// ShortTarget is a target's name in the steady tables: paddock, raw or
// empty.
func ShortTarget(t string) string {
	switch t {
	case TargetRaw:
		return "raw"
	case TargetEmpty:
		return "empty"
	}
	return "paddock"
}

var steadyCSVHeader = []string{"template", "language", "target", "clients", "elapsed_s", "runs", "runs_per_s", "p50_s", "p99_s", "p99_is_max",
	"busy_429", "busy_503", "errors", "cpu_machine_s", "cpu_bench_s", "cpu_children_s", "cpu_server_s", "cpu_sandboxes_s",
	"cpu_s_per_run_machine", "cpu_s_per_run_attributed", "load_before", "load_after", "paddock_over_raw", "meets_2x_raw",
	"meets_cpu_0.3", "share_of_peak", "meets_0.9_peak", "waited_p50_s", "waited_p99_s", "empty_over_raw"}

// WriteSteadyCSV writes one row per point; the target columns are filled
// on Paddock's rows.
func WriteSteadyCSV(w io.Writer, points []SteadyPoint) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(steadyCSVHeader)
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	vs := steadyVerdicts(points)
	for _, p := range points {
		label, up := p.P99()
		rec := []string{p.Template, p.Language, ShortTarget(p.Target), strconv.Itoa(p.Clients), num(p.T.Elapsed.Seconds()),
			strconv.Itoa(p.T.Runs), num(p.T.Rate()), num(p.P50().Seconds()), num(up.Seconds()), strconv.FormatBool(label != "p99"),
			strconv.Itoa(p.T.BusyByStatus[429]), strconv.Itoa(p.T.BusyByStatus[503]), strconv.Itoa(p.T.Errors),
			num(p.CPU.Machine), num(p.CPU.Bench), num(p.CPU.Children), num(p.CPU.Server), num(p.CPU.Sandboxes),
			num(p.CPU.machinePerRun(p.T.Runs)), num(p.CPU.attributedPerRun(p.Target, p.T.Runs)), p.LoadBefore, p.LoadAfter,
			"", "", "", "", ""}
		_, waited99 := p.waitedP99()
		rec = append(rec, num(p.waitedP50().Seconds()), num(waited99.Seconds()), "")
		for _, v := range vs {
			if p.Target != TargetPaddock || v.Template != p.Template || v.Clients != p.Clients {
				continue
			}
			if v.HasRaw {
				rec[22], rec[23] = num(v.RawRatio), strconv.FormatBool(v.MeetsRaw)
			}
			rec[24] = strconv.FormatBool(v.MeetsCPU)
			if v.AtPeak {
				rec[25], rec[26] = num(v.PeakShare), strconv.FormatBool(v.MeetsPeak)
			}
			if v.Ceiling > 0 {
				rec[29] = num(v.Ceiling)
			}
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// SteadyTitle names the chart.
func SteadyTitle(started string, points []SteadyPoint) string {
	var ts []string
	for _, p := range points {
		if !slices.Contains(ts, p.Template) {
			ts = append(ts, p.Template)
		}
	}
	return fmt.Sprintf("Paddock steady state, %s: %s", started, strings.Join(ts, ", "))
}

// jsonSteadyPoint is a steady point in the JSON report, every latency
// included.
type jsonSteadyPoint struct {
	Template            string         `json:"template"`
	Language            string         `json:"language"`
	Target              string         `json:"target"`
	Clients             int            `json:"clients"`
	ElapsedS            float64        `json:"elapsed_s"`
	Runs                int            `json:"runs"`
	RunsPerS            float64        `json:"runs_per_s"`
	P50MS               float64        `json:"p50_ms"`
	P99MS               float64        `json:"p99_ms"`
	P99IsMax            bool           `json:"p99_is_max,omitempty"`
	Busy                map[int]int    `json:"busy_by_status,omitempty"`
	Errors              int            `json:"errors"`
	StarvedClients      int            `json:"starved_clients"`
	UnansweredMS        []float64      `json:"unanswered_ms,omitempty"`
	FirstError          string         `json:"first_error,omitempty"`
	Starts              map[string]int `json:"starts,omitempty"`
	Made                map[string]int `json:"sandboxes_made,omitempty"`
	CPU                 jsonCPU        `json:"cpu_s"`
	CPUPerRunMachine    float64        `json:"cpu_s_per_run_machine"`
	CPUPerRunAttributed float64        `json:"cpu_s_per_run_attributed"`
	LoadBefore          string         `json:"load_before"`
	LoadAfter           string         `json:"load_after"`
	LatenciesMS         []float64      `json:"latencies_ms"`
}

type jsonCPU struct {
	Machine   float64 `json:"machine"`
	Bench     float64 `json:"bench"`
	Children  float64 `json:"children"`
	Server    float64 `json:"server"`
	Sandboxes float64 `json:"sandboxes"`
	Wall      float64 `json:"wall"`
}

func jsonSteady(points []SteadyPoint) []jsonSteadyPoint {
	var out []jsonSteadyPoint
	for _, p := range points {
		label, up := p.P99()
		j := jsonSteadyPoint{Template: p.Template, Language: p.Language, Target: ShortTarget(p.Target), Clients: p.Clients,
			ElapsedS: p.T.Elapsed.Seconds(), Runs: p.T.Runs, RunsPerS: p.T.Rate(), P50MS: stats.MS(p.P50()), P99MS: stats.MS(up),
			P99IsMax: label != "p99", Busy: p.T.BusyByStatus, Errors: p.T.Errors, FirstError: p.T.FirstError, Starts: p.T.Starts, Made: p.T.Made,
			CPU:              jsonCPU(p.CPU),
			CPUPerRunMachine: p.CPU.machinePerRun(p.T.Runs), CPUPerRunAttributed: p.CPU.attributedPerRun(p.Target, p.T.Runs),
			LoadBefore: p.LoadBefore, LoadAfter: p.LoadAfter, LatenciesMS: []float64{}}
		for _, d := range p.T.Latencies {
			j.LatenciesMS = append(j.LatenciesMS, stats.MS(d))
		}
		j.StarvedClients = p.T.Starved
		for _, d := range p.T.Unanswered {
			j.UnansweredMS = append(j.UnansweredMS, stats.MS(d))
		}
		out = append(out, j)
	}
	return out
}

// SteadyPoint is one client count of one template on one target.
type SteadyPoint struct {
	Template, Language string
	Target             string // targetPaddock, targetRaw or targetEmpty
	Clients            int
	T                  Throughput
	CPU                CPUUsage
	// LoadBefore and LoadAfter are /proc/loadavg around the point: the
	// machine is shared, and other work shows there.
	LoadBefore, LoadAfter string
	// RawOf, on a raw point, names the template whose raw point this is
	// a copy of: templates of one language run the same interpreter under
	// the same limits raw, so it is measured once.
	RawOf string `json:",omitempty"`
}

// P50 is the point's median latency.
func (p SteadyPoint) P50() time.Duration { return stats.Percentile(p.T.Latencies, 0.5) }

// P99 is the point's p99, or its maximum below 100 runs (label says which).
func (p SteadyPoint) P99() (label string, d time.Duration) { return stats.Upper(p.T.Latencies) }

// waitedP50 and waitedP99 are of what runs cost their clients, busy
// answers and the pauses they asked for included.
func (p SteadyPoint) waitedP50() time.Duration { return stats.Percentile(p.T.Waited, 0.5) }

func (p SteadyPoint) waitedP99() (label string, d time.Duration) { return stats.Upper(p.T.Waited) }

// SteadyThroughput is what the phase measured as the throughput rows the
// headlines read: the points at clients of the templates named like their
// language.
func SteadyThroughput(points []SteadyPoint, clients int) []Throughput {
	var out []Throughput
	for _, p := range points {
		if p.Clients == clients && p.Template == p.Language {
			out = append(out, p.T)
		}
	}
	return out
}

// CPUUsage is host CPU in seconds over one measurement.
type CPUUsage struct {
	Machine   float64 // /proc/stat busy time, all CPUs
	Bench     float64 // the bench process itself (RUSAGE_SELF)
	Children  float64 // the bench's reaped children (RUSAGE_CHILDREN)
	Server    float64 // the server and its reaped children
	Sandboxes float64 // the server's sandbox cgroups (lower bound)
	Wall      float64 // the window's wall time
}

// machinePerRun is the machine's busy time less the bench's, per run.
func (u CPUUsage) machinePerRun(runs int) float64 {
	if runs == 0 {
		return 0
	}
	return max(u.Machine-u.Bench, 0) / float64(runs)
}

// attributedPerRun is the CPU the measured processes account for, per
// run: the server and its sandboxes for Paddock, the reaped runsc
// processes for raw runs.
func (u CPUUsage) attributedPerRun(target string, runs int) float64 {
	if runs == 0 {
		return 0
	}
	if target == TargetRaw || target == TargetEmpty {
		return u.Children / float64(runs)
	}
	return (u.Server + u.Sandboxes) / float64(runs)
}
