-- recsys schema version 6: the placement a list was answered for, in the
-- impression log and as a key of the online counters ('' for none, which
-- every list recorded before is).

ALTER TABLE impressions ADD COLUMN placement text COLLATE "C" NOT NULL DEFAULT '';

ALTER TABLE online_counts ADD COLUMN placement text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE online_counts DROP CONSTRAINT online_counts_pkey;
ALTER TABLE online_counts ADD PRIMARY KEY (day, model, experiment, arm, placement);
