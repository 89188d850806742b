-- Issue 28 §3: an overdue service is suspended first and terminated later (or the same day, in
-- that order); a termination grace shorter than the suspension grace is refused (0: never
-- terminate). A row set so before this rule keeps its termination date, whose suspension now
-- comes with it: the suspension grace is lowered to the termination grace.
update billing_settings set suspend_grace_days = terminate_grace_days
where terminate_grace_days <> 0 and terminate_grace_days < suspend_grace_days;
alter table billing_settings add constraint billing_settings_grace_order
  check (terminate_grace_days = 0 or terminate_grace_days >= suspend_grace_days);
