-- Copies left by jobs that failed before a failure was applied to its copy (issue 30: a backup read
-- `creating` for ever and its restore answered 409): one being made leaves the list, one being
-- restored is available again. Copies of terminated services leave the list: they ended with it.
update copies c set status = 'deleted'
  where c.status = 'creating'
    and exists (select 1 from jobs j where j.copy_id = c.id and j.status = 'failed');
update copies c set status = 'available'
  where c.status = 'restoring'
    and not exists (select 1 from jobs j where j.copy_id = c.id and j.status = 'running');
update copies c set status = 'deleted'
  from machines m
  where m.service_id = c.service_id and m.service_status = 'terminated' and c.status <> 'deleted';

-- When the provider found the machine's instance gone without the platform removing it (a
-- container deleted behind its back): the machine keeps its instance record, reads `error`, and
-- only a rebuild (reinstall, backup restore) is taken until one succeeds. Staff see it as lost.
alter table machines add column if not exists lost_at timestamptz;
