-- Issue 28 §3: an overdue service is suspended first and terminated later (or the same day, in
-- that order); a termination grace shorter than the suspension grace is refused (0: never
-- terminate). A row set so before this rule keeps its termination date, whose suspension now
-- comes with it: the suspension grace is lowered to the termination grace.
update billing_settings set suspend_grace_days = terminate_grace_days
where terminate_grace_days <> 0 and terminate_grace_days < suspend_grace_days;
alter table billing_settings add constraint billing_settings_grace_order
  check (terminate_grace_days = 0 or terminate_grace_days >= suspend_grace_days);

-- Issue 28 §3: credit that lands pays the person's open renewals. Every credit (a top-up by card
-- or transfer, a staff credit, a refund) is a positive ledger row, whatever path wrote it; in the
-- transaction that writes it, the person's renewals open at that moment are listed here and the
-- due pass is woken (late-credit.ts). The pass takes a row off while it holds the payer's balance,
-- which every credit holds too, so a credit landing meanwhile lists the renewal again.
create table credit_landed_renewals (
  document_id uuid primary key references documents(id),
  person_id uuid not null
);

create function credit_landed_mark() returns trigger language plpgsql
  set search_path from current as $$
begin
  insert into credit_landed_renewals (document_id, person_id)
    select d.id, d.person_id from documents d
    where d.person_id = new.person_id and d.status = 'unpaid' and d.purpose in ('renewal', 'addon')
      and exists (select 1 from renewal_terms r where r.document_id = d.id)
    on conflict do nothing;
  if found then
    perform pg_notify('billing_credit_landed', '');
  end if;
  return null;
end $$;

create trigger ledger_credit_landed after insert on ledger
  for each row when (new.amount > 0) execute function credit_landed_mark();
