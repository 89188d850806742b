-- Pages of one kind (the VPS and dedicated lists) read in index order, whatever the count.
create index services_customer_kind on services (customer_id, kind, created_at desc, id desc);
