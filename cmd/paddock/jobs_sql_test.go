package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/paddock-dev/paddock/api/jobs"
	"github.com/paddock-dev/paddock/api/jobs/jobstest"
	"github.com/paddock-dev/paddock/store"
	"github.com/paddock-dev/paddock/store/pgtest"
)

// TestMain stops the PostgreSQL cluster a test may have started.
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// TestSQLJobStore runs the job backends' suite on the history
// database's jobs table, on SQLite and on PostgreSQL: a reopened store
// is a restarted server on the same database.
func TestSQLJobStore(t *testing.T) {
	for _, driver := range []string{store.DriverSQLite, store.DriverPostgres} {
		t.Run(driver, func(t *testing.T) {
			jobstest.Run(t, func(t *testing.T) jobstest.Backend {
				dsn := filepath.Join(t.TempDir(), "history.db")
				if driver == store.DriverPostgres {
					dsn = pgtest.DSN(t)
				}
				hist, err := store.Open(t.Context(), store.Config{Driver: driver, DSN: dsn})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { hist.Close(context.Background()) })
				dialect := jobs.DialectSQLite
				if driver == store.DriverPostgres {
					dialect = jobs.DialectPostgres
				}
				return jobstest.Backend{
					Open: func(t *testing.T, cfg jobs.Config) (jobstest.Store, jobs.Recovery) {
						t.Helper()
						s, rec, err := jobs.OpenSQL(t.Context(), hist.DB(), dialect, cfg)
						if err != nil {
							t.Fatalf("OpenSQL: %v", err)
						}
						return s, rec
					},
					States: func(t *testing.T) []string {
						t.Helper()
						rows, err := hist.DB().QueryContext(t.Context(), `SELECT state FROM jobs`)
						if err != nil {
							t.Fatal(err)
						}
						defer rows.Close()
						var out []string
						for rows.Next() {
							var s string
							if err := rows.Scan(&s); err != nil {
								t.Fatal(err)
							}
							out = append(out, s)
						}
						if err := rows.Err(); err != nil {
							t.Fatal(err)
						}
						slices.Sort(out)
						return out
					},
				}
			})
		})
	}
}
