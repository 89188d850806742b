create table customers (
  id uuid primary key,
  name text not null,
  email text not null,
  company text not null default '',
  country text not null default '',
  currency text not null default 'EUR',
  status text not null default 'active' check (status in ('active', 'suspended')),
  created_at timestamptz not null default now()
);

create table people (
  id uuid primary key,
  customer_id uuid not null references customers(id),
  name text not null,
  email text not null,
  is_owner boolean not null default false,
  permissions text[] not null default '{}',
  created_at timestamptz not null default now()
);
create index people_customer on people (customer_id);
create unique index people_one_owner on people (customer_id) where is_owner;

create table staff (
  id uuid primary key,
  name text not null,
  email text not null unique,
  permissions text[] not null default '{}',
  created_at timestamptz not null default now()
);

create table api_keys (
  id uuid primary key,
  customer_id uuid not null references customers(id),
  person_id uuid not null references people(id),
  label text not null,
  prefix text not null unique,
  secret_hash bytea not null,
  scopes text[] not null,
  ip_allowlist text[] not null default '{}',
  expires_on date,
  revoked_at timestamptz,
  last_used_at timestamptz,
  last_used_ip text,
  created_at timestamptz not null default clock_timestamp()
);
create index api_keys_person on api_keys (person_id, created_at desc);
create index api_keys_customer on api_keys (customer_id, created_at desc);

create table request_log (
  id bigserial primary key,
  key_id uuid not null,
  customer_id uuid not null,
  method text not null,
  endpoint text not null,
  status_code int not null,
  source_ip text not null,
  duration_ms int not null default 0,
  at timestamptz not null
);
create index request_log_key on request_log (key_id, at desc);
create index request_log_customer on request_log (customer_id, at desc);
create index request_log_at on request_log (at);

create table settings (
  id boolean primary key default true check (id),
  customer_api_enabled boolean not null default true,
  hourly_request_limit int not null default 1000,
  active_key_limit int not null default 10,
  inventory_module boolean not null default true,
  vps_module boolean not null default true
);
insert into settings default values;
