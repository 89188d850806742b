-- Every ledger entry carries its currency; a balance never mixes currencies.
alter table ledger add column currency text;
update ledger l set currency = b.currency from balances b where b.person_id = l.person_id;
alter table ledger alter column currency set not null;
create index ledger_document on ledger (document_id) where document_id is not null;

-- A partner's external order id is unique in the database, not by a prior SELECT.
create unique index orders_partner_external on orders (partner_id, external_order_id)
  where partner_id is not null and external_order_id is not null;

-- Who suspended a service: a partner may lift only its own suspension.
alter table services add column suspended_by text check (suspended_by in ('partner', 'supplier', 'billing'));

-- What was actually paid for an add-on, for which period, and from which documents: the only
-- source of credit when it is given up.
alter table service_addons add column paid_amount numeric(18,4) not null default 0;
alter table service_addons add column period_start timestamptz;
alter table service_addons add column funding_documents uuid[] not null default '{}';
update service_addons set period_start = started_at,
  paid_amount = case when status = 'active' and billing_type = 'recurring' and document_id is not null then amount else 0 end,
  funding_documents = case when document_id is not null then array[document_id] else '{}' end;

-- The date the service was paid up to when an upgrade was priced.
alter table upgrades add column priced_until timestamptz;
-- Removal credits of an options upgrade given back at request time (for the record).
alter table upgrades add column credit numeric(18,4) not null default 0;

create index services_end_of_term on services (next_due_date) where cancellation is not null and status <> 'terminated';
