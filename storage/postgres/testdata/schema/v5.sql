--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: __SCHEMA__; Type: SCHEMA; Schema: -; Owner: -
--



--
-- Name: recsys_natural_key("text"); Type: FUNCTION; Schema: __SCHEMA__; Owner: -
--

CREATE FUNCTION "__SCHEMA__"."recsys_natural_key"("id" "text") RETURNS "bytea"
    LANGUAGE "sql" IMMUTABLE STRICT PARALLEL SAFE
    AS $$
	SELECT coalesce(string_agg(
		CASE WHEN r.m[1] ~ '^[0123456789]' THEN
			decode('30', 'hex') || int2send(length(ltrim(r.m[1], '0'))::smallint) || convert_to(ltrim(r.m[1], '0'), 'UTF8')
		ELSE convert_to(r.m[1], 'UTF8') END, ''::bytea ORDER BY r.n), ''::bytea)
	FROM regexp_matches(id, '[0123456789]+|[^0123456789]+', 'g') WITH ORDINALITY AS r(m, n)
$$;


SET default_tablespace = '';

SET default_table_access_method = "heap";

--
-- Name: attributions; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."attributions" (
    "id" "text" NOT NULL COLLATE "pg_catalog"."C",
    "position" integer NOT NULL,
    "flags" smallint NOT NULL
);


--
-- Name: counters; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."counters" (
    "name" "text" NOT NULL COLLATE "pg_catalog"."C",
    "value" bigint NOT NULL
);


--
-- Name: days; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."days" (
    "day" "text" NOT NULL COLLATE "pg_catalog"."C",
    "events" bigint NOT NULL
);


--
-- Name: experiments; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."experiments" (
    "id" "text" NOT NULL COLLATE "pg_catalog"."C",
    "running" boolean NOT NULL,
    "record" "jsonb" NOT NULL
);


--
-- Name: impressions; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."impressions" (
    "id" "text" NOT NULL COLLATE "pg_catalog"."C",
    "user_id" "text" NOT NULL COLLATE "pg_catalog"."C",
    "at" bigint NOT NULL,
    "model" "text" NOT NULL,
    "model_version" "text" NOT NULL,
    "experiment" "text" NOT NULL,
    "arm" "text" NOT NULL,
    "items" "text"[] NOT NULL
);


--
-- Name: items; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."items" (
    "idx" bigint NOT NULL,
    "id" "text" NOT NULL COLLATE "pg_catalog"."C",
    "features" "jsonb",
    "categories" "text"[],
    "labels" "jsonb",
    "hidden" boolean DEFAULT false NOT NULL,
    "created" bigint NOT NULL,
    "updated" bigint NOT NULL,
    "positives" bigint DEFAULT 0 NOT NULL
);


--
-- Name: jobs; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."jobs" (
    "id" "text" NOT NULL COLLATE "pg_catalog"."C",
    "state" "text" NOT NULL,
    "record" "jsonb" NOT NULL,
    "cancel_requested" boolean DEFAULT false NOT NULL
);


--
-- Name: model_chunks; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."model_chunks" (
    "name" "text" NOT NULL COLLATE "pg_catalog"."C",
    "version" "text" NOT NULL COLLATE "pg_catalog"."C",
    "seq" integer NOT NULL,
    "data" "bytea" NOT NULL
);


--
-- Name: models; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."models" (
    "name" "text" NOT NULL COLLATE "pg_catalog"."C",
    "version" "text" NOT NULL COLLATE "pg_catalog"."C",
    "info" "jsonb" NOT NULL
);


--
-- Name: online_counts; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."online_counts" (
    "day" "text" NOT NULL COLLATE "pg_catalog"."C",
    "model" "text" NOT NULL COLLATE "pg_catalog"."C",
    "experiment" "text" NOT NULL COLLATE "pg_catalog"."C",
    "arm" "text" NOT NULL COLLATE "pg_catalog"."C",
    "lists" bigint NOT NULL,
    "impressions" bigint NOT NULL,
    "clicks" bigint NOT NULL,
    "conversions" bigint NOT NULL
);


--
-- Name: pair_days; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."pair_days" (
    "user_idx" bigint NOT NULL,
    "item_idx" bigint NOT NULL,
    "day" "text" NOT NULL COLLATE "pg_catalog"."C",
    "events" bigint NOT NULL
);


--
-- Name: pairs; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."pairs" (
    "user_idx" bigint NOT NULL,
    "item_idx" bigint NOT NULL,
    "count" bigint NOT NULL,
    "first_ts" bigint NOT NULL,
    "last_ts" bigint NOT NULL,
    "value" double precision NOT NULL,
    "flags" smallint NOT NULL,
    "last_type" "text" NOT NULL
);


