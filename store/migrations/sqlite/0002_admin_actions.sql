-- Uses of the admin scope.
CREATE TABLE admin_actions (
	id     INTEGER PRIMARY KEY,
	at_ms  INTEGER NOT NULL,
	tenant TEXT    NOT NULL,
	door   TEXT    NOT NULL,
	action TEXT    NOT NULL,
	target TEXT    NOT NULL,
	detail TEXT    NOT NULL
);
CREATE INDEX admin_actions_at ON admin_actions (at_ms, id);
