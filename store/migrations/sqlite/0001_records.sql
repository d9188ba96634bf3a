-- Runs and cells, session lifecycle events, failed authentications.
CREATE TABLE runs (
	id           INTEGER PRIMARY KEY,
	kind         TEXT    NOT NULL,
	at_ms        INTEGER NOT NULL,
	tenant       TEXT    NOT NULL,
	door         TEXT    NOT NULL,
	template     TEXT    NOT NULL,
	runtime      TEXT    NOT NULL,
	start_kind   TEXT    NOT NULL,
	queue_ms     INTEGER NOT NULL,
	acquire_ms   INTEGER NOT NULL,
	start_ms     INTEGER NOT NULL,
	exec_ms      INTEGER NOT NULL,
	total_ms     INTEGER NOT NULL,
	reason       TEXT    NOT NULL,
	error_code   TEXT    NOT NULL,
	exit_code    INTEGER NOT NULL,
	stdout_bytes INTEGER NOT NULL,
	stderr_bytes INTEGER NOT NULL,
	code_sha256  TEXT    NOT NULL,
	code         TEXT    NOT NULL,
	session_id   TEXT    NOT NULL
);
CREATE INDEX runs_at ON runs (at_ms, id);
CREATE INDEX runs_tenant_at ON runs (tenant, at_ms, id);

CREATE TABLE session_events (
	id         INTEGER PRIMARY KEY,
	at_ms      INTEGER NOT NULL,
	tenant     TEXT    NOT NULL,
	door       TEXT    NOT NULL,
	session_id TEXT    NOT NULL,
	template   TEXT    NOT NULL,
	event      TEXT    NOT NULL,
	detail     TEXT    NOT NULL
);
CREATE INDEX session_events_at ON session_events (at_ms, id);

CREATE TABLE auth_failures (
	id     INTEGER PRIMARY KEY,
	at_ms  INTEGER NOT NULL,
	door   TEXT    NOT NULL,
	client TEXT    NOT NULL,
	reason TEXT    NOT NULL
);
CREATE INDEX auth_failures_at ON auth_failures (at_ms, id);
