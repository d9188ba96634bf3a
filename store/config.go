package store

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Drivers Config.Driver may name.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// Defaults for zero Config fields.
const (
	DefaultQueueSize     = 8192
	DefaultBatchSize     = 512
	DefaultMaxAge        = 30 * 24 * time.Hour
	DefaultMaxRows       = 1_000_000
	DefaultPruneInterval = 10 * time.Minute
	// errorLogEvery spaces the log lines of a failing database.
	errorLogEvery = time.Minute
)

// Config is the store's typed configuration. Zero fields take defaults.
type Config struct {
	// Driver is DriverSQLite (the default) or DriverPostgres.
	Driver string
	// DSN says where the database is. SQLite: a file path (its directory
	// must exist), or a "file:" URI passed as it is. Postgres: a
	// connection string pgx reads (postgres://… or key=value …).
	DSN string
	// RecordCode keeps each run's and cell's code; off, only its SHA-256
	// is kept.
	RecordCode bool

	// QueueSize bounds the records waiting to be written; a record that
	// finds the queue full is dropped and counted.
	QueueSize int
	// BatchSize bounds the records written in one transaction.
	BatchSize int

	// MaxAge is how long a record is kept; negative keeps records of any
	// age. MaxRows is how many rows each table keeps, the newest;
	// negative keeps any number. PruneInterval is how often the store
	// prunes by both.
	MaxAge        time.Duration
	MaxRows       int64
	PruneInterval time.Duration

	// Logger receives the store's logs; nil discards them.
	Logger *slog.Logger
	// Registerer receives the store's metrics; nil registers none.
	Registerer prometheus.Registerer
	// Now is the clock for retention and the error log's spacing; nil is
	// time.Now.
	Now func() time.Time

	// beforeWrite, set by tests, is called by the writer before each
	// batch it writes, with the writer's context.
	beforeWrite func(context.Context)
}

func (c Config) withDefaults() (Config, error) {
	if c.Driver == "" {
		c.Driver = DriverSQLite
	}
	if c.Driver != DriverSQLite && c.Driver != DriverPostgres {
		return c, fmt.Errorf("%w %q (want %s or %s)", ErrUnknownDriver, c.Driver, DriverSQLite, DriverPostgres)
	}
	if c.DSN == "" {
		return c, fmt.Errorf("store config: no DSN for %s", c.Driver)
	}
	if c.QueueSize <= 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.MaxAge == 0 {
		c.MaxAge = DefaultMaxAge
	}
	if c.MaxRows == 0 {
		c.MaxRows = DefaultMaxRows
	}
	if c.PruneInterval <= 0 {
		c.PruneInterval = DefaultPruneInterval
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}
