-- recsys schema version 5: business rules and placements (docs/rules.md).
-- The record is record.EncodeRule's or record.EncodePlacement's JSON.

CREATE TABLE rules (
	name   text COLLATE "C" PRIMARY KEY,
	record jsonb NOT NULL
);

CREATE TABLE placements (
	name   text COLLATE "C" PRIMARY KEY,
	record jsonb NOT NULL
);
