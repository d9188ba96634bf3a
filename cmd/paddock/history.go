package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paddock-dev/paddock/store"
)

// openHistory opens the history database --history-db names, its
// metrics on reg; nil with no error when it is "off".
func openHistory(ctx context.Context, cfg *config, reg prometheus.Registerer, logger *slog.Logger) (*store.Store, error) {
	sc := store.Config{Driver: store.DriverSQLite, DSN: cfg.HistoryDB, RecordCode: cfg.HistoryRecordCode,
		MaxAge: cfg.HistoryMaxAge, MaxRows: cfg.HistoryMaxRows, Logger: logger, Registerer: reg}
	switch {
	case cfg.HistoryDB == "off":
		return nil, nil
	case cfg.HistoryDB == "":
		sc.DSN = filepath.Join(cfg.StateDir, "history.db")
	case strings.HasPrefix(cfg.HistoryDB, "postgres://"), strings.HasPrefix(cfg.HistoryDB, "postgresql://"):
		sc.Driver = store.DriverPostgres
	}
	// 0 is "no bound" on the command line, negative in the store.
	if sc.MaxAge == 0 {
		sc.MaxAge = -1
	}
	if sc.MaxRows == 0 {
		sc.MaxRows = -1
	}
	st, err := store.Open(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("opening the history database (--history-db; off to run without one): %w", err)
	}
	where := sc.DSN
	if sc.Driver == store.DriverPostgres {
		where = "postgres"
	}
	logger.Info("history database open", "driver", sc.Driver, "at", where, "record_code", sc.RecordCode)
	return st, nil
}

// closeHistory writes what the history still queues and closes it; nil
// is a no-op.
func closeHistory(ctx context.Context, st *store.Store) error {
	if st == nil {
		return nil
	}
	if err := st.Close(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("closing the history database: %w", err)
	}
	return nil
}
