-- Why staff last set a customer's status (suspended for abuse, lifted after payment...).
alter table customers add column status_reason text not null default '';

-- Every staff write made in the admin panel: recorded before the write (outcome 'pending'), its
-- outcome after. Kept for good (no retention): it is the record of what staff did to an account.
create table staff_audit (
  id uuid primary key,
  staff_id uuid not null references staff(id),
  -- The staff member as they were named when they acted.
  staff_name text not null,
  staff_email text not null,
  customer_id uuid references customers(id),
  action text not null,
  target text not null default '',
  before jsonb,
  after jsonb,
  reason text not null default '',
  outcome text not null default 'pending' check (outcome in ('pending', 'succeeded', 'failed')),
  error text not null default '',
  created_at timestamptz not null default clock_timestamp(),
  finished_at timestamptz
);
create index staff_audit_customer on staff_audit (customer_id, created_at desc, id desc);
create index staff_audit_created on staff_audit (created_at desc, id desc);
