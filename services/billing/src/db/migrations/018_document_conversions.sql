-- The proforma an invoice came from, looked up beside every listed invoice (records.ts
-- DOCUMENT_NAMES: "for PRO-…", so a converted proforma and its invoice read as one charge): an
-- index on the few rows that were converted, instead of a scan of documents per listed row.
create index documents_converted_to on documents (converted_to) where converted_to is not null;