--
-- Name: placements; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."placements" (
    "name" "text" NOT NULL COLLATE "pg_catalog"."C",
    "record" "jsonb" NOT NULL
);


--
-- Name: reports; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."reports" (
    "id" "text" NOT NULL COLLATE "pg_catalog"."C",
    "record" "jsonb" NOT NULL
);


--
-- Name: rules; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."rules" (
    "name" "text" NOT NULL COLLATE "pg_catalog"."C",
    "record" "jsonb" NOT NULL
);


--
-- Name: schema_migrations; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."schema_migrations" (
    "version" integer NOT NULL,
    "name" "text" NOT NULL,
    "applied_at" timestamp with time zone DEFAULT "now"() NOT NULL
);


--
-- Name: settings; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."settings" (
    "name" "text" NOT NULL COLLATE "pg_catalog"."C",
    "value" "text" NOT NULL
);


--
-- Name: users; Type: TABLE; Schema: __SCHEMA__; Owner: -
--

CREATE TABLE "__SCHEMA__"."users" (
    "idx" bigint NOT NULL,
    "id" "text" NOT NULL COLLATE "pg_catalog"."C",
    "created" bigint NOT NULL,
    "last_seen" bigint NOT NULL,
    "items" bigint NOT NULL,
    "positives" bigint NOT NULL,
    "events" bigint NOT NULL
);


--
-- Data for Name: attributions; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."attributions" VALUES ('18e5b7b19a21a000-f1', 1, 1);


--
-- Data for Name: counters; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."counters" VALUES ('catalogue', 1);
INSERT INTO "__SCHEMA__"."counters" VALUES ('user_seq', 5);
INSERT INTO "__SCHEMA__"."counters" VALUES ('item_seq', 4);
INSERT INTO "__SCHEMA__"."counters" VALUES ('items', 4);
INSERT INTO "__SCHEMA__"."counters" VALUES ('writer', 5);
INSERT INTO "__SCHEMA__"."counters" VALUES ('pairs', 9);
INSERT INTO "__SCHEMA__"."counters" VALUES ('events', 11);
INSERT INTO "__SCHEMA__"."counters" VALUES ('positives', 7);
INSERT INTO "__SCHEMA__"."counters" VALUES ('users', 4);
INSERT INTO "__SCHEMA__"."counters" VALUES ('model_seq', 1);
INSERT INTO "__SCHEMA__"."counters" VALUES ('job_seq', 1);
INSERT INTO "__SCHEMA__"."counters" VALUES ('report_seq', 1);
INSERT INTO "__SCHEMA__"."counters" VALUES ('experiment_seq', 1);


--
-- Data for Name: days; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."days" VALUES ('20261101', 2);
INSERT INTO "__SCHEMA__"."days" VALUES ('20261102', 2);
INSERT INTO "__SCHEMA__"."days" VALUES ('20261104', 3);
INSERT INTO "__SCHEMA__"."days" VALUES ('20261103', 1);
INSERT INTO "__SCHEMA__"."days" VALUES ('20261106', 3);


--
-- Data for Name: experiments; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."experiments" VALUES ('x000001', false, '{"arms": [{"model": "popular", "share": 50}, {"model": "itemknn", "share": 50}], "name": "knn-vs-pop", "alpha": 0.05, "created": 1794038400000000000, "stopped": 1794124800000000000, "min_impressions": 100}');


--
-- Data for Name: impressions; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."impressions" VALUES ('18e5b7b19a21a000-f1', 'alice', 1794042000000000000, 'popular', 'v000001', '', '', '{m3,m4}');
INSERT INTO "__SCHEMA__"."impressions" VALUES ('18e5b954b27df000-f2', 'bob', 1794043800000000000, 'itemknn', 'v000002', 'x000001', 'b', '{m2,m3}');


--
-- Data for Name: items; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."items" VALUES (3, 'm3', NULL, NULL, '{"year": "1979", "title": "Alien"}', false, 1795176000000000000, 1795176000000000000, 1);
INSERT INTO "__SCHEMA__"."items" VALUES (4, 'm4', NULL, NULL, NULL, false, 1795176000000000000, 1795176000000000000, 1);
INSERT INTO "__SCHEMA__"."items" VALUES (2, 'm2', '{"comedy": 1}', '{comedy,drama}', NULL, true, 1795176000000000000, 1795176000000000000, 2);
INSERT INTO "__SCHEMA__"."items" VALUES (1, 'm1', '{"action": 1, "comedy": 0}', '{action}', '{"title": "Heat"}', false, 1795176000000000000, 1795176000000000000, 3);


