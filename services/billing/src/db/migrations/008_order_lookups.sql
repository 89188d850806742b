-- An order's services and documents are read and updated by order on every order, every payment of
-- an order's proforma and every build report; without these each of those scanned the whole table,
-- a cost that grew with every service ever sold.
create index services_order on services (order_id) where order_id is not null;
create index documents_order on documents (order_id) where order_id is not null;
-- The provisioner looks for paid services waiting to be built every pass: only those.
create index services_pending on services (created_at) where status = 'pending';
