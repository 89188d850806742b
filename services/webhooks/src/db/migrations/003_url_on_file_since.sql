-- When the partner's current URL went on file (kept when the URL is changed, reset when it is
-- cleared and set again). An event is queued only if a URL was on file when the event occurred,
-- however late the consumer reads it. Rows that predate this column count as always on file.
alter table partner_webhooks add column on_file_since timestamptz not null default '-infinity';
alter table partner_webhooks alter column on_file_since set default clock_timestamp();
