create table product_options (
  id uuid primary key,
  product_id uuid not null references products(id),
  name text not null,
  -- Per month for recurring add-ons; null when not offered that way.
  recurring_price numeric(18,4),
  one_time_price numeric(18,4),
  created_at timestamptz not null default clock_timestamp()
);

create table service_addons (
  id uuid primary key,
  service_id uuid not null references services(id),
  option_id uuid not null references product_options(id),
  billing_type text not null check (billing_type in ('one_time', 'recurring')),
  cycle text not null,
  quantity int not null check (quantity > 0),
  amount numeric(18,4) not null,
  status text not null check (status in ('pending_payment', 'active', 'cancelled')),
  document_id uuid references documents(id),
  started_at timestamptz not null default clock_timestamp(),
  next_due_date timestamptz,
  cancelled_at timestamptz
);
create index service_addons_service on service_addons (service_id);

create table upgrades (
  id uuid primary key,
  service_id uuid not null references services(id),
  customer_id uuid not null,
  person_id uuid not null,
  kind text not null check (kind in ('product', 'options')),
  from_product_id uuid not null,
  to_product_id uuid,
  add_options uuid[] not null default '{}',
  remove_options uuid[] not null default '{}',
  amount numeric(18,4) not null,
  status text not null check (status in ('awaiting_payment', 'executing', 'completed', 'cancelled')),
  document_id uuid references documents(id),
  order_id uuid references orders(id),
  created_at timestamptz not null default clock_timestamp(),
  completed_at timestamptz
);
create index upgrades_service on upgrades (service_id, created_at desc);
