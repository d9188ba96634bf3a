package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/paddock-dev/paddock/store"
)

// BenchmarkWriteRuns is the writer's throughput: runs recorded in bursts
// of a queue's worth, each burst flushed, in batched transactions.
func BenchmarkWriteRuns(b *testing.B) {
	for _, driver := range []string{store.DriverSQLite} {
		b.Run(driver, func(b *testing.B) {
			s, err := store.Open(context.Background(), store.Config{Driver: driver, DSN: filepath.Join(b.TempDir(), "h.db")})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(context.Background())
			r := store.Run{Kind: store.KindRun, Tenant: "acme", Door: "rest", Template: "python", Runtime: "gvisor",
				StartKind: "pool", QueueMS: 1, AcquireMS: 1, ExecMS: 20, TotalMS: 22, Reason: "ok", Code: "print(1)"}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.RecordRun(r)
				if (i+1)%store.DefaultQueueSize == 0 {
					if err := s.Flush(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := s.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}

// BenchmarkRecordRun is what a caller pays, the hash and the enqueue,
// the writer held so that it takes no CPU from the caller.
func BenchmarkRecordRun(b *testing.B) {
	cfg, entered, release := holdWriter(store.Config{DSN: filepath.Join(b.TempDir(), "h.db"), QueueSize: 1 << 20})
	s, err := store.Open(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	r := store.Run{Kind: store.KindRun, Template: "python", Code: "print(1)"}
	s.RecordRun(r)
	<-entered
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.RecordRun(r)
	}
	b.StopTimer()
	release()
	if err := s.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
}
