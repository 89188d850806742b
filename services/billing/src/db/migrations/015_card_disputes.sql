-- Card disputes and what staff must see of card payments (issue 28 §4).

-- A refund whose money was no longer on the balance (the credit had been spent): what could not be
-- taken back, kept on the top-up for staff (it was only in the event's detail text before).
alter table top_ups add column refund_shortfall numeric(18,4) not null default 0;
update top_ups t set refund_shortfall = s.short
from (
  select e.top_up_id, sum(m.parts[1]::numeric - m.parts[2]::numeric) as short
  from provider_events e,
    regexp_match(e.detail, '^refunded ([0-9]+\.[0-9]+) [A-Z]{3}, taken back ([0-9]+\.[0-9]+)$') as m(parts)
  where e.outcome = 'refund_debited' and e.top_up_id is not null
  group by e.top_up_id
) s
where s.top_up_id = t.id and s.short > 0;

-- One row per dispute the provider reported. Its events (opened, funds withdrawn, funds
-- reinstated, closed won or lost) meet here, so the credit is taken back once and given back once
-- whichever of them arrive, in whatever order, however often.
create table card_disputes (
  provider text not null,
  dispute_id text not null,
  top_up_id uuid not null references top_ups (id),
  amount numeric(18,4) not null check (amount >= 0),
  currency text not null,
  -- The provider's own status word (needs_response, under_review, won, lost, warning_closed, ...).
  status text not null,
  -- not_withdrawn: no money moved; withdrawn: the provider took it and the credit was taken back
  -- (taken) up to the balance (shortfall: the rest); reinstated: both came back.
  funds text not null default 'not_withdrawn' check (funds in ('not_withdrawn', 'withdrawn', 'reinstated')),
  taken numeric(18,4) not null default 0 check (taken >= 0),
  shortfall numeric(18,4) not null default 0 check (shortfall >= 0),
  opened_at timestamptz not null default clock_timestamp(),
  updated_at timestamptz not null default clock_timestamp(),
  primary key (provider, dispute_id)
);
create index card_disputes_top_up on card_disputes (top_up_id);

-- A paid event in another currency than its top-up's was recorded as if handled; it is flagged for
-- a person now (the staff view lists flagged and unmatched events).
update provider_events set outcome = 'flagged'
where outcome = 'recorded' and (detail like 'paid in %, the top-up is in %' or detail like 'refund in %, the top-up is in %');
create index provider_events_attention on provider_events (received_at desc)
  where outcome in ('unmatched', 'flagged');
