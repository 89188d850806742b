-- For partner orders, order.paid is raised once every service is provisioned (a charge followed
-- by a provisioning failure raises service.provisioning_failed and not order.paid).
alter table orders add column paid_event_at timestamptz;
