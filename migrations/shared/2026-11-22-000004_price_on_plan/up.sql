-- Price-on-plan leads: a quote records what made it, and a price-on-plan
-- quote the digest of its request, by which the same body sent again
-- finds it (pending or finished).
ALTER TABLE quotes ADD COLUMN kind TEXT NOT NULL DEFAULT 'quote';
ALTER TABLE quotes ADD COLUMN request_digest TEXT;
CREATE INDEX quotes_request ON quotes (partner_id, mode, request_digest);
