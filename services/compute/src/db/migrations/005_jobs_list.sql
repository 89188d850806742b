-- GET /jobs lists a customer's jobs newest first: one index serves the filter and the order.
create index jobs_customer_started on jobs (customer_id, started_at desc, id desc);
-- When the driver expected the job done at acceptance (its first check). due_at moves on each
-- recheck, so progress is measured against this fixed horizon and never goes backwards.
alter table jobs add column expected_at timestamptz;
update jobs set expected_at = due_at;
alter table jobs alter column expected_at set not null, alter column expected_at set default clock_timestamp();
