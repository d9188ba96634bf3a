// Package store is Paddock's durable record: every run and cell from
// every door, session lifecycle events, failed authentications and admin
// actions, kept in an embedded SQLite database (modernc.org/sqlite, no
// cgo) or, for an operator who has one, in PostgreSQL (pgx's
// database/sql adapter).
//
// Open applies the schema migrations embedded in migrations/<dialect>
// and refuses a database whose schema is newer than the binary's. The
// Record methods never block and never fail: a record goes into a
// bounded queue, a background goroutine writes the queue in batches, one
// transaction each, and a full queue or a failing database drops records,
// counts them in the store's metrics and logs (at most once a minute).
// The same goroutine prunes by age and by row count. Runs and
// Aggregates answer the inspection door's questions, every one bounded.
//
// The record types are plain values; store knows nothing of the layers
// that fill them. It must not import api, doors, core, kernels, pool or
// runner.
package store
