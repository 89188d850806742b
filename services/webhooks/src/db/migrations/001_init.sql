create table partner_webhooks (
  partner_id uuid primary key,
  url text not null,
  updated_at timestamptz not null default clock_timestamp()
);

create table deliveries (
  id uuid primary key,
  partner_id uuid not null,
  -- The domain event it delivers; unique, so a redelivered event is recorded once.
  event_id uuid not null unique,
  event text not null,
  data jsonb not null,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed', 'cancelled')),
  attempts int not null default 0,
  response_code int,
  last_error text,
  next_attempt_at timestamptz not null default clock_timestamp(),
  lease_until timestamptz,
  created_at timestamptz not null default clock_timestamp(),
  delivered_at timestamptz
);
create index deliveries_due on deliveries (next_attempt_at, created_at) where status = 'pending';
create index deliveries_partner on deliveries (partner_id, created_at desc);
create index deliveries_created on deliveries (created_at);

create table programme_settings (
  id boolean primary key default true check (id),
  max_attempts int not null default 5 check (max_attempts between 1 and 10),
  base_delay_seconds int not null default 60 check (base_delay_seconds between 10 and 3600)
);
insert into programme_settings default values;
