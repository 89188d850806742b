-- Staff money writes (a desk credit adjustment, a bank-transfer confirmation) by their idempotency
-- key, the admin panel's audit entry id. The key is unique, so the same write sent twice credits
-- once (the second finds the first's row and answers its result). A key whose caller lost the
-- answer is settled by DeskSettleWrite: it finds the committed row, or inserts an 'abandoned' one
-- that fences the key, so the write still in flight (if any) conflicts and can never commit later.
create table staff_writes (
  idempotency_key uuid primary key,
  state text not null check (state in ('committed', 'abandoned')),
  -- The ledger entry the write made; unique: one key per entry.
  ledger_id bigint unique references ledger(id),
  created_at timestamptz not null default clock_timestamp()
);

-- Who made a ledger entry by hand: 'admin-panel' (then staff_id names the signed-in staff member)
-- or 'admin' (the admin command, no staff member). Taken from the caller's certificate, never from
-- a field the caller fills in. Null: an entry no person made.
alter table ledger add column operator text;
