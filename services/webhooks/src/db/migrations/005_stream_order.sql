-- The event's position in the NATS stream. Two webhooks replicas consume the stream side by side
-- and may commit a later batch before an earlier one; a pass takes a delivery only once every
-- event before it in the stream has been stored (the consumer's ack floor), so a partner's order
-- survives the race. Null for deliveries made here (test events), which wait for nothing.
alter table deliveries add column stream_seq bigint;
