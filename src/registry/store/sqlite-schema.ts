// The store's schema on SQLite: one ordered list of migrations. A migration is never edited once
// released; add a new one. (PostgreSQL's schema is postgres-schema.ts; the columns match, with
// JSON and lists as JSON text, times as ISO 8601 text in UTC and booleans as 0 or 1.)
import type { Migration } from "./dialect.js";

/** The current time as stored: ISO 8601 in UTC with milliseconds, as Date.toISOString(). */
const NOW = `(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "initial",
    sql: `
CREATE TABLE store_generation (value integer NOT NULL);

INSERT INTO store_generation (value) VALUES (0);

CREATE TABLE sources (
  name text PRIMARY KEY,
  kind text NOT NULL,
  config text NOT NULL,
  origin text NOT NULL CHECK (origin IN ('config', 'api')),
  created_at text NOT NULL DEFAULT ${NOW},
  updated_at text NOT NULL DEFAULT ${NOW}
);

CREATE TABLE registries (
  name text PRIMARY KEY,
  sources text NOT NULL,
  claims text,
  origin text NOT NULL CHECK (origin IN ('config', 'api')),
  created_at text NOT NULL DEFAULT ${NOW},
  updated_at text NOT NULL DEFAULT ${NOW}
);

CREATE TABLE source_status (
  source text PRIMARY KEY,
  phase text NOT NULL,
  last_attempt text,
  last_success text,
  message text,
  entry_count integer NOT NULL DEFAULT 0,
  content_hash text
);

CREATE TABLE entries (
  id integer PRIMARY KEY,
  source text NOT NULL,
  name text NOT NULL,
  version text NOT NULL,
  server text NOT NULL,
  search text NOT NULL,
  claims text,
  status text NOT NULL DEFAULT 'active',
  status_message text,
  status_changed_at text,
  digest text NOT NULL,
  is_latest integer NOT NULL DEFAULT 0,
  published_at text NOT NULL DEFAULT ${NOW},
  updated_at text NOT NULL DEFAULT ${NOW},
  UNIQUE (source, name, version)
);

CREATE INDEX entries_name_version ON entries (name, version);

CREATE INDEX entries_updated_at ON entries (updated_at);

CREATE TABLE entries_staging (
  sync_id text NOT NULL,
  name text NOT NULL,
  version text NOT NULL,
  server text NOT NULL,
  search text NOT NULL,
  claims text,
  status text NOT NULL,
  digest text NOT NULL,
  is_latest integer NOT NULL DEFAULT 0,
  staged_at text NOT NULL DEFAULT ${NOW},
  PRIMARY KEY (sync_id, name, version)
);
`,
  },
  {
    version: 2,
    name: "search trigram index",
    // Substring search through FTS5's trigram tokenizer over entries.search (an external
    // content table: the text is stored once, in entries, keyed by its integer id, which VACUUM
    // keeps). detail=none keeps only which entries hold each trigram, the least to write and
    // store; the query asks for every trigram of the term and then checks the substring itself.
    // Triggers keep the index in step with entries.
    sql: `
CREATE VIRTUAL TABLE entries_search USING fts5(
  search, content = 'entries', content_rowid = 'id', tokenize = 'trigram', detail = 'none'
);

CREATE TRIGGER entries_search_insert AFTER INSERT ON entries BEGIN INSERT INTO entries_search (rowid, search) VALUES (new.id, new.search); END;

CREATE TRIGGER entries_search_delete AFTER DELETE ON entries BEGIN INSERT INTO entries_search (entries_search, rowid, search) VALUES ('delete', old.id, old.search); END;

CREATE TRIGGER entries_search_update AFTER UPDATE OF search ON entries BEGIN INSERT INTO entries_search (entries_search, rowid, search) VALUES ('delete', old.id, old.search); INSERT INTO entries_search (rowid, search) VALUES (new.id, new.search); END;
`,
  },
  {
    version: 3,
    name: "the path an api source answered on",
    sql: `
ALTER TABLE source_status ADD COLUMN api_path text;
`,
  },
  {
    version: 4,
    name: "sync attempts since the last success",
    sql: `
ALTER TABLE source_status ADD COLUMN attempt_count integer NOT NULL DEFAULT 0;
`,
  },
];
