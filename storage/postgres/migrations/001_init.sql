-- recsys schema version 1: the tables of storage/postgres (see schema.go
-- there for what each holds). Timestamps are Unix nanoseconds, as in the
-- bbolt store, so that both give the same answers to the nanosecond; ids
-- compare byte-wise (COLLATE "C") so that listings page in the same order.

CREATE TABLE counters (
	name  text COLLATE "C" PRIMARY KEY,
	value bigint NOT NULL
);
-- users, items, pairs, positives, events: what /stats counts.
-- user_seq, item_seq: the last dense index given out (never reused).
-- model_seq, job_seq, report_seq: the last model version, job and report.
-- writer: a row every data write locks first, so that writes apply one at a
-- time, in the same order as their counters.
INSERT INTO counters (name, value) VALUES
	('users', 0), ('items', 0), ('pairs', 0), ('positives', 0), ('events', 0),
	('user_seq', 0), ('item_seq', 0), ('model_seq', 0), ('job_seq', 0), ('report_seq', 0),
	('writer', 0);

CREATE TABLE settings (
	name  text COLLATE "C" PRIMARY KEY,
	value text NOT NULL
);

CREATE TABLE days (
	day    text COLLATE "C" PRIMARY KEY, -- YYYYMMDD, UTC
	events bigint NOT NULL
);

CREATE TABLE users (
	idx       bigint PRIMARY KEY,
	id        text COLLATE "C" NOT NULL UNIQUE,
	created   bigint NOT NULL,
	last_seen bigint NOT NULL,
	items     bigint NOT NULL,
	positives bigint NOT NULL,
	events    bigint NOT NULL
);

CREATE TABLE items (
	idx        bigint PRIMARY KEY,
	id         text COLLATE "C" NOT NULL UNIQUE,
	features   jsonb,
	categories text[],
	labels     jsonb,
	hidden     boolean NOT NULL DEFAULT false,
	created    bigint NOT NULL,
	updated    bigint NOT NULL,
	positives  bigint NOT NULL DEFAULT 0 -- users for whom the item is relevant
);

CREATE TABLE pairs (
	user_idx  bigint NOT NULL,
	item_idx  bigint NOT NULL,
	count     bigint NOT NULL,
	first_ts  bigint NOT NULL,
	last_ts   bigint NOT NULL,
	value     double precision NOT NULL,
	flags     smallint NOT NULL,
	last_type text NOT NULL,
	PRIMARY KEY (user_idx, item_idx)
);
CREATE INDEX pairs_item ON pairs (item_idx);

CREATE TABLE pair_days (
	user_idx bigint NOT NULL,
	item_idx bigint NOT NULL,
	day      text COLLATE "C" NOT NULL,
	events   bigint NOT NULL,
	PRIMARY KEY (user_idx, item_idx, day)
);
CREATE INDEX pair_days_item ON pair_days (item_idx);

CREATE TABLE models (
	name    text COLLATE "C" NOT NULL,
	version text COLLATE "C" NOT NULL,
	info    jsonb NOT NULL,
	PRIMARY KEY (name, version)
);

CREATE TABLE model_chunks (
	name    text COLLATE "C" NOT NULL,
	version text COLLATE "C" NOT NULL,
	seq     integer NOT NULL,
	data    bytea NOT NULL,
	PRIMARY KEY (name, version, seq),
	FOREIGN KEY (name, version) REFERENCES models ON DELETE CASCADE
);

CREATE TABLE jobs (
	id     text COLLATE "C" PRIMARY KEY,
	state  text NOT NULL,
	record jsonb NOT NULL
);

CREATE TABLE reports (
	id     text COLLATE "C" PRIMARY KEY,
	record jsonb NOT NULL
);
