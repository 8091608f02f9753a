-- A cancel asked at one replica for a job running at the leader: the
-- leader hears a notification at once, and reads this mark every few
-- seconds in case the notification was lost (docs/design.md#replicas).
ALTER TABLE jobs ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;
