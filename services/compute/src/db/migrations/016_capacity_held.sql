-- What each provider's machines hold (issue 31): the capacity rule (capacity.ts) read it as an
-- aggregate over the provider's machines, under the one advisory lock every placement takes, so
-- each order's placement scanned every machine (18 ms at 50,000 machines: about 55 placements a
-- second for the whole fleet). A trigger keeps the totals as machines change; the rule reads one
-- row per provider. A machine holds its plan while it has an instance or is being built.
create table capacity_held (
  provider text primary key,
  machines int not null default 0,
  memory_mb bigint not null default 0,
  disk_gb bigint not null default 0
);

insert into capacity_held (provider, machines, memory_mb, disk_gb)
  select provider, count(*), coalesce(sum(memory_mb), 0), coalesce(sum(disk_gb), 0)
  from machines where has_instance or state = 'creating'
  group by provider;

create function capacity_held_keep() returns trigger language plpgsql
  set search_path from current as $$
declare
  held_before boolean := false;
  held_after boolean := false;
begin
  if tg_op <> 'INSERT' then
    held_before := old.has_instance or old.state = 'creating';
  end if;
  if tg_op <> 'DELETE' then
    held_after := new.has_instance or new.state = 'creating';
  end if;
  -- Most updates (a power state, a build's progress) change nothing the totals count: no row lock.
  if held_before and held_after and old.provider = new.provider
     and old.memory_mb = new.memory_mb and old.disk_gb = new.disk_gb then
    return null;
  end if;
  if held_before then
    update capacity_held
      set machines = machines - 1, memory_mb = memory_mb - old.memory_mb, disk_gb = disk_gb - old.disk_gb
      where provider = old.provider;
  end if;
  if held_after then
    insert into capacity_held as h (provider, machines, memory_mb, disk_gb)
      values (new.provider, 1, new.memory_mb, new.disk_gb)
      on conflict (provider) do update
      set machines = h.machines + 1, memory_mb = h.memory_mb + excluded.memory_mb,
          disk_gb = h.disk_gb + excluded.disk_gb;
  end if;
  return null;
end $$;

create trigger machines_capacity_held
  after insert or delete or update of provider, has_instance, state, memory_mb, disk_gb on machines
  for each row execute function capacity_held_keep();
