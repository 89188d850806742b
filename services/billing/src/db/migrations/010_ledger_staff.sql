-- A manual credit adjustment names the staff member who made it (the reason is its description).
alter table ledger add column staff_id uuid;
