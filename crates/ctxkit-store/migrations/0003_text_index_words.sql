-- `sessions --grep` finds what the file store finds (`files.rs`): each word of the query, a run of
-- letters and digits in any case, a whole word of one entry line. The 'simple' parser alone kept a
-- URL, a host, a path, an address or a hyphenated token as one token, so `example` was not found in
-- `db.example.com`, nor `sk-ant` in `sk-ant-api03-…`. The index reads each line's first 100,000
-- characters with every ASCII character but a letter or a digit replaced by a space, so each word
-- is a token of its own. The search (`postgres/list.rs`, `SEARCHED_WORDS`) uses the same expression.
DROP INDEX IF EXISTS ctxkit_entries_text;
CREATE INDEX ctxkit_entries_text ON ctxkit_entries USING gin (to_tsvector('simple', regexp_replace(left(line, 100000), '[\x01-\x2F\x3A-\x40\x5B-\x60\x7B-\x7F]+', ' ', 'g')));
