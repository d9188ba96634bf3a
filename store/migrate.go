package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The schema, one numbered file a version (0001_what.sql), per dialect.
// A migration is never edited once released: a change is a new file.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// migration is one schema version.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads driver's migrations in version order; they must
// be numbered 1, 2, … without a gap.
func loadMigrations(driver string) ([]migration, error) {
	dir := path.Join("migrations", driver)
	entries, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name is not NNNN_what.sql", e.Name())
		}
		b, err := fs.ReadFile(migrations, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: want version %d", m.name, i+1)
		}
	}
	return out, nil
}

// migrate brings db's schema to version target (all of them when
// target is negative), each migration in a transaction of its own that
// also records it in schema_migrations. A database at a version beyond
// the binary's is refused with ErrSchemaTooNew.
func migrate(ctx context.Context, db *sql.DB, driver string, target int) error {
	ms, err := loadMigrations(driver)
	if err != nil {
		return err
	}
	if target < 0 || target > len(ms) {
		target = len(ms)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_ms BIGINT  NOT NULL)`); err != nil {
		return fmt.Errorf("creating schema_migrations: %w", err)
	}
	for {
		done, err := migrateOne(ctx, db, driver, ms, target)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next migration up to target and reports whether
// none was left. On Postgres a transaction-scoped advisory lock keeps two
// servers starting at once from applying the same one; SQLite's
// immediate transactions do the same by themselves.
func migrateOne(ctx context.Context, db *sql.DB, driver string, ms []migration, target int) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("migrating: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if driver == DriverPostgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7256110)`); err != nil {
			return false, fmt.Errorf("locking for migrations: %w", err)
		}
	}
	var cur int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&cur); err != nil {
		return false, fmt.Errorf("reading the schema version: %w", err)
	}
	if cur > len(ms) {
		return false, fmt.Errorf("%w: the database is at version %d, this Paddock knows versions up to %d; run a newer Paddock or another database",
			ErrSchemaTooNew, cur, len(ms))
	}
	if cur >= target {
		return true, tx.Rollback()
	}
	m := ms[cur]
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return false, fmt.Errorf("applying migration %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, rebind(driver, `INSERT INTO schema_migrations (version, name, applied_ms) VALUES ($1, $2, $3)`),
		m.version, m.name, time.Now().UnixMilli()); err != nil {
		return false, fmt.Errorf("recording migration %s: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("committing migration %s: %w", m.name, err)
	}
	return false, nil
}
