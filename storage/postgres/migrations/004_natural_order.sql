-- recsys schema version 4: users and items are listed in natural order
-- (storage/record/natural.go). recsys_natural_key is record.NaturalKey in SQL: a
-- run of ASCII digits becomes '0', the number of its digits without the
-- leading zeros as two big-endian bytes, and those digits; every other
-- character is its UTF-8 bytes. The listings page over (key, id), the
-- order of the bbolt store's order buckets.
CREATE FUNCTION recsys_natural_key(id text) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
	SELECT coalesce(string_agg(
		CASE WHEN r.m[1] ~ '^[0123456789]' THEN
			decode('30', 'hex') || int2send(length(ltrim(r.m[1], '0'))::smallint) || convert_to(ltrim(r.m[1], '0'), 'UTF8')
		ELSE convert_to(r.m[1], 'UTF8') END, ''::bytea ORDER BY r.n), ''::bytea)
	FROM regexp_matches(id, '[0123456789]+|[^0123456789]+', 'g') WITH ORDINALITY AS r(m, n)
$$;

CREATE INDEX users_natural ON users (recsys_natural_key(id), id);
CREATE INDEX items_natural ON items (recsys_natural_key(id), id);
