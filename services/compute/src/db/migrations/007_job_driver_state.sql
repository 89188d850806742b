-- A driver's progress on a job (the LXD operation a step waits on): kept in the row so a compute
-- restart resumes the job where it stood instead of starting the provider's work again.
alter table jobs add column driver_state jsonb not null default '{}';

-- The host port forwarded to the machine's SSH port, where a driver reaches SSH that way (the lxd
-- driver's proxy device); shown as instance.ssh_port.
alter table machines add column ssh_port int;
