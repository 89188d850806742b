-- The request whose event a delivery carries (from the event's NATS headers), so the delivery
-- attempts, however late, log under the same request id and trace. Null when the event had none.
alter table deliveries add column request_id text, add column traceparent text;
