-- Sign-in for the client portal and the admin panel. Hashes are scrypt, in the self-describing
-- form "scrypt$N$r$p$salt$hash" (base64url), so the cost can be raised later without a migration.
alter table people add column password_hash text;
alter table people add column removed_at timestamptz;
alter table staff add column password_hash text;

-- A person signs in by e-mail address, so an address may open only one person's sign-in at a time.
create unique index people_sign_in_email on people (lower(email))
  where password_hash is not null and removed_at is null;

-- One-time links with which a new person or staff member sets a password. Only the token's hash is
-- kept; a link works once and until it expires.
create table password_links (
  token_hash bytea primary key,
  realm text not null check (realm in ('portal', 'admin')),
  subject_id uuid not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default clock_timestamp()
);
create index password_links_created on password_links (created_at);
