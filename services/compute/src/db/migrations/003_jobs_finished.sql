-- The hourly purge of finished jobs older than the retention period reads by finish time.
create index jobs_finished on jobs (finished_at) where finished_at is not null;
