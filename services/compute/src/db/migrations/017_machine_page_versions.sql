-- The version of each customer's machine pages (issue 31 §1): the gateway keeps the pages it
-- wrote and asks compute only whether they are still the pages, so an unchanged page costs one
-- small read here instead of the page's rows, their bytes and their JSON.
--
-- Every transaction that changes what a page shows (a service record, a machine, an address)
-- adds one row for each customer it touched, keyed by its own transaction id; a customer's version
-- is the sum of the weights of its rows. The sum grows with every committed change and with
-- nothing else: a rolled-back change leaves no row, and compacting a customer's rows into one row
-- of their summed weight keeps the sum. A reader that reads the version before the page holds a
-- page at least as new as that version. No writer updates another's row, so two transactions
-- never wait on each other here (one row a customer, updated by each change, would order every
-- writer of a customer behind the one before it, and could deadlock writers of several).
create table machine_page_changes (
  customer_id uuid not null,
  xact bigint not null,
  weight bigint not null default 1,
  primary key (customer_id, xact)
);

create function machine_page_changed(customer uuid) returns void language sql
  set search_path from current as $$
  insert into machine_page_changes (customer_id, xact) values (customer, pg_current_xact_id()::text::bigint)
  on conflict do nothing
$$;

create function machine_pages_record_changed() returns trigger language plpgsql
  set search_path from current as $$
begin
  if tg_op <> 'INSERT' then perform machine_page_changed(old.customer_id); end if;
  if tg_op <> 'DELETE' and (tg_op = 'INSERT' or new.customer_id <> old.customer_id) then
    perform machine_page_changed(new.customer_id);
  end if;
  return null;
end $$;

-- Addresses name their machine, not its customer.
create function machine_pages_address_changed() returns trigger language plpgsql
  set search_path from current as $$
begin
  if tg_op <> 'INSERT' then
    perform machine_page_changed(m.customer_id) from machines m where m.service_id = old.service_id;
  end if;
  if tg_op <> 'DELETE' and (tg_op = 'INSERT' or new.service_id <> old.service_id) then
    perform machine_page_changed(m.customer_id) from machines m where m.service_id = new.service_id;
  end if;
  return null;
end $$;

create trigger service_records_machine_pages
  after insert or delete or update on service_records
  for each row execute function machine_pages_record_changed();

-- An update that changes nothing (a job's write of the state it had) leaves the version as it is.
create trigger machines_machine_pages_update
  after update on machines
  for each row when (old is distinct from new) execute function machine_pages_record_changed();
create trigger machines_machine_pages
  after insert or delete on machines
  for each row execute function machine_pages_record_changed();

create trigger ip_addresses_machine_pages_update
  after update on ip_addresses
  for each row when (old is distinct from new) execute function machine_pages_address_changed();
create trigger ip_addresses_machine_pages
  after insert or delete on ip_addresses
  for each row execute function machine_pages_address_changed();
