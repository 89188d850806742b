-- The recurring cycle's company-wide settings: one row (see docs/architecture.md, Billing).
create table billing_settings (
  id boolean primary key default true check (id),
  renewal_lead_days int not null default 7 check (renewal_lead_days between 0 and 365),
  suspend_grace_days int not null default 3 check (suspend_grace_days between 0 and 365),
  terminate_grace_days int not null default 30 check (terminate_grace_days between 0 and 3650)
);
insert into billing_settings default values;

-- An account's billing preferences; an account without a row has the defaults.
create table account_billing (
  customer_id uuid primary key,
  auto_pay boolean not null default true
);

-- One renewal document per item (a service, or a recurring add-on) and term: the claim is taken
-- before the document is written, so two billing replicas, a restart or a customer's early /renew
-- never issue a term twice. A cancelled renewal gives its claim up (its term can be issued again).
create table renewal_terms (
  item_id uuid not null,
  term_start timestamptz not null,
  service_id uuid not null references services(id),
  addon_id uuid references service_addons(id),
  document_id uuid not null,
  primary key (item_id, term_start)
);
create index renewal_terms_document on renewal_terms (document_id);

-- Automatic payment from credit is tried at issue (1) and again on the due date (2).
alter table documents add column auto_pay_attempts int not null default 0;
create index documents_open_renewals on documents (due_date)
  where status = 'unpaid' and purpose in ('renewal', 'addon');

-- Who holds a service suspended: each source (billing for overdue or unpaid hours, the supplier,
-- a partner, the customer) lifts only its own; the service is active again when none is left.
alter table services add column suspensions text[] not null default '{}';
update services set suspensions = array[coalesce(suspended_by, 'supplier')] where status = 'suspended';
alter table services add constraint services_suspension_sources
  check (suspensions <@ array['billing', 'supplier', 'partner', 'customer']::text[]);

create index services_renewal_due on services (next_due_date)
  where status in ('active', 'suspended') and cycle <> 'hourly';
create index service_addons_due on service_addons (next_due_date)
  where status = 'active' and billing_type = 'recurring';
create index upgrades_awaiting on upgrades (priced_until) where status = 'awaiting_payment';
