-- The egress policy each run or cell had (egress.Policy's String form:
-- "allow host:ports …", then "; deny …"); empty for one without a
-- network, as every row written before this version was.
ALTER TABLE runs ADD COLUMN network TEXT NOT NULL DEFAULT '';
