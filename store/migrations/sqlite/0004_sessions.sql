-- The session catalog (kernels' records of open sessions, so that a
-- restarted server takes them over): one row per session, under the
-- hibernate dir ("home") of the server that keeps it.
CREATE TABLE sessions (
	home       TEXT   NOT NULL,
	id         TEXT   NOT NULL,
	owner      TEXT   NOT NULL,
	record     TEXT   NOT NULL,
	updated_ms INTEGER NOT NULL,
	PRIMARY KEY (home, id)
);
