create table products (
  id uuid primary key,
  name text not null,
  kind text not null,
  description text not null default '',
  currency text not null default 'EUR',
  vcpus int not null default 0,
  memory_mb int not null default 0,
  disk_gb int not null default 0,
  location text not null default '',
  os_images text[] not null default '{}',
  active boolean not null default true,
  created_at timestamptz not null default clock_timestamp()
);

create table product_prices (
  product_id uuid not null references products(id),
  cycle text not null,
  price numeric(18,4) not null check (price >= 0),
  primary key (product_id, cycle)
);

create sequence order_numbers start 1001;
create sequence document_numbers start 1001;

create table orders (
  id uuid primary key,
  order_number text not null unique,
  customer_id uuid not null,
  person_id uuid not null,
  status text not null default 'pending',
  payment_status text not null default 'unpaid',
  total numeric(18,4) not null,
  currency text not null,
  partner_id uuid,
  external_order_id text,
  external_customer_id text,
  payment_mode text not null default 'credit',
  payment_error text,
  created_at timestamptz not null default clock_timestamp()
);
create index orders_customer on orders (customer_id, created_at desc);

create table services (
  id uuid primary key,
  customer_id uuid not null,
  person_id uuid,
  product_id uuid not null references products(id),
  order_id uuid references orders(id),
  kind text not null,
  name text not null,
  hostname text not null default '',
  status text not null,
  cycle text not null,
  amount numeric(18,4) not null,
  currency text not null,
  next_due_date timestamptz not null,
  cancellation jsonb,
  os_image_id text not null default '',
  server_ip text not null default '',
  failure_reason text,
  partner_id uuid,
  created_at timestamptz not null default clock_timestamp()
);
create index services_customer on services (customer_id, created_at desc);

create table documents (
  id uuid primary key,
  kind text not null check (kind in ('invoice', 'proforma')),
  number text not null unique,
  customer_id uuid not null,
  person_id uuid,
  status text not null default 'unpaid' check (status in ('unpaid', 'paid', 'cancelled', 'converted')),
  total numeric(18,4) not null check (total >= 0),
  amount_paid numeric(18,4) not null default 0 check (amount_paid >= 0 and amount_paid <= total),
  currency text not null,
  purpose text not null,
  order_id uuid references orders(id),
  service_id uuid references services(id),
  converted_to uuid references documents(id),
  created_at timestamptz not null default clock_timestamp(),
  due_date timestamptz not null default clock_timestamp() + interval '7 days',
  paid_at timestamptz
);
create index documents_customer on documents (customer_id, kind, created_at desc);
create index documents_service on documents (service_id) where status = 'unpaid';

create table document_lines (
  id uuid primary key,
  document_id uuid not null references documents(id),
  description text not null,
  amount numeric(18,4) not null,
  service_id uuid
);
create index document_lines_doc on document_lines (document_id);

-- One balance row per person: the row lock serialises every movement of their money.
create table balances (
  person_id uuid primary key,
  customer_id uuid not null,
  currency text not null,
  balance numeric(18,4) not null default 0 check (balance >= 0)
);

-- Append-only ledger: every change of a balance, with the balance after it.
create table ledger (
  id bigserial primary key,
  person_id uuid not null,
  customer_id uuid not null,
  amount numeric(18,4) not null,
  balance_after numeric(18,4) not null,
  kind text not null,
  description text not null,
  document_id uuid,
  created_at timestamptz not null default clock_timestamp()
);
create index ledger_person on ledger (person_id, id desc);
create index ledger_customer on ledger (customer_id, id desc);

create table idempotency (
  person_id uuid not null,
  key text not null,
  operation text not null,
  request_hash text not null,
  response text not null,
  created_at timestamptz not null default clock_timestamp(),
  primary key (person_id, operation, key)
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
