package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// WriteFile writes what render produces to path, creating its directory.
// An empty path writes nothing.
func WriteFile(path string, render func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

type jsonSample struct {
	MS       float64       `json:"ms"`
	Start    string        `json:"start,omitempty"`
	Counted  bool          `json:"counted"`
	Timing   *stats.Timing `json:"server_timing,omitempty"`
	DeleteMS float64       `json:"runsc_delete_ms,omitempty"`
}

type jsonRow struct {
	Lang       string       `json:"lang"`
	Probe      string       `json:"probe"`
	Mode       string       `json:"mode"`
	N          int          `json:"n"`
	P50MS      float64      `json:"p50_ms"`
	P99MS      *float64     `json:"p99_ms,omitempty"` // only from 100 samples on
	MaxMS      float64      `json:"max_ms"`
	Mismatches int          `json:"mismatches"`
	Note       string       `json:"note,omitempty"`
	Samples    []jsonSample `json:"samples"`
}

type jsonThroughput struct {
	Lang        string         `json:"lang"`
	Target      string         `json:"target"`
	Concurrency int            `json:"concurrency"`
	Seconds     float64        `json:"seconds"`
	Runs        int            `json:"runs"`
	RunsPerSec  float64        `json:"runs_per_s"`
	Busy        int            `json:"busy"`
	Starts      map[string]int `json:"starts,omitempty"`
	Made        map[string]int `json:"sandboxes_made,omitempty"`
	LatencyMS   []float64      `json:"latency_ms"`
}

type jsonMemory struct {
	Lang        string      `json:"lang"`
	Server      string      `json:"server"`
	Start       string      `json:"start"`
	MeanUsageMB float64     `json:"mean_usage_mib"`
	MeanRSSMB   float64     `json:"mean_rss_mib"`
	Note        string      `json:"note,omitempty"`
	Sandboxes   []MemSample `json:"sandboxes"`
}

type jsonReport struct {
	Started    time.Time        `json:"started"`
	Options    map[string]any   `json:"options"`
	Latency    []jsonRow        `json:"latency"`
	Throughput []jsonThroughput `json:"throughput"`
	Memory     []jsonMemory     `json:"memory"`
	Doors      []jsonDoor       `json:"doors"`
	MemoryNote string           `json:"memory_note,omitempty"`
	Headline   []headline       `json:"headline"`
	// ServerMetrics are each server's pool gauges and counters at its end.
	ServerMetrics map[string][]string `json:"server_pool_metrics,omitempty"`
	// Steady are the steady-state phase's points.
	Steady []jsonSteadyPoint `json:"steady,omitempty"`
	// NativeRSS is each template's interpreter's memory outside gVisor.
	NativeRSS []NativeRSS `json:"native_rss,omitempty"`
	// Store are the history phase's servers' store counters.
	Store []StoreMetrics `json:"server_store_metrics,omitempty"`
	// Hibernation and Capacity are the hibernation phase's images and
	// sessions held at once.
	Hibernation []Hibernation `json:"hibernation,omitempty"`
	Capacity    []Capacity    `json:"session_capacity,omitempty"`
	SessionTail []SessionTail `json:"session_tail,omitempty"`
	Egress      *Egress       `json:"egress,omitempty"`
	Gateway     *Gateway      `json:"gateway,omitempty"`
}

// WriteJSON writes the whole report with every raw sample.
func WriteJSON(w io.Writer, rep Report, started time.Time, opts map[string]any) error {
	out := jsonReport{Started: started.UTC(), Options: opts, MemoryNote: rep.MemoryNote,
		Latency: []jsonRow{}, Throughput: []jsonThroughput{}, Memory: []jsonMemory{},
		Headline: rep.headlines(), Store: rep.Store, NativeRSS: rep.NativeRSS, ServerMetrics: rep.ServerMetrics, Doors: jsonDoors(rep.Doors),
		Steady: jsonSteady(rep.Steady), Hibernation: rep.Hibernation, Capacity: rep.Capacity, SessionTail: rep.SessionTail, Egress: rep.Egress, Gateway: rep.Gateway}
	for _, r := range rep.Rows {
		c := r.Counted()
		jr := jsonRow{Lang: r.Lang, Probe: r.Probe, Mode: r.Mode, N: len(c), P50MS: stats.MS(r.P50()), MaxMS: stats.MS(stats.Percentile(c, 1)),
			Mismatches: r.Mismatches, Note: rowNote(r), Samples: []jsonSample{}}
		if label, d := stats.Upper(c); label == "p99" {
			v := stats.MS(d)
			jr.P99MS = &v
		}
		for _, s := range r.Samples {
			jr.Samples = append(jr.Samples, jsonSample{MS: stats.MS(s.D), Start: s.Start, Counted: s.Counted, Timing: s.Timing, DeleteMS: stats.MS(s.Delete)})
		}
		out.Latency = append(out.Latency, jr)
	}
	for _, t := range rep.Throughput {
		jt := jsonThroughput{Lang: t.Lang, Target: t.Target, Concurrency: t.Concurrency, Seconds: t.Elapsed.Seconds(),
			Runs: t.Runs, RunsPerSec: t.Rate(), Busy: t.Busy, Starts: t.Starts, Made: t.Made, LatencyMS: []float64{}}
		for _, d := range t.Latencies {
			jt.LatencyMS = append(jt.LatencyMS, stats.MS(d))
		}
		out.Throughput = append(out.Throughput, jt)
	}
	for _, m := range rep.Memory {
		out.Memory = append(out.Memory, jsonMemory{Lang: m.Lang, Server: m.Server, Start: m.Start, Note: m.Note, Sandboxes: m.Samples,
			MeanUsageMB: m.MeanMB(func(s MemSample) uint64 { return s.Usage }),
			MeanRSSMB:   m.MeanMB(func(s MemSample) uint64 { return s.RSS })})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// csvHeader is the CSV's one schema for every kind of raw sample: a
// latency, a throughput run and its rate, a sandbox's memory.
var csvHeader = []string{"metric", "lang", "probe", "mode", "i", "value", "unit", "counted", "start", "sandbox_id",
	"queue_ms", "acquire_ms", "start_ms", "exec_ms", "total_ms", "runsc_delete_ms"}

// WriteCSV writes one line per raw sample.
func WriteCSV(w io.Writer, rep Report) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(csvHeader)
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	line := func(metric, lang, probe, mode string, i int, value float64, unit string, counted bool, start, id string, t *stats.Timing, del time.Duration) {
		rec := []string{metric, lang, probe, mode, strconv.Itoa(i), num(value), unit, strconv.FormatBool(counted), start, id, "", "", "", "", "", ""}
		if t != nil {
			rec[10], rec[11], rec[12], rec[13], rec[14] = num(t.QueueMS), num(t.AcquireMS), num(t.StartMS), num(t.ExecMS), num(t.TotalMS)
		}
		if del > 0 {
			rec[15] = num(stats.MS(del))
		}
		_ = cw.Write(rec)
	}
	for _, r := range rep.Rows {
		for i, s := range r.Samples {
			line("latency", r.Lang, r.Probe, r.Mode, i, stats.MS(s.D), "ms", s.Counted, s.Start, "", s.Timing, s.Delete)
		}
	}
	for _, t := range rep.Throughput {
		probe := ""
		if l, ok := langs.ByName(t.Lang); ok {
			probe = l.Probes[0].Name
		}
		for i, d := range t.Latencies {
			line("throughput_run", t.Lang, probe, t.Target, i, stats.MS(d), "ms", true, "", "", nil, 0)
		}
		line("throughput_rate", t.Lang, probe, t.Target, 0, t.Rate(), "runs/s", true, "", "", nil, 0)
	}
	for _, m := range rep.Memory {
		mode := "idle pooled"
		if m.Server != "" {
			mode += " on " + m.Server
		}
		for i, s := range m.Samples {
			line("memory_usage", m.Lang, "", mode, i, float64(s.Usage)/MiB, "MiB", true, m.Start, s.ID, nil, 0)
			line("memory_rss", m.Lang, "", mode, i, float64(s.RSS)/MiB, "MiB", true, m.Start, s.ID, nil, 0)
			line("memory_shmem", m.Lang, "", mode, i, float64(s.Shmem)/MiB, "MiB", true, m.Start, s.ID, nil, 0)
		}
	}
	cw.Flush()
	return cw.Error()
}
