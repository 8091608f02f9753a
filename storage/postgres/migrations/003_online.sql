-- recsys schema version 3: online measurement (docs/design.md#online).
-- Times are Unix nanoseconds; days are YYYY-MM-DD (UTC) of the impression.

CREATE TABLE impressions (
	id            text COLLATE "C" PRIMARY KEY, -- the answer's recommendation_id
	user_id       text COLLATE "C" NOT NULL,
	at            bigint NOT NULL,
	model         text NOT NULL,
	model_version text NOT NULL,
	experiment    text NOT NULL,
	arm           text NOT NULL,
	items         text[] NOT NULL
);
CREATE INDEX impressions_user ON impressions (user_id, at);

-- What was credited to one shown item: 1 a positive event, 2 a conversion.
CREATE TABLE attributions (
	id       text COLLATE "C" NOT NULL,
	position integer NOT NULL,
	flags    smallint NOT NULL,
	PRIMARY KEY (id, position)
);

CREATE TABLE online_counts (
	day         text COLLATE "C" NOT NULL,
	model       text COLLATE "C" NOT NULL,
	experiment  text COLLATE "C" NOT NULL,
	arm         text COLLATE "C" NOT NULL,
	lists       bigint NOT NULL,
	impressions bigint NOT NULL,
	clicks      bigint NOT NULL,
	conversions bigint NOT NULL,
	PRIMARY KEY (day, model, experiment, arm)
);

CREATE TABLE experiments (
	id      text COLLATE "C" PRIMARY KEY,
	running boolean NOT NULL,
	record  jsonb NOT NULL
);
-- At most one experiment runs, whichever replica starts it.
CREATE UNIQUE INDEX experiments_one_running ON experiments ((true)) WHERE running;

INSERT INTO counters (name, value) VALUES ('experiment_seq', 0);
