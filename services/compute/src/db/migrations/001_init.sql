create table machines (
  service_id uuid primary key,
  customer_id uuid not null,
  kind text not null,
  provider text not null default 'simulator',
  hostname text not null,
  location text not null default 'fra1',
  -- creating, running, stopped, paused, error; has_instance false when not built or the build failed
  state text not null,
  has_instance boolean not null default false,
  vcpus int not null default 1,
  memory_mb int not null default 1024,
  disk_gb int not null default 20,
  os text not null default '',
  rescue_mode boolean not null default false,
  os_images text[] not null default '{ubuntu-24.04,debian-12,rocky-9}',
  disabled_controls text[] not null default '{}',
  fail_build boolean not null default false,
  controller_fails boolean not null default false,
  -- Copy of billing's service status fed by service events: suspended/terminated refuse control.
  service_status text not null default 'active',
  root_password_set_at timestamptz,
  created_at timestamptz not null default clock_timestamp()
);
create index machines_customer on machines (customer_id, created_at desc);

create table ip_addresses (
  service_id uuid not null references machines(service_id),
  address text not null,
  version int not null,
  prefix_length int not null,
  purpose text not null,
  primary key (service_id, address)
);

create table jobs (
  id uuid primary key,
  service_id uuid not null,
  customer_id uuid not null,
  action text not null,
  status text not null default 'running' check (status in ('running', 'succeeded', 'failed')),
  progress int not null default 0,
  target_state text,
  error_code text,
  error_message text,
  started_at timestamptz not null default clock_timestamp(),
  due_at timestamptz not null default clock_timestamp(),
  finished_at timestamptz
);
create index jobs_running on jobs (status) where status = 'running';

create table ssh_keys (
  id uuid primary key,
  customer_id uuid not null,
  name text not null,
  public_key text not null,
  fingerprint text not null,
  created_at timestamptz not null default clock_timestamp(),
  unique (customer_id, fingerprint)
);

create table processed_events (
  event_id uuid primary key,
  processed_at timestamptz not null default clock_timestamp()
);

create table outbox (
  id uuid primary key,
  subject text not null,
  payload bytea not null,
  created_at timestamptz not null default clock_timestamp(),
  published_at timestamptz
);
create index outbox_unpublished on outbox (created_at, id) where published_at is null;
