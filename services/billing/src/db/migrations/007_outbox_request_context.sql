-- The request an event was raised in: the relay sends both as NATS headers, so the consumer's
-- work joins the same request id and trace. Null for rows written outside a request.
alter table outbox add column request_id text, add column traceparent text;
