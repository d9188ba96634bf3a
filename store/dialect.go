package store

import (
	"database/sql"
	"fmt"
	"strings"

	// The two database/sql drivers: pgx's adapter registers "pgx",
	// modernc's "sqlite".
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"
)

// sqlitePragmas are set on every SQLite connection: a writer waits for
// another's lock instead of failing, the log is write-ahead (queries
// read while the writer writes), and a commit syncs at checkpoints only
// (a crash may lose the last records, never corrupt the file).
const sqlitePragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"

// openDB opens cfg's database with its driver, without touching it.
func openDB(cfg Config) (*sql.DB, error) {
	switch cfg.Driver {
	case DriverSQLite:
		dsn := cfg.DSN
		if !strings.HasPrefix(dsn, "file:") {
			sep := "?"
			if strings.Contains(dsn, "?") {
				sep = "&"
			}
			dsn += sep + sqlitePragmas
		}
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, fmt.Errorf("opening sqlite %s: %w", cfg.DSN, err)
		}
		return db, nil
	default:
		db, err := sql.Open("pgx", cfg.DSN)
		if err != nil {
			return nil, fmt.Errorf("opening postgres: %w", err)
		}
		db.SetMaxOpenConns(8)
		return db, nil
	}
}

// rebind turns a query written with Postgres's $1, $2 … placeholders into
// the dialect's: SQLite takes ?1, ?2 … for the same numbered arguments.
func rebind(driver, q string) string {
	if driver != DriverSQLite {
		return q
	}
	return strings.ReplaceAll(q, "$", "?")
}
