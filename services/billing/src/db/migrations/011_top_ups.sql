-- Credit top-ups by card (a payment provider's checkout) and by bank transfer.

-- A confirmed transfer's ledger entry names the staff member in ledger.staff_id (010_ledger_staff).

create table top_ups (
  id uuid primary key,
  method text not null check (method in ('card', 'bank_transfer')),
  status text not null default 'pending' check (status in ('pending', 'credited', 'cancelled')),
  customer_id uuid not null,
  person_id uuid not null,
  currency text not null,
  -- What the customer asked to add, and what arrived (a bank transfer may differ).
  requested numeric(18,4) not null check (requested > 0),
  received numeric(18,4) check (received > 0),
  -- The form's one-time token: a repeated submission finds the first top-up.
  request_key text not null,
  -- Bank transfers: what the customer quotes on the transfer.
  reference text unique,
  -- Card: the provider's checkout session and payment. Unique, so one payment can only ever
  -- belong to one top-up.
  provider_session text unique,
  provider_payment text unique,
  -- Card: the cumulative amount the provider reported refunded, and what was taken back for it.
  refunded numeric(18,4) not null default 0,
  disputed boolean not null default false,
  confirmed_by uuid,
  ledger_id bigint,
  -- Card: the hosted checkout the browser is sent to (a repeated submission is sent there again).
  checkout_url text,
  created_at timestamptz not null default clock_timestamp(),
  credited_at timestamptz,
  unique (person_id, request_key)
);
create index top_ups_person on top_ups (person_id, created_at desc);
create index top_ups_pending_transfers on top_ups (created_at) where method = 'bank_transfer' and status = 'pending';

-- The idempotency key of money that arrives: one row per top-up that was credited. A second
-- credit of the same top-up (a replayed event, the other of the two events of one payment, a
-- second staff confirmation) conflicts here and moves nothing.
create table top_up_credits (
  top_up_id uuid primary key references top_ups (id),
  -- The provider's event id, or "staff:<id>" for a confirmed transfer.
  source text not null,
  amount numeric(18,4) not null,
  created_at timestamptz not null default clock_timestamp()
);

-- Every provider event billing acted on or recorded, keyed by the provider's own event id: a
-- replay (the provider retries until it hears 2xx) is recognised and moves no money.
create table provider_events (
  provider text not null,
  event_id text not null,
  type text not null,
  top_up_id uuid references top_ups (id),
  -- What billing did with it: credited, refund_debited, recorded, unmatched, ignored.
  outcome text not null,
  detail text not null default '',
  received_at timestamptz not null default clock_timestamp(),
  primary key (provider, event_id)
);
