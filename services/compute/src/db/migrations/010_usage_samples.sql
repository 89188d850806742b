-- Usage history (GET /vps/{id}/stats?range=...): each sampling pass adds one reading per machine to
-- one bucket of every tier (1-minute buckets kept an hour, 5-minute a day, 30-minute a week,
-- 2-hour a month; services/compute/src/usage-tiers.ts). A bucket keeps sums and a count, not an
-- average, so readings from any number of passes or replicas fold in exactly and a reader divides.
create table usage_buckets (
  service_id uuid not null,
  step_s int not null,
  bucket_at timestamptz not null,
  samples int not null,
  cpu_percent_sum double precision not null,
  memory_used_mb_sum double precision not null,
  memory_total_mb int not null,
  disk_used_gb_sum double precision not null,
  disk_total_gb int not null,
  -- Network rates (bytes a second) need two readings, so they have their own count.
  net_samples int not null,
  rx_bps_sum double precision not null,
  tx_bps_sum double precision not null,
  primary key (service_id, step_s, bucket_at)
);
-- The pruning in each pass finds a tier's old buckets without reading the whole table.
create index usage_buckets_age on usage_buckets (step_s, bucket_at);
