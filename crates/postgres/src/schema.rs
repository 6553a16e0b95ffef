//! The schema, as versioned migrations run by refinery.
//!
//! Each migration runs once, in order, in a transaction, and is recorded in
//! `refinery_schema_history`. Migrations run on connect when the schema is
//! behind (or with `agentlog db migrate`), under an advisory lock so that
//! machines connecting at once do not run them twice. A server whose schema
//! is newer than this agentlog is refused with an error saying so, before
//! anything is written.

use crate::{describe, PgError};
use refinery_core::Migration;

/// The schema version this agentlog writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// Key of the advisory lock held while migrating.
const MIGRATE_LOCK: i64 = 0x6167_656e_746c_6f67; // "agentlog"

/// The migrations, oldest first.
const MIGRATIONS: &[(&str, &str)] = &[("V1__sessions", V1)];

/// Tables: `files` is what was pushed of each session file (one row per
/// machine and path: bytes pushed, hashes to see a rewrite), `chunks` the
/// original bytes (deflate, one row per push of a file), `sessions` the
/// catalog (one per file, same id), `docs` one row per entry with its text
/// and a `tsvector` of its words (GIN), `usage` one row per model response.
///
/// Every row carries `owner`, the database role that pushed it. Row-level
/// security lets a member of `agentlog_pusher` see, change and delete only
/// its own rows, and a member of `agentlog_reader` read everything.
const V1: &str = "
CREATE TABLE files(
  id bigserial PRIMARY KEY,
  owner name NOT NULL DEFAULT current_user,
  machine text NOT NULL,
  username text NOT NULL,
  path text NOT NULL,
  format text NOT NULL,
  size bigint NOT NULL,
  mtime_ns bigint NOT NULL,
  lines bigint NOT NULL,
  head_hash bigint NOT NULL,
  tail_hash bigint NOT NULL,
  pushed_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE(machine, path)
);
CREATE TABLE chunks(
  file bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  owner name NOT NULL DEFAULT current_user,
  start_offset bigint NOT NULL,
  end_offset bigint NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY(file, start_offset)
);
CREATE TABLE sessions(
  id bigint PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
  owner name NOT NULL DEFAULT current_user,
  machine text NOT NULL,
  username text NOT NULL,
  session_id text NOT NULL,
  agent text NOT NULL,
  format text NOT NULL,
  path text NOT NULL,
  project text,
  title text,
  first_prompt text,
  created_ms bigint,
  updated_ms bigint,
  entries bigint NOT NULL,
  messages bigint NOT NULL,
  user_messages bigint NOT NULL,
  assistant_messages bigint NOT NULL,
  tool_calls bigint NOT NULL,
  diagnostics bigint NOT NULL
);
CREATE INDEX sessions_session_id ON sessions(session_id text_pattern_ops);
CREATE INDEX sessions_updated ON sessions(updated_ms);
CREATE TABLE docs(
  id bigserial PRIMARY KEY,
  session bigint NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  owner name NOT NULL DEFAULT current_user,
  entry_id text NOT NULL,
  line bigint,
  ts_ms bigint,
  role text,
  kind text NOT NULL,
  counted smallint NOT NULL,
  tool_calls integer NOT NULL,
  tool_names text[] NOT NULL,
  thinking_present boolean NOT NULL,
  text text NOT NULL,
  thinking text NOT NULL,
  tools text NOT NULL,
  output text NOT NULL,
  words tsvector NOT NULL
);
CREATE INDEX docs_words ON docs USING gin(words);
CREATE INDEX docs_session ON docs(session, line);
CREATE INDEX docs_ts ON docs(ts_ms);
CREATE TABLE usage(
  id bigserial PRIMARY KEY,
  session bigint NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  owner name NOT NULL DEFAULT current_user,
  entry_id text NOT NULL,
  line bigint,
  ts_ms bigint,
  model text,
  response_id text,
  input bigint NOT NULL,
  output bigint NOT NULL,
  cache_read bigint NOT NULL,
  cache_write bigint NOT NULL,
  reasoning bigint NOT NULL,
  cost_usd double precision
);
CREATE INDEX usage_session ON usage(session, line);
CREATE INDEX usage_response ON usage(response_id);
CREATE INDEX usage_ts ON usage(ts_ms);

DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'agentlog_pusher') THEN
    CREATE ROLE agentlog_pusher NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'agentlog_reader') THEN
    CREATE ROLE agentlog_reader NOLOGIN;
  END IF;
