// Package pgtest gives tests a throwaway PostgreSQL cluster: initdb and
// pg_ctl from Debian's postgresql package, listening on a unix socket in
// a temporary directory only, started by the first test that needs it
// and stopped by the test binary's TestMain (Stop). Each test gets a
// database of its own. It serves the tests of store and of what keeps
// tables in the history database; nothing else imports it.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// cluster is the test binary's one cluster.
var cluster struct {
	once    sync.Once
	dir     string // the cluster's directory, removed at the end
	bin     string // the directory of initdb, pg_ctl
	runAs   []string
	skip    string // why there is no cluster, when there is none
	err     error
	n       atomic.Int64
	started bool
}

// pgBin finds the newest installed PostgreSQL's binaries.
func pgBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return va - vb
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// pgCmd runs one of the cluster's binaries as the user that owns it.
func pgCmd(name string, args ...string) error {
	argv := append(append(slices.Clone(cluster.runAs), filepath.Join(cluster.bin, name)), args...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, out)
	}
	return nil
}

func startCluster() {
	cluster.bin = pgBin()
	if cluster.bin == "" {
		cluster.skip = "PostgreSQL is not installed: apt-get install postgresql (Debian) for the Postgres tests"
		return
	}
	dir, err := os.MkdirTemp("", "paddock-pg-")
	if err != nil {
		cluster.err = err
		return
	}
	cluster.dir = dir
	if os.Geteuid() == 0 { // PostgreSQL refuses to run as root
		u, err := user.Lookup("postgres")
		if err != nil {
			cluster.err = fmt.Errorf("running as root and no postgres user to run the cluster as: %w", err)
			return
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			cluster.err = err
			return
		}
		cluster.runAs = []string{"runuser", "-u", "postgres", "--"}
	}
	data, sock := filepath.Join(dir, "data"), dir
	if err := pgCmd("initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"); err != nil {
		cluster.err = err
		return
	}
	// -w: pg_ctl waits until the server accepts connections.
	if err := pgCmd("pg_ctl", "start", "-w", "-D", data, "-l", filepath.Join(dir, "log"),
		"-o", "-k "+sock+" -c listen_addresses= -c fsync=off -c full_page_writes=off"); err != nil {
		cluster.err = err
		return
	}
	cluster.started = true
}

// Stop stops the cluster, if a test started it, and deletes it. Call it
// from TestMain after m.Run.
func Stop() {
	if cluster.started {
		if err := pgCmd("pg_ctl", "stop", "-w", "-m", "immediate", "-D", filepath.Join(cluster.dir, "data")); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the test cluster:", err)
		}
	}
	if cluster.dir != "" {
		os.RemoveAll(cluster.dir)
	}
}

// DSN is the DSN of a new, empty database on the test cluster.
// Without PostgreSQL the test is skipped, or fails when
// PADDOCK_REQUIRE_GVISOR=1 (make test) says every test must run.
func DSN(t testing.TB) string {
	t.Helper()
	cluster.once.Do(startCluster)
	if cluster.skip != "" {
		if os.Getenv("PADDOCK_REQUIRE_GVISOR") == "1" {
			t.Fatal(cluster.skip)
		}
		t.Skip(cluster.skip)
	}
	if cluster.err != nil {
		t.Fatalf("starting the test PostgreSQL cluster: %v", cluster.err)
	}
	base := "host=" + cluster.dir + " user=postgres sslmode=disable"
	name := fmt.Sprintf("paddock_test_%d", cluster.n.Add(1))
	db, err := sql.Open("pgx", base+" dbname=postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating database %s: %v", name, err)
	}
	return base + " dbname=" + name
}
