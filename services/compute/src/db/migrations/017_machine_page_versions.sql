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

-- One function for the three tables: addresses name their machine, not its customer. An update
-- that changes nothing (a job's write of the state it had) leaves the version as it is.
create function machine_pages_changed() returns trigger language plpgsql
  set search_path from current as $$
declare
  before_customer uuid;
  after_customer uuid;
begin
  if tg_op = 'UPDATE' and old is not distinct from new then return null; end if;
  if tg_table_name = 'ip_addresses' then
    if tg_op <> 'INSERT' then select customer_id into before_customer from machines where service_id = old.service_id; end if;
    if tg_op <> 'DELETE' then select customer_id into after_customer from machines where service_id = new.service_id; end if;
  else
    if tg_op <> 'INSERT' then before_customer := old.customer_id; end if;
    if tg_op <> 'DELETE' then after_customer := new.customer_id; end if;
  end if;
  if before_customer is not null then perform machine_page_changed(before_customer); end if;
  if after_customer is not null and after_customer is distinct from before_customer then
    perform machine_page_changed(after_customer);
  end if;
  return null;
end $$;

create trigger service_records_machine_pages after insert or update or delete on service_records
  for each row execute function machine_pages_changed();
create trigger machines_machine_pages after insert or update or delete on machines
  for each row execute function machine_pages_changed();
create trigger ip_addresses_machine_pages after insert or update or delete on ip_addresses
  for each row execute function machine_pages_changed();
