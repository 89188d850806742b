-- A quote of an upgrade's price (GET /services/{id}/upgrades) holds until expires_at: asked again,
-- the same amount is shown; an upgrade requested before then is invoiced at exactly that amount,
-- and its invoice holds it for payment until then (issue 28 §5). A quote is only for the basis it
-- was made on (the service's price and paid-up date, the target's price): any change makes a new one.
create table upgrade_quotes (
  service_id uuid not null references services(id),
  to_product_id uuid not null,
  amount numeric(18,4) not null,
  service_amount numeric(18,4) not null,
  target_price numeric(18,4) not null,
  priced_until timestamptz not null,
  priced_at timestamptz not null,
  expires_at timestamptz not null,
  primary key (service_id, to_product_id)
);

-- The instant an upgrade's price covers from (its quote's, or its request's); its price holds for
-- payment until priced_at plus the hold (upgrade-pricing.ts). Earlier rows count from created_at.
alter table upgrades add column priced_at timestamptz;
