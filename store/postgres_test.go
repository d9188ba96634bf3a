package store_test

import (
	"os"
	"testing"

	"github.com/paddock-dev/paddock/store/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// postgresDSN is the DSN of a new, empty database on the test cluster
// (package pgtest).
func postgresDSN(t *testing.T) string { return pgtest.DSN(t) }
