package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

func testReport() Report {
	return Report{
		Rows: []stats.Row{
			{Lang: "python", Probe: "print(1)", Mode: stats.ModeNative, Samples: []stats.Sample{{D: 20 * time.Millisecond, Counted: true}}},
			{Lang: "python", Probe: "print(1)", Mode: stats.ModePool, Mismatches: 1, Samples: []stats.Sample{
				{D: 3500 * time.Microsecond, Start: "pool", Counted: true, Timing: &stats.Timing{QueueMS: 0.01, AcquireMS: 0.02, ExecMS: 2.5, TotalMS: 3}},
				{D: 150 * time.Millisecond, Start: "restore", Counted: false, Timing: &stats.Timing{StartMS: 120, TotalMS: 149}},
			}},
			{Lang: "node", Probe: "console.log(1)", Mode: stats.ModeRestore, Note: "n/a: not snapshotted"},
			{Lang: "node", Probe: "console.log(1)", Mode: stats.ModeRaw, Samples: []stats.Sample{
				{D: 400 * time.Millisecond, Counted: true, Delete: 50 * time.Millisecond},
				{D: 420 * time.Millisecond, Counted: true, Delete: 70 * time.Millisecond},
			}},
		},
		Throughput: []Throughput{{Lang: "python", Target: TargetPaddock, Concurrency: 2, Elapsed: 2 * time.Second, Runs: 3,
			Starts: map[string]int{"pool": 3}, Latencies: []time.Duration{100 * time.Millisecond, 110 * time.Millisecond, 120 * time.Millisecond}}},
		Memory: []MemRow{{Lang: "python", Start: "restore", Samples: []MemSample{{ID: "pd-0123456789abcdef", Usage: 30 << 20, RSS: 5 << 20, Shmem: 20 << 20}}}},
	}
}

func TestWriteCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, testReport()); err != nil {
		t.Fatal(err)
	}
	want := `metric,lang,probe,mode,i,value,unit,counted,start,sandbox_id,queue_ms,acquire_ms,start_ms,exec_ms,total_ms,runsc_delete_ms
latency,python,print(1),native rootfs,0,20,ms,true,,,,,,,,
latency,python,print(1),warm pool idle,0,3.5,ms,true,pool,,0.01,0.02,0,2.5,3,
latency,python,print(1),warm pool idle,1,150,ms,false,restore,,0,0,120,0,149,
latency,node,console.log(1),raw runsc run,0,400,ms,true,,,,,,,,50
latency,node,console.log(1),raw runsc run,1,420,ms,true,,,,,,,,70
throughput_run,python,print(1),paddock one-shot,0,100,ms,true,,,,,,,,
throughput_run,python,print(1),paddock one-shot,1,110,ms,true,,,,,,,,
throughput_run,python,print(1),paddock one-shot,2,120,ms,true,,,,,,,,
throughput_rate,python,print(1),paddock one-shot,0,1.5,runs/s,true,,,,,,,,
memory_usage,python,,idle pooled,0,30,MiB,true,restore,pd-0123456789abcdef,,,,,,
memory_rss,python,,idle pooled,0,5,MiB,true,restore,pd-0123456789abcdef,,,,,,
memory_shmem,python,,idle pooled,0,20,MiB,true,restore,pd-0123456789abcdef,,,,,,
`
	if got := buf.String(); got != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", got, want)
	}
	recs, err := csv.NewReader(strings.NewReader(buf.String())).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v", err)
	}
	for i, r := range recs {
		if len(r) != 16 {
			t.Errorf("record %d has %d fields, want 16", i, len(r))
		}
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := WriteJSON(&buf, testReport(), started, map[string]any{"cold": "5"}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Started string `json:"started"`
		Latency []struct {
			Mode       string   `json:"mode"`
			N          int      `json:"n"`
			P50MS      float64  `json:"p50_ms"`
			P99MS      *float64 `json:"p99_ms"`
			MaxMS      float64  `json:"max_ms"`
			Mismatches int      `json:"mismatches"`
			Note       string   `json:"note"`
			Samples    []struct {
				MS      float64 `json:"ms"`
				Counted bool    `json:"counted"`
			} `json:"samples"`
		} `json:"latency"`
		Throughput []struct {
			RunsPerSec float64 `json:"runs_per_s"`
		} `json:"throughput"`
		Memory []struct {
			MeanUsageMB float64 `json:"mean_usage_mib"`
		} `json:"memory"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("the JSON does not parse: %v\n%s", err, buf.String())
	}
	if got.Started != "2026-01-02T03:04:05Z" {
		t.Errorf("started = %q", got.Started)
	}
	if len(got.Latency) != 4 {
		t.Fatalf("%d latency rows, want 4", len(got.Latency))
	}
	pool := got.Latency[1]
	if pool.Mode != "warm pool idle" || pool.N != 1 || pool.P50MS != 3.5 || pool.MaxMS != 3.5 || pool.P99MS != nil ||
		pool.Mismatches != 1 || len(pool.Samples) != 2 || pool.Samples[1].Counted {
		t.Errorf("warm pool row = %+v", pool)
	}
	raw := got.Latency[3]
	if raw.Mode != "raw runsc run" || raw.N != 2 || raw.P50MS != 420 || raw.MaxMS != 420 || raw.P99MS != nil ||
		raw.Note != "incl. runsc delete p50 70.00 ms" {
		t.Errorf("raw runsc row = %+v", raw)
	}
	if len(got.Throughput) != 1 || got.Throughput[0].RunsPerSec != 1.5 {
		t.Errorf("throughput = %+v", got.Throughput)
	}
	if len(got.Memory) != 1 || got.Memory[0].MeanUsageMB != 30 {
		t.Errorf("memory = %+v", got.Memory)
	}
}

func TestWriteFileCreatesDirectoryAndSkipsEmptyPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out", "x.txt")
	if err := WriteFile(path, func(w io.Writer) error { _, err := w.Write([]byte("hi")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "hi" {
		t.Errorf("read back %q, %v", b, err)
	}
	if err := WriteFile("", func(io.Writer) error { t.Error("rendered for an empty path"); return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestPrintShowsP99OnlyFrom100Samples(t *testing.T) {
	hundred := stats.Row{Lang: "python", Probe: "x + 1", Mode: stats.ModeSession}
	for i := 1; i <= 100; i++ {
		hundred.Samples = append(hundred.Samples, stats.Sample{D: time.Duration(i) * time.Millisecond, Counted: true})
	}
	few := rowOf("python", "print(1)", stats.ModeBusy, 4, 9, 2)
	few.Samples[2].Start, few.Samples[1].Start, few.Samples[0].Start = "pool", "restore", "pool"
	rep := Report{Rows: []stats.Row{few, hundred}, Throughput: []Throughput{{Lang: "python", Target: TargetRawRestore, Concurrency: 2,
		Elapsed: time.Second, Runs: 2, Latencies: []time.Duration{300 * time.Millisecond, 500 * time.Millisecond}}}}
	var buf bytes.Buffer
	rep.Print(&buf)
	lines := strings.Split(buf.String(), "\n")
	line := func(prefix string) []string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return strings.Fields(l)
			}
		}
		t.Fatalf("no line starts with %q in\n%s", prefix, buf.String())
		return nil
	}
	// lang, probe (one word), mode (three words), n, p50, then the upper end.
	if f := line("python  print(1)"); f[5] != "3" || f[6] != "4.00" || f[7] != "max" || f[8] != "9.00" || !strings.Contains(strings.Join(f, " "), "starts pool×2 restore×1") {
		t.Errorf("3-sample row: %q", f)
	}
	// lang, probe (three words), mode, n, p50, p99.
	if f := line("python  x + 1"); f[5] != "100" || f[6] != "51.00" || f[7] != "99.00" {
		t.Errorf("100-sample row: %q", f)
	}
	if f := line("python  raw runsc restore+delete"); f[8] != "500.00" || f[9] != "max" || f[10] != "500.00" {
		t.Errorf("throughput row: %q", f)
	}
}
