-- Idempotent runs (api/jobs' SQL backend): one row per tenant's key,
-- named by the same hash the file store names its files by.
CREATE TABLE jobs (
	name        TEXT   PRIMARY KEY,
	tenant      TEXT   NOT NULL,
	idem_key    TEXT   NOT NULL,
	digest      TEXT   NOT NULL,
	state       TEXT   NOT NULL,
	created_ms  BIGINT NOT NULL,
	finished_ms BIGINT NOT NULL,
	result      TEXT,
	size        BIGINT NOT NULL
);
CREATE INDEX jobs_finished ON jobs (state, finished_ms);
