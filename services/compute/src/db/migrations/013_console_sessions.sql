-- The audit record of web consoles (issue 29 §4): one row per console opened on a VPS, with who
-- opened it (the person, or the API key whose ticket was used), how, and when and why it closed.
-- Kept like jobs: a console is root access to the machine, so support must be able to say who had it.
create table console_sessions (
  id uuid primary key,
  service_id uuid not null,
  customer_id uuid not null,
  -- The signed-in person (portal) or the key's person; key_id is set when an API ticket opened it.
  person_id text not null default '',
  key_id text not null default '',
  via text not null check (via in ('portal', 'api')),
  provider text not null,
  opened_at timestamptz not null default now(),
  closed_at timestamptz,
  -- ended (the console's own end or the caller leaving), suspended, terminated, stopped, shutdown
  close_reason text
);
create index console_sessions_service on console_sessions (service_id, opened_at desc);
