-- Issue 28 §2: a service's n-th due date is its anchor (the day of month its first term started)
-- plus n cycles, clamped to the month's last day, never the previous clamped date plus a cycle.
-- Add-ons take theirs from started_at (their first term's start). Null: the anchor is the day of
-- the due date at hand (hourly services, which have no monthly terms).
alter table services add column anchor_day smallint check (anchor_day between 1 and 31);

-- Existing services: from their first term. Its end (the first due date: the earliest term a
-- renewal was issued for, else the current due date) carries the anchor day unless it was clamped
-- to a month's end; then the day the service was created (its first term's start) says which.
with first_due as (
  select s.id, s.created_at, coalesce(
    (select min(r.term_start) from renewal_terms r where r.item_id = s.id), s.next_due_date) as due
  from services s where s.cycle <> 'hourly'
)
update services s set anchor_day = case
  when extract(day from (f.due at time zone 'UTC') + interval '1 day') <> 1
    then extract(day from f.due at time zone 'UTC')
  else greatest(extract(day from f.due at time zone 'UTC'), extract(day from f.created_at at time zone 'UTC'))
end
from first_due f where f.id = s.id;
