-- The operator's exact host:port exceptions to the address policy (see allowed-destinations.ts).
alter table programme_settings add column allowed_destinations text[] not null default '{}'
  constraint allowed_destinations_bounded check (cardinality(allowed_destinations) <= 100);
