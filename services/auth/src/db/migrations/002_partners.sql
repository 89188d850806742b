create table partners (
  customer_id uuid primary key references customers(id),
  status text not null default 'pending' check (status in ('pending', 'active', 'suspended')),
  -- HMAC needs the secret itself, so it is stored as is; only auth and the webhooks service read it.
  signing_secret text,
  secret_rotated_at timestamptz,
  created_at timestamptz not null default clock_timestamp()
);
