-- What a machine was doing when its service was suspended (running or stopped): suspension stops
-- it, and unsuspension starts it again only if it was running. Null while the service is not
-- suspended (and once the unsuspension has been acted on).
alter table machines add column state_before_suspension text;