END $$;
GRANT USAGE ON SCHEMA public TO agentlog_pusher, agentlog_reader;
GRANT SELECT ON refinery_schema_history TO agentlog_pusher, agentlog_reader;
GRANT SELECT, INSERT, UPDATE, DELETE ON files, chunks, sessions, docs, usage TO agentlog_pusher;
GRANT USAGE ON SEQUENCE files_id_seq, docs_id_seq, usage_id_seq TO agentlog_pusher;
GRANT SELECT ON files, chunks, sessions, docs, usage TO agentlog_reader;
ALTER TABLE files ENABLE ROW LEVEL SECURITY;
ALTER TABLE chunks ENABLE ROW LEVEL SECURITY;
ALTER TABLE sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE docs ENABLE ROW LEVEL SECURITY;
ALTER TABLE usage ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON files TO agentlog_pusher
  USING (owner = current_user) WITH CHECK (owner = current_user);
CREATE POLICY own_rows ON chunks TO agentlog_pusher
  USING (owner = current_user) WITH CHECK (owner = current_user);
CREATE POLICY own_rows ON sessions TO agentlog_pusher
  USING (owner = current_user) WITH CHECK (owner = current_user);
CREATE POLICY own_rows ON docs TO agentlog_pusher
  USING (owner = current_user) WITH CHECK (owner = current_user);
CREATE POLICY own_rows ON usage TO agentlog_pusher
  USING (owner = current_user) WITH CHECK (owner = current_user);
CREATE POLICY read_all ON files FOR SELECT TO agentlog_reader USING (true);
CREATE POLICY read_all ON chunks FOR SELECT TO agentlog_reader USING (true);
CREATE POLICY read_all ON sessions FOR SELECT TO agentlog_reader USING (true);
CREATE POLICY read_all ON docs FOR SELECT TO agentlog_reader USING (true);
CREATE POLICY read_all ON usage FOR SELECT TO agentlog_reader USING (true);
";

/// Returns the schema version recorded on the server (0 when none).
pub fn server_version(client: &mut postgres::Client, url: &str) -> Result<u32, PgError> {
    let exists: bool = client
        .query_one(
            "SELECT to_regclass('refinery_schema_history') IS NOT NULL",
            &[],
        )
        .map_err(|e| PgError::sql(url, "reading the schema version", &e))?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let v: Option<i32> = client
        .query_one("SELECT max(version) FROM refinery_schema_history", &[])
        .map_err(|e| PgError::sql(url, "reading the schema version", &e))?
        .get(0);
    Ok(v.unwrap_or(0).max(0) as u32)
}

/// Checks the server's schema; runs the missing migrations when `migrate`
/// is set (else a behind schema is an error saying to migrate). Returns the
/// versions applied.
pub fn ensure(
    client: &mut postgres::Client,
    url: &str,
    migrate: bool,
) -> Result<Vec<u32>, PgError> {
    let v = server_version(client, url)?;
    if v > SCHEMA_VERSION {
        return Err(PgError::NewerSchema {
            url: url.to_string(),
            server: v,
            ours: SCHEMA_VERSION,
        });
    }
    if v == SCHEMA_VERSION {
        return Ok(Vec::new());
    }
    if !migrate {
        return Err(PgError::NotMigrated {
            url: url.to_string(),
            server: v,
            ours: SCHEMA_VERSION,
        });
    }
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATE_LOCK])
        .map_err(|e| PgError::sql(url, "waiting for the migration lock", &e))?;
    let result = run(client, url);
    let unlock = client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATE_LOCK])
        .map_err(|e| PgError::sql(url, "releasing the migration lock", &e));
    let applied = result?;
    unlock?;
    Ok(applied)
}

fn run(client: &mut postgres::Client, url: &str) -> Result<Vec<u32>, PgError> {
    // Another machine may have migrated while this one waited for the lock.
    let v = server_version(client, url)?;
    if v > SCHEMA_VERSION {
        return Err(PgError::NewerSchema {
            url: url.to_string(),
            server: v,
            ours: SCHEMA_VERSION,
        });
    }
    let migrations = MIGRATIONS
        .iter()
        .map(|(name, sql)| Migration::unapplied(name, sql))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PgError::Migration {
            url: url.to_string(),
            message: e.to_string(),
        })?;
    let report = refinery_core::Runner::new(&migrations)
        .set_abort_divergent(true)
        .set_abort_missing(true)
        .run(client)
        .map_err(|e| PgError::Migration {
            url: url.to_string(),
            message: match std::error::Error::source(&e) {
                Some(src) => format!("{e}: {}", describe_any(src)),
                None => e.to_string(),
            },
        })?;
    Ok(report
        .applied_migrations()
        .iter()
        .map(|m| m.version())
        .collect())
}

fn describe_any(e: &(dyn std::error::Error + 'static)) -> String {
    match e.downcast_ref::<postgres::Error>() {
        Some(pe) => describe(pe),
        None => e.to_string(),
    }
}
