-- Billing's record of each service (issue 31): the billing half of the machine pages, kept from
-- billing's service_record.changed events so GET /vps is one call to compute and one indexed read.
-- `summary` is billing's ServiceSummary message as billing wrote it (binary protobuf): compute
-- hands it on unread and needs none of billing's columns. `event_id` is the last applied event's
-- (UUID v7, in the order billing wrote them): an older event for the same service changes nothing.
create table service_records (
  service_id uuid primary key,
  customer_id uuid not null,
  -- billing's ProductKind number
  kind smallint not null,
  created_at timestamptz not null,
  summary bytea not null,
  event_id uuid not null,
  -- when billing wrote the event, and when it was applied here: their difference is the lag
  occurred_at timestamptz not null,
  applied_at timestamptz not null default now()
);

-- The page in its order (billing's: newest first, id as the tie-break) and its count, both flat in
-- the number of services the customer has.
create index service_records_page on service_records (customer_id, kind, created_at desc, service_id desc);
