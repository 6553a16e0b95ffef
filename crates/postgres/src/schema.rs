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
pub const SCHEMA_VERSION: u32 = 3;

/// Key of the advisory lock held while migrating.
const MIGRATE_LOCK: i64 = 0x6167_656e_746c_6f67; // "agentlog"

/// The migrations, oldest first.
const MIGRATIONS: &[(&str, &str)] = &[
    ("V1__sessions", V1),
    ("V2__search_and_counted", V2),
    ("V3__machine_owners", V3),
];

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

/// Search and stats that read only what they need.
///
/// `doc_words` takes each entry's `tsvector` out of `docs`: a search walks
/// the newest entries testing their words, and a narrow row is a third of
/// the reading of a row that also holds the entry's text. Its rows go with
/// their entries' (a trigger on `docs`, which costs nothing per row pushed
/// where a foreign key would look each one up). New words wait in the GIN
/// index's pending list until it holds 256 kB (not the default 4 MB): every
/// search reads the whole list, 2 ms at 4 MB, and pushes measured no slower.
///
/// `usage.counted` says whether a row counts in the stats: every row
/// without a response id, and the first row (lowest id) of each response
/// id, wherever it was pushed from. A push keeps it true by calling
/// `agentlog_recount` with the response ids it added or removed; the
/// function runs as the schema's owner because the first row of a response
/// may belong to another machine, which a pusher cannot see. Stats then sum
/// the counted rows instead of grouping every response id at each query.
/// A push that added many entries calls `agentlog_after_bulk_push` (as the
/// owner: analyzing and cleaning an index are the owner's) so that the
/// searches right after it are planned from statistics.
/// `usage.day` is the UTC day of a row (days since 1970), a column so that
/// the planner knows how many days there are and groups them in a hash.
const V2: &str = "
CREATE TABLE doc_words(
  id bigint PRIMARY KEY,
  session bigint NOT NULL,
  owner name NOT NULL DEFAULT current_user,
  ts_ms bigint,
  words tsvector NOT NULL
);
CREATE FUNCTION agentlog_docs_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM doc_words w USING gone g WHERE w.id = g.id;
  RETURN NULL;
END $$;
CREATE TRIGGER docs_gone AFTER DELETE ON docs REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION agentlog_docs_gone();
INSERT INTO doc_words(id, session, owner, ts_ms, words)
  SELECT id, session, owner, ts_ms, words FROM docs ORDER BY id;
DROP INDEX docs_words;
ALTER TABLE docs DROP COLUMN words;
CREATE INDEX doc_words_words ON doc_words USING gin(words) WITH (gin_pending_list_limit = 256);
GRANT SELECT, INSERT, UPDATE, DELETE ON doc_words TO agentlog_pusher;
GRANT SELECT ON doc_words TO agentlog_reader;
ALTER TABLE doc_words ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON doc_words TO agentlog_pusher
  USING (owner = current_user) WITH CHECK (owner = current_user);
CREATE POLICY read_all ON doc_words FOR SELECT TO agentlog_reader USING (true);

DROP INDEX usage_response;
CREATE INDEX usage_response ON usage(response_id, id);
ALTER TABLE usage ADD COLUMN counted boolean NOT NULL DEFAULT true;
ALTER TABLE usage ADD COLUMN day integer GENERATED ALWAYS AS
  (((ts_ms - ((ts_ms % 86400000) + 86400000) % 86400000) / 86400000)::integer) STORED;
UPDATE usage SET counted = false
 WHERE response_id IS NOT NULL
   AND id NOT IN (SELECT min(id) FROM usage WHERE response_id IS NOT NULL GROUP BY response_id);

-- Pushes touching the same response ids wait for each other (locks taken
-- in one order, held to the end of the transaction), so each recount sees
-- the other's committed rows. A push that deletes rows takes them first:
-- deleting, then waiting for a lock held by a recount waiting on the
-- deleted rows, would deadlock.
CREATE FUNCTION agentlog_lock_responses(ids text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  FOR r IN SELECT DISTINCT x FROM unnest(ids) x WHERE x IS NOT NULL ORDER BY x LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended(r, 0));
  END LOOP;
