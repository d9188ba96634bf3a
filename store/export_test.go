package store

import (
	"context"
	"database/sql"
)

// WithBeforeWrite is cfg whose writer calls f before each batch.
func WithBeforeWrite(cfg Config, f func(context.Context)) Config {
	cfg.beforeWrite = f
	return cfg
}

// MigrateTo brings db's schema to version target, as Open would to the
// newest.
func MigrateTo(ctx context.Context, db *sql.DB, driver string, target int) error {
	return migrate(ctx, db, driver, target)
}

// OpenDB opens cfg's database as Open would, without migrating it.
func OpenDB(cfg Config) (*sql.DB, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return openDB(cfg)
}
