-- A staff write whose answer was lost (deadline, unavailable) is recorded 'unknown', never
-- 'failed': it may have committed. The panel settles it with the service that owns the data and
-- finishes the row with the outcome that service reports.
alter table staff_audit drop constraint staff_audit_outcome_check;
alter table staff_audit add constraint staff_audit_outcome_check
  check (outcome in ('pending', 'unknown', 'succeeded', 'failed'));
