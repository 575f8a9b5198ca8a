// The store's schema on PostgreSQL: one ordered list of migrations. A migration is never edited
// once released; add a new one. (The embedded store's schema is sqlite-schema.ts.)
import type { Migration } from "./dialect.js";

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "initial",
    sql: `
CREATE SEQUENCE store_generation;

CREATE TABLE sources (
  name text COLLATE "C" PRIMARY KEY,
  kind text NOT NULL,
  config jsonb NOT NULL,
  origin text NOT NULL CHECK (origin IN ('config', 'api')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE registries (
  name text COLLATE "C" PRIMARY KEY,
  sources text[] NOT NULL,
  claims jsonb,
  origin text NOT NULL CHECK (origin IN ('config', 'api')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE source_status (
  source text COLLATE "C" PRIMARY KEY,
  phase text NOT NULL,
  last_attempt timestamptz,
  last_success timestamptz,
  message text,
  entry_count integer NOT NULL DEFAULT 0,
  content_hash text
);

CREATE TABLE entries (
  source text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL,
  version text COLLATE "C" NOT NULL,
  server json NOT NULL,
  search text NOT NULL,
  claims jsonb,
  status text NOT NULL DEFAULT 'active',
  digest text NOT NULL,
  is_latest boolean NOT NULL DEFAULT false,
  published_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (source, name, version)
);
CREATE INDEX entries_name_version ON entries (name, version);
CREATE INDEX entries_updated_at ON entries (updated_at);

CREATE TABLE entries_staging (
  sync_id text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL,
  version text COLLATE "C" NOT NULL,
  server json NOT NULL,
  search text NOT NULL,
  claims jsonb,
  status text NOT NULL,
  digest text NOT NULL,
  is_latest boolean NOT NULL DEFAULT false,
  staged_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (sync_id, name, version)
);
`,
  },
  {
    version: 2,
    name: "search trigram index",
    // Case-insensitive substring search is `search LIKE '%term%'` over the lower-cased name,
    // title and description: a trigram GIN index answers it without reading every entry. The
    // migration user creates the extension (pg_trgm is trusted: the database owner may); the
    // application user needs no extra right to use it.
    sql: `
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE INDEX entries_search_trgm ON entries USING gin (search gin_trgm_ops);
`,
  },
  {
    version: 3,
    name: "version lifecycle status",
    // `status` (active | deprecated | deleted) is in the first migration; a status change
    // records why and when.
    sql: `
ALTER TABLE entries ADD COLUMN status_message text;

ALTER TABLE entries ADD COLUMN status_changed_at timestamptz;
`,
  },
  {
    version: 4,
    name: "search index with a small pending list",
    // A GIN index's fast update appends new entries to a pending list that every search reads
    // in full until it is merged into the index (by a vacuum, or by the insert that takes it
    // past gin_pending_list_limit, 4 MB by default): after a sync of thousands of entries each
    // search took milliseconds. Without fast update every row is inserted into the index on its
    // own, which made a sync of 100,000 entries five times slower. A 64 kB list keeps both
    // cheap: syncs still merge in bulk, searches read at most 64 kB of it.
    sql: `
ALTER INDEX entries_search_trgm SET (gin_pending_list_limit = 64);

SELECT gin_clean_pending_list('entries_search_trgm'::regclass);
`,
  },
  {
    version: 5,
    name: "the path an api source answered on",
    sql: `
ALTER TABLE source_status ADD COLUMN api_path text;
`,
  },
  {
    version: 6,
    name: "sync attempts since the last success",
    sql: `
ALTER TABLE source_status ADD COLUMN attempt_count integer NOT NULL DEFAULT 0;
`,
  },
];
