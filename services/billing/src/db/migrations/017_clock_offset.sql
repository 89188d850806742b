-- How far billing's clock has been moved forward (clock.ts): kept here so a billing restart, or a
-- second replica, reads the same "now" as the process that moved it. Moving it is possible only
-- with BILLING_CLOCK_CONTROL=true (tests and npm start), refused in production: there it stays 0.
create table clock_offset (
  one boolean primary key default true check (one),
  offset_ms bigint not null default 0 check (offset_ms >= 0)
);
insert into clock_offset default values;
