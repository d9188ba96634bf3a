// Package jobs is the crash-safe record of one-shot runs sent with an
// idempotency key: which request (by digest) each tenant's key named,
// whether its run is running, done or was interrupted by a crash, and
// the stored result of a done one.
//
// Store keeps each job as one JSON file under Config.Dir, named by a hash of the
// tenant and key (never by a client's string), written atomically (a
// temporary file, fsync, rename, fsync of the directory). Open marks the
// jobs an earlier process left running as interrupted. Finished jobs
// expire after Config.TTL; when Config.MaxJobs or Config.MaxBytes is
// reached, the oldest finished jobs are evicted first. SQLStore keeps
// them, with the same semantics, in a database's jobs table (the history
// database's, whose package store owns the schema), through database/sql
// alone; package jobstest is the suite both pass.
//
// jobs knows nothing of HTTP: the api package decides what a key is, what
// a result holds and how a job is answered. It imports only the standard
// library; nothing but api and cmd may import it.
package jobs
