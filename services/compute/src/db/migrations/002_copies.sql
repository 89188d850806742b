-- Snapshots (VPS) and provider backups, both point-in-time copies of a machine's disk.
create table copies (
  id uuid primary key,
  service_id uuid not null references machines(service_id),
  customer_id uuid not null,
  collection text not null check (collection in ('snapshot', 'backup')),
  name text not null,
  status text not null default 'creating' check (status in ('creating', 'available', 'restoring', 'deleted')),
  size_gb int not null default 0,
  created_at timestamptz not null default clock_timestamp()
);
create index copies_service on copies (service_id, collection, created_at desc);
alter table jobs add column copy_id uuid;
