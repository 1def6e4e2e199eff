-- PostgreSQL refuses a tsvector over 1 MiB, so indexing whole lines made the import or append
-- of a large tool output fail. The text index (and the search, which must use the same
-- expression) reads each line's first 100,000 characters.
DROP INDEX IF EXISTS ctxkit_entries_text;
CREATE INDEX ctxkit_entries_text ON ctxkit_entries USING gin (to_tsvector('simple', left(line, 100000)));
