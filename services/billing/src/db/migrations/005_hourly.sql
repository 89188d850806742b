-- Hourly products: charged from credit each hour without a document, after a minimum balance check.
alter table products add column min_credit numeric(18,4) not null default 0;
alter table services add column charged_until timestamptz;
create index services_hourly_due on services (charged_until) where cycle = 'hourly' and status = 'active';
