-- A person's message may carry images and elements selected in the
-- preview: JSON (`runtime::attachment::Attachments`), NULL when none. The
-- images' bytes are files under `<data_dir>/projects/<id>/images/`, named
-- after their SHA-256.
ALTER TABLE messages ADD COLUMN attachments TEXT;
