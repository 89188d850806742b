-- Each customer's private network on an LXD endpoint (services/compute/src/lxd/network.ts): one
-- bridge per customer and endpoint, numbered by its subnet of the configured pool. A machine's own
-- address is kept in its driver_state (network.address); the row only reserves the subnet.
create table lxd_networks (
  endpoint text not null,
  customer_id uuid not null,
  subnet_index int not null,
  created_at timestamptz not null default now(),
  primary key (endpoint, customer_id),
  unique (endpoint, subnet_index)
);
