-- One person per e-mail address in a team (a customer's people, owner included), compared
-- lower-cased and enforced by the index, so a reloaded invite or two owners inviting together
-- cannot add the same person twice. Removed people do not count: someone removed can be invited
-- again. People who already shared an address in a team before this migration keep their rows (the
-- oldest holds the claim, the later ones are marked and left out of the index), so an existing
-- database still migrates; no new duplicate can be made.
alter table people add column email_shared_before_unique boolean not null default false;

update people p set email_shared_before_unique = true
  where p.removed_at is null
    and exists (
      select 1 from people o
      where o.customer_id = p.customer_id and o.removed_at is null
        and lower(o.email) = lower(p.email) and (o.created_at, o.id) < (p.created_at, p.id)
    );

create unique index people_team_email on people (customer_id, lower(email))
  where removed_at is null and not email_shared_before_unique;
