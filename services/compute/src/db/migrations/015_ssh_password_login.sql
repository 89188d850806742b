-- Whether root may log in over SSH with a password (issue 30 §5): a per-machine choice, off unless
-- the customer turns it on with a password reset. The driver writes it into the machine's sshd.
alter table machines add column ssh_password_login boolean not null default false;
