-- Marks the switch to typed, versioned stored documents: the Up run that
-- applies it rewrites the rows of the previous version once
-- (store_diesel::migrate::rewrite_documents).
SELECT 1;