--
-- Data for Name: jobs; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."jobs" VALUES ('j000000000001', 'succeeded', '{"id": "j000000000001", "kind": "train", "state": "succeeded", "models": ["popular"], "stages": null, "trigger": "api", "progress": 1, "created_at": "2026-11-07T10:00:00Z"}', false);


--
-- Data for Name: model_chunks; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."model_chunks" VALUES ('popular', 'v000001', 0, '\x52534231c4bdc52f736368656d6120666978747572653a20746865206279746573206f662061206d6f64656c');


--
-- Data for Name: models; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."models" VALUES ('popular', 'v000001', '{"name": "popular", "bytes": 36, "items": 4, "users": 4, "active": false, "params": {"k": 0}, "version": "v000001", "positives": 7, "trained_at": "2026-11-07T10:00:00Z", "validation": {"adg": 0.5}, "train_seconds": 0.25}');


--
-- Data for Name: online_counts; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."online_counts" VALUES ('2026-11-07', 'itemknn', 'x000001', 'b', 1, 2, 0, 0);
INSERT INTO "__SCHEMA__"."online_counts" VALUES ('2026-11-07', 'popular', '', '', 1, 2, 1, 0);


--
-- Data for Name: pair_days; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."pair_days" VALUES (1, 1, '20261103', 1);
INSERT INTO "__SCHEMA__"."pair_days" VALUES (2, 1, '20261106', 1);


--
-- Data for Name: pairs; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."pairs" VALUES (1, 2, 1, 1793530800000000000, 1793530800000000000, 0, 1, 'view');
INSERT INTO "__SCHEMA__"."pairs" VALUES (2, 3, 1, 1793617200000000000, 1793617200000000000, 0, 1, 'view');
INSERT INTO "__SCHEMA__"."pairs" VALUES (3, 3, 1, 1793786400000000000, 1793786400000000000, 0, 2, 'dislike');
INSERT INTO "__SCHEMA__"."pairs" VALUES (3, 1, 1, 1793790000000000000, 1793790000000000000, 3, 4, 'rating');
INSERT INTO "__SCHEMA__"."pairs" VALUES (3, 2, 1, 1793793600000000000, 1793793600000000000, 5, 5, 'rating');
INSERT INTO "__SCHEMA__"."pairs" VALUES (2, 4, 1, 1793959200000000000, 1793959200000000000, 0, 1, 'view');
INSERT INTO "__SCHEMA__"."pairs" VALUES (4, 1, 1, 1793966400000000000, 1793966400000000000, 0, 1, 'click');
INSERT INTO "__SCHEMA__"."pairs" VALUES (1, 1, 2, 1793527200000000000, 1793700000000000000, 0, 1, 'view');
INSERT INTO "__SCHEMA__"."pairs" VALUES (2, 1, 2, 1793613600000000000, 1793962800000000000, 3, 5, 'play');


--
-- Data for Name: placements; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--



--
-- Data for Name: reports; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."reports" VALUES ('r000000000001', '{"id": "r000000000001", "kind": "recommendation", "rows": null, "seed": 0, "folds": 3, "dataset": "fixture", "seconds": 0, "protocol": "standard", "created_at": "2026-11-20T12:00:00Z"}');


--
-- Data for Name: rules; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--



--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."schema_migrations" VALUES (1, '001_init.sql', '2026-12-02 20:22:21.869515+00');
INSERT INTO "__SCHEMA__"."schema_migrations" VALUES (2, '002_cancel_requested.sql', '2026-12-02 20:22:21.869515+00');
INSERT INTO "__SCHEMA__"."schema_migrations" VALUES (3, '003_online.sql', '2026-12-02 20:22:21.869515+00');
INSERT INTO "__SCHEMA__"."schema_migrations" VALUES (4, '004_natural_order.sql', '2026-12-02 20:22:21.869515+00');
INSERT INTO "__SCHEMA__"."schema_migrations" VALUES (5, '005_rules.sql', '2026-12-02 20:22:21.869515+00');


--
-- Data for Name: settings; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."settings" VALUES ('active_model', 'popular');


--
-- Data for Name: users; Type: TABLE DATA; Schema: __SCHEMA__; Owner: -
--

INSERT INTO "__SCHEMA__"."users" VALUES (3, 'carol', 1793786400000000000, 1793793600000000000, 3, 1, 3);
INSERT INTO "__SCHEMA__"."users" VALUES (1, 'alice', 1793527200000000000, 1793700000000000000, 2, 2, 3);
INSERT INTO "__SCHEMA__"."users" VALUES (2, 'bob', 1793613600000000000, 1793962800000000000, 3, 3, 4);
INSERT INTO "__SCHEMA__"."users" VALUES (4, 'dave', 1793872800000000000, 1793966400000000000, 1, 1, 1);


