-- A pay of an invoice from credit in one statement, so one round trip (document-pay.ts): the
-- Idempotency-Key's lock and stored answer, the payer's balance and the document locked (in that
-- order, as every payment locks them), the checks, then the balance, the ledger entry and the
-- document in one statement, and the key's answer. It runs in the caller's transaction, usually
-- the statement's own (autocommit): a refusal writes nothing and says why in `outcome`.
--
-- Documents whose payment sets something in motion (a proforma becomes an invoice; purposes in
-- p_engine_purposes have handlers in paid-dispatch.ts) are answered 'engine' with nothing
-- written: the caller pays them with the TypeScript engine (documents.ts), as before.
--
-- `body` is, for 'paid', {"row": {...}}: what the answer is made from (the amounts as exact
-- decimal text, the document as updated), stored as the key's answer too, so that a repeat is
-- made by the same code from the same text; for 'replay' the stored answer (either that form or
-- the engine's protobuf JSON); for refusals what the error names.
create function pay_from_credit(
  p_person uuid,
  p_customer uuid,
  p_document uuid,
  p_kind text,
  p_amount numeric,          -- null: the whole amount due
  p_amount_currency text,    -- the requested amount's currency, '' when none was named
  p_lock text,               -- the key's advisory lock name (idempotency.ts replay's)
  p_operation text,
  p_key text,                -- '' when the request carries no Idempotency-Key
  p_request_hash text,
  p_now timestamptz,         -- billing's clock (clock.ts), which tests may move
  p_engine_purposes text[],
  out outcome text,
  out body text)
language plpgsql as $$
declare
  stored_hash text;
  stored_response text;
  held numeric;
  held_currency text;
  doc documents%rowtype;
  due numeric;
  paying numeric;
begin
  if p_key <> '' then
    perform pg_advisory_xact_lock(hashtext(p_lock));
    select request_hash, response into stored_hash, stored_response from idempotency
      where person_id = p_person and operation = p_operation and key = p_key
        and created_at > now() - interval '24 hours';
    if found then
      if stored_hash <> p_request_hash then
        outcome := 'key_reused';
      else
        outcome := 'replay';
        body := stored_response;
      end if;
      return;
    end if;
  end if;

  select balance, currency into held, held_currency from balances where person_id = p_person for update;
  select * into doc from documents
    where id = p_document and customer_id = p_customer and kind = p_kind for update;
  if not found then
    outcome := 'not_found';
    return;
  end if;
  if doc.kind <> 'invoice' or doc.purpose = any(p_engine_purposes) then
    outcome := 'engine';
    return;
  end if;
  -- The refusals in the engine's order (document-handlers.ts and documents.ts settle).
  if p_amount is not null and p_amount_currency <> '' and p_amount_currency <> doc.currency then
    outcome := 'amount_currency';
    body := json_build_object('currency', doc.currency)::text;
    return;
  end if;
  if held_currency is not null and held_currency <> doc.currency then
    outcome := 'balance_currency';
    body := json_build_object('currency', doc.currency, 'held', held_currency)::text;
    return;
  end if;
  if doc.status <> 'unpaid' then
    outcome := 'conflict';
    body := json_build_object('kind', doc.kind, 'status', doc.status)::text;
    return;
  end if;
  due := doc.total - doc.amount_paid;
  paying := coalesce(p_amount, due);
  if paying <= 0 then
    outcome := 'amount_zero';
    return;
  end if;
  if paying > due then
    outcome := 'amount_over';
    body := json_build_object('due', due::text)::text;
    return;
  end if;
  if held is null or held < paying then
    outcome := 'insufficient';
    return;
  end if;

  -- The balance, its ledger entry and the document in one statement.
  with moved as (
    update balances set balance = balance - paying where person_id = p_person
    returning balance, currency),
  entry as (
    insert into ledger (person_id, customer_id, amount, balance_after, kind, description, document_id, currency, created_at)
    select p_person, p_customer, -paying, moved.balance, 'payment', 'Payment of ' || doc.kind || ' ' || doc.number,
           doc.id, moved.currency, p_now
    from moved
    returning balance_after),
  updated as (
    update documents set amount_paid = amount_paid + paying,
      status = case when paying = due then 'paid' else 'unpaid' end,
      paid_at = case when paying = due then p_now end
    where id = doc.id
    returning *)
  select jsonb_build_object('row', jsonb_build_object(
      'credit', paying::text,
      'balance', entry.balance_after::text,
      'remaining', (due - paying)::text,
      'fully_paid', paying = due,
      'document', jsonb_build_object(
        'id', u.id, 'kind', u.kind, 'number', u.number, 'customer_id', u.customer_id,
        'person_id', u.person_id, 'status', u.status, 'total', u.total::text,
        'amount_paid', u.amount_paid::text, 'currency', u.currency, 'purpose', u.purpose,
        'order_id', u.order_id, 'service_id', u.service_id, 'converted_to', u.converted_to,
        'created_at', u.created_at, 'due_date', u.due_date, 'paid_at', u.paid_at)))::text
    into body
  from updated u, entry;

  if p_key <> '' then
    insert into idempotency (person_id, operation, key, request_hash, response)
    values (p_person, p_operation, p_key, p_request_hash, body)
    on conflict (person_id, operation, key) do update
      set request_hash = excluded.request_hash, response = excluded.response, created_at = excluded.created_at;
  end if;
  outcome := 'paid';
end
$$;
