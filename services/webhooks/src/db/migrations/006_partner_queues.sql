-- A partner's queue is leased as a whole (one row per partner), not each delivery: a delivery is
-- then written twice (stored, then its attempt recorded) instead of three times (stored, leased,
-- attempt), and whoever holds the row is the only sender for that partner, which keeps its order
-- across replicas. `holder` is the serving process (a random id per process); the lease is free
-- once `lease_until` has passed (a crashed holder's runs out). A row is made when the partner's
-- first delivery is stored and kept: the queue of a partner with nothing pending costs one probe.
create table partner_queues (
  partner_id uuid primary key,
  holder uuid,
  lease_until timestamptz
);
insert into partner_queues (partner_id) select distinct partner_id from deliveries where status = 'pending';

-- What a holder reads: its partner's pending deliveries in queue order (stream position; test
-- events, which have none, after; then creation time and id). It replaces the index by due time,
-- which only the per-delivery claim read.
drop index deliveries_due;
create index deliveries_pending on deliveries (partner_id, stream_seq, created_at, id) where status = 'pending';

-- A stored event's delivery id is its event id (events-consumer.ts), so the primary key already
-- makes a redelivered event a no-op; test events get fresh ids for both. One index fewer to write.
alter table deliveries drop constraint deliveries_event_id_key;
alter table deliveries drop column lease_until;