--
-- Name: attributions attributions_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."attributions"
    ADD CONSTRAINT "attributions_pkey" PRIMARY KEY ("id", "position");


--
-- Name: counters counters_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."counters"
    ADD CONSTRAINT "counters_pkey" PRIMARY KEY ("name");


--
-- Name: days days_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."days"
    ADD CONSTRAINT "days_pkey" PRIMARY KEY ("day");


--
-- Name: experiments experiments_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."experiments"
    ADD CONSTRAINT "experiments_pkey" PRIMARY KEY ("id");


--
-- Name: impressions impressions_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."impressions"
    ADD CONSTRAINT "impressions_pkey" PRIMARY KEY ("id");


--
-- Name: items items_id_key; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."items"
    ADD CONSTRAINT "items_id_key" UNIQUE ("id");


--
-- Name: items items_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."items"
    ADD CONSTRAINT "items_pkey" PRIMARY KEY ("idx");


--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."jobs"
    ADD CONSTRAINT "jobs_pkey" PRIMARY KEY ("id");


--
-- Name: model_chunks model_chunks_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."model_chunks"
    ADD CONSTRAINT "model_chunks_pkey" PRIMARY KEY ("name", "version", "seq");


--
-- Name: models models_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."models"
    ADD CONSTRAINT "models_pkey" PRIMARY KEY ("name", "version");


--
-- Name: online_counts online_counts_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."online_counts"
    ADD CONSTRAINT "online_counts_pkey" PRIMARY KEY ("day", "model", "experiment", "arm");


--
-- Name: pair_days pair_days_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."pair_days"
    ADD CONSTRAINT "pair_days_pkey" PRIMARY KEY ("user_idx", "item_idx", "day");


--
-- Name: pairs pairs_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."pairs"
    ADD CONSTRAINT "pairs_pkey" PRIMARY KEY ("user_idx", "item_idx");


--
-- Name: placements placements_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."placements"
    ADD CONSTRAINT "placements_pkey" PRIMARY KEY ("name");


--
-- Name: reports reports_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."reports"
    ADD CONSTRAINT "reports_pkey" PRIMARY KEY ("id");


--
-- Name: rules rules_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."rules"
    ADD CONSTRAINT "rules_pkey" PRIMARY KEY ("name");


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."schema_migrations"
    ADD CONSTRAINT "schema_migrations_pkey" PRIMARY KEY ("version");


--
-- Name: settings settings_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."settings"
    ADD CONSTRAINT "settings_pkey" PRIMARY KEY ("name");


--
-- Name: users users_id_key; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."users"
    ADD CONSTRAINT "users_id_key" UNIQUE ("id");


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."users"
    ADD CONSTRAINT "users_pkey" PRIMARY KEY ("idx");


--
-- Name: experiments_one_running; Type: INDEX; Schema: __SCHEMA__; Owner: -
--

CREATE UNIQUE INDEX "experiments_one_running" ON "__SCHEMA__"."experiments" USING "btree" ((true)) WHERE "running";


--
-- Name: impressions_user; Type: INDEX; Schema: __SCHEMA__; Owner: -
--

CREATE INDEX "impressions_user" ON "__SCHEMA__"."impressions" USING "btree" ("user_id", "at");


--
-- Name: items_natural; Type: INDEX; Schema: __SCHEMA__; Owner: -
--

CREATE INDEX "items_natural" ON "__SCHEMA__"."items" USING "btree" ("__SCHEMA__"."recsys_natural_key"("id"), "id");


--
-- Name: pair_days_item; Type: INDEX; Schema: __SCHEMA__; Owner: -
--

CREATE INDEX "pair_days_item" ON "__SCHEMA__"."pair_days" USING "btree" ("item_idx");


--
-- Name: pairs_item; Type: INDEX; Schema: __SCHEMA__; Owner: -
--

CREATE INDEX "pairs_item" ON "__SCHEMA__"."pairs" USING "btree" ("item_idx");


--
-- Name: users_natural; Type: INDEX; Schema: __SCHEMA__; Owner: -
--

CREATE INDEX "users_natural" ON "__SCHEMA__"."users" USING "btree" ("__SCHEMA__"."recsys_natural_key"("id"), "id");


--
-- Name: model_chunks model_chunks_name_version_fkey; Type: FK CONSTRAINT; Schema: __SCHEMA__; Owner: -
--

ALTER TABLE ONLY "__SCHEMA__"."model_chunks"
    ADD CONSTRAINT "model_chunks_name_version_fkey" FOREIGN KEY ("name", "version") REFERENCES "__SCHEMA__"."models"("name", "version") ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--