END $$;
GRANT EXECUTE ON FUNCTION agentlog_lock_responses(text[]) TO agentlog_pusher;
CREATE FUNCTION agentlog_recount(ids text[]) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  PERFORM agentlog_lock_responses(ids);
  -- Each row of these responses found by the index, and the first row of
  -- its response too (the index holds ids in order).
  UPDATE usage u SET counted = NOT u.counted
   WHERE u.response_id = ANY(ids)
     AND u.counted <> (u.id = (SELECT min(m.id) FROM usage m
                               WHERE m.response_id = u.response_id));
END $$;
CREATE FUNCTION agentlog_after_bulk_push() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  PERFORM gin_clean_pending_list('doc_words_words'::regclass);
  ANALYZE files, sessions, docs, doc_words, usage;
END $$;
REVOKE ALL ON FUNCTION agentlog_after_bulk_push() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION agentlog_after_bulk_push() TO agentlog_pusher;
REVOKE ALL ON FUNCTION agentlog_recount(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION agentlog_recount(text[]) TO agentlog_pusher;
";

/// Machine names belong to roles.
///
/// `machines` holds each machine name and the role it belongs to: the role
/// that first pushed under it (a push claims its name before sending
/// anything), or the one the database owner bound it to
/// ([`crate::PgIndex::bind_machine`]). A pusher may add rows to `files`
/// and `sessions` only under a name of its own, so one role can neither
/// pass its sessions off as another machine's nor take a machine's paths
/// before it pushes them. A pusher sees only its own names: a claim of a
/// name that is taken fails without saying whose it is. The names in use
/// before go to the role that pushed under them first.
const V3: &str = "
CREATE TABLE machines(
  name text PRIMARY KEY,
  owner name NOT NULL DEFAULT current_user,
  claimed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO machines(name, owner)
  SELECT DISTINCT ON (machine) machine, owner FROM files ORDER BY machine, id;
GRANT SELECT, INSERT ON machines TO agentlog_pusher;
GRANT SELECT ON machines TO agentlog_reader;
ALTER TABLE machines ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_names ON machines TO agentlog_pusher
  USING (owner = current_user) WITH CHECK (owner = current_user);
CREATE POLICY read_all ON machines FOR SELECT TO agentlog_reader USING (true);
DROP POLICY own_rows ON files;
CREATE POLICY own_rows ON files TO agentlog_pusher
  USING (owner = current_user)
  WITH CHECK (owner = current_user AND EXISTS (
    SELECT 1 FROM machines m WHERE m.name = files.machine AND m.owner = current_user));
DROP POLICY own_rows ON sessions;
CREATE POLICY own_rows ON sessions TO agentlog_pusher
  USING (owner = current_user)
  WITH CHECK (owner = current_user AND EXISTS (
    SELECT 1 FROM machines m WHERE m.name = sessions.machine AND m.owner = current_user));
";

/// Returns the schema version recorded on the server (0 when none).
pub fn server_version(client: &mut postgres::Client, url: &str) -> Result<u32, PgError> {
    // One round trip: a server without the table has no schema yet.
    match client.query_typed_one("SELECT max(version) FROM refinery_schema_history", &[]) {
        Ok(row) => Ok(row.get::<_, Option<i32>>(0).unwrap_or(0).max(0) as u32),
        Err(e) if e.code() == Some(&postgres::error::SqlState::UNDEFINED_TABLE) => Ok(0),
        Err(e) => Err(PgError::sql(url, "reading the schema version", &e)),
    }
}

/// Says whether this agentlog can read a server at schema version `v`
/// without migrating: an error naming the difference when not.
pub fn verdict(url: &str, v: u32) -> Result<(), PgError> {
    if v > SCHEMA_VERSION {
        return Err(PgError::NewerSchema {
            url: url.to_string(),
            server: v,
            ours: SCHEMA_VERSION,
        });
    }
    if v < SCHEMA_VERSION {
        return Err(PgError::NotMigrated {
            url: url.to_string(),
            server: v,
            ours: SCHEMA_VERSION,
        });
    }
    Ok(())
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
    match verdict(url, v) {
        Ok(()) => return Ok(Vec::new()),
        Err(PgError::NotMigrated { .. }) if migrate => {}
        Err(e) => return Err(e),
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
    if let Err(e @ PgError::NewerSchema { .. }) = verdict(url, v) {
        return Err(e);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A database at version 1 with entries and usage (a response in two
    /// files) is migrated to version 2: the words move to `doc_words`,
    /// each response is counted once and rows get their day.
    #[test]
    fn migrates_version_1_with_its_rows() {
        let Some(pg) = crate::throwaway::Throwaway::for_test("migrates_version_1_with_its_rows")
        else {
            return;
        };
        let url = pg.database("v1").unwrap();
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        let v1 = [Migration::unapplied(MIGRATIONS[0].0, MIGRATIONS[0].1).unwrap()];
        refinery_core::Runner::new(&v1).run(&mut c).unwrap();
        assert_eq!(server_version(&mut c, &url).unwrap(), 1);
        c.batch_execute(
            "INSERT INTO files(id, machine, username, path, format, size, mtime_ns, lines,
               head_hash, tail_hash)
             VALUES (1, 'm', 'u', '/a', 'claude', 0, 0, 0, 0, 0),
                    (2, 'm', 'u', '/b', 'claude', 0, 0, 0, 0, 0);
             INSERT INTO sessions(id, machine, username, session_id, agent, format, path,
               entries, messages, user_messages, assistant_messages, tool_calls, diagnostics)
             VALUES (1, 'm', 'u', 'sa', 'claude', 'claude', '/a', 1, 1, 0, 1, 0, 0),
                    (2, 'm', 'u', 'sb', 'claude', 'claude', '/b', 1, 1, 0, 1, 0, 0);
             INSERT INTO docs(session, entry_id, ts_ms, kind, counted, tool_calls, tool_names,
               thinking_present, text, thinking, tools, output, words)
             VALUES (1, 'e1', 86400000, 'message', 1, 0, '{}', false, 'a parser', '', '', '',
                     'parser:2A'),
                    (2, 'e2', -1, 'message', 1, 0, '{}', false, 'old', '', '', '', 'old:1A');
             INSERT INTO usage(session, entry_id, ts_ms, model, response_id, input, output,
               cache_read, cache_write, reasoning)
             VALUES (1, 'e1', 86400000, 'm', 'r1', 5, 1, 0, 0, 0),
                    (2, 'e2', 86400001, 'm', 'r1', 5, 1, 0, 0, 0),
                    (2, 'e3', -1, 'm', NULL, 7, 1, 0, 0, 0),
                    (2, 'e4', NULL, 'm', 'r2', 9, 1, 0, 0, 0);",
        )
        .unwrap();
        assert_eq!(ensure(&mut c, &url, true).unwrap(), vec![2, 3]);
        let words: Vec<(String, i64)> = c
            .query(
                "SELECT w.words::text, w.session FROM doc_words w JOIN docs d ON d.id = w.id
                 ORDER BY w.id",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        assert_eq!(
            words,
            [("'parser':2A".to_string(), 1), ("'old':1A".to_string(), 2)]
        );
        let usage: Vec<(String, bool, Option<i32>)> = c
            .query("SELECT entry_id, counted, day FROM usage ORDER BY id", &[])
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        assert_eq!(
            usage,
            [
                ("e1".to_string(), true, Some(1)),
                ("e2".to_string(), false, Some(1)),
                ("e3".to_string(), true, Some(-1)),
                ("e4".to_string(), true, None),
            ]
        );
        // Deleting the counted row of r1 (with its session) and recounting
        // counts the other.
        c.batch_execute("DELETE FROM sessions WHERE id = 1; SELECT agentlog_recount('{r1}');")
            .unwrap();
        let counted: bool = c
            .query_one("SELECT counted FROM usage WHERE entry_id = 'e2'", &[])
            .unwrap()
            .get(0);
        assert!(counted);
        // The words of its entries went with them.
        let words: i64 = c
            .query_one("SELECT count(*) FROM doc_words", &[])
            .unwrap()
            .get(0);
        assert_eq!(words, 1);
        assert_eq!(ensure(&mut c, &url, true).unwrap(), Vec::<u32>::new());
    }
}
