-- A provider driver's own per-machine state (the simulator's failure injection, a real driver's
-- VM id): only the driver reads it, so no column of the schema is about one provider.
alter table machines add column driver_state jsonb not null default '{}';
update machines set driver_state = jsonb_build_object('fail_build', fail_build, 'controller_fails', controller_fails)
  where provider = 'simulator';
alter table machines drop column fail_build, drop column controller_fails;

-- Jobs are leased to the worker that calls the driver, so no row lock is held during the call:
-- `claim` names the worker that may record the outcome, `lease_until` when another may take over.
alter table jobs add column claim uuid, add column lease_until timestamptz;
