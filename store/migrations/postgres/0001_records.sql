-- Runs and cells, session lifecycle events, failed authentications.
CREATE TABLE runs (
	id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	kind         TEXT    NOT NULL,
	at_ms        BIGINT  NOT NULL,
	tenant       TEXT    NOT NULL,
	door         TEXT    NOT NULL,
	template     TEXT    NOT NULL,
	runtime      TEXT    NOT NULL,
	start_kind   TEXT    NOT NULL,
	queue_ms     BIGINT  NOT NULL,
	acquire_ms   BIGINT  NOT NULL,
	start_ms     BIGINT  NOT NULL,
	exec_ms      BIGINT  NOT NULL,
	total_ms     BIGINT  NOT NULL,
	reason       TEXT    NOT NULL,
	error_code   TEXT    NOT NULL,
	exit_code    BIGINT  NOT NULL,
	stdout_bytes BIGINT  NOT NULL,
	stderr_bytes BIGINT  NOT NULL,
	code_sha256  TEXT    NOT NULL,
	code         TEXT    NOT NULL,
	session_id   TEXT    NOT NULL
);
CREATE INDEX runs_at ON runs (at_ms, id);
CREATE INDEX runs_tenant_at ON runs (tenant, at_ms, id);

CREATE TABLE session_events (
	id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	at_ms      BIGINT  NOT NULL,
	tenant     TEXT    NOT NULL,
	door       TEXT    NOT NULL,
	session_id TEXT    NOT NULL,
	template   TEXT    NOT NULL,
	event      TEXT    NOT NULL,
	detail     TEXT    NOT NULL
);
CREATE INDEX session_events_at ON session_events (at_ms, id);

CREATE TABLE auth_failures (
	id     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	at_ms  BIGINT  NOT NULL,
	door   TEXT    NOT NULL,
	client TEXT    NOT NULL,
	reason TEXT    NOT NULL
);
CREATE INDEX auth_failures_at ON auth_failures (at_ms, id);
