-- One customer per e-mail address, compared lower-cased, enforced by the index so two concurrent
-- sign-ups cannot both win. Customers that already shared an address before this migration keep
-- it (the oldest holds the claim, the later ones are marked and left out of the index), so an
-- existing development database still migrates; no new duplicate can be made.
alter table customers add column email_shared_before_unique boolean not null default false;

update customers c set email_shared_before_unique = true
  where exists (
    select 1 from customers o
    where lower(o.email) = lower(c.email) and (o.created_at, o.id) < (c.created_at, c.id)
  );

create unique index customers_email_normalised on customers (lower(email))
  where not email_shared_before_unique;
