//! Database roles for machines and readers.
//!
//! The schema creates two group roles: `agentlog_pusher` and
//! `agentlog_reader`. [`PgIndex::grant`] creates (or updates) a login role
//! in one of them. Row-level security on every table lets a pusher insert,
//! see, change and delete only the rows it pushed (the `owner` column, set
//! to the role's name), so one machine can neither read nor remove
//! another's sessions; a reader reads everything and changes nothing. The
//! same by hand, as the database owner:
//!
//! ```sql
//! CREATE ROLE laptop1 LOGIN PASSWORD '…' IN ROLE agentlog_pusher;
//! CREATE ROLE dashboard LOGIN PASSWORD '…' IN ROLE agentlog_reader;
//! ```
//!
//! A machine name belongs to the role that first pushed under it;
//! [`PgIndex::bind_machine`] gives a name to a role (before its first
//! push, or taking it back from a role that took it).

use crate::{PgError, PgIndex};

/// What a role may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Push its own sessions; see only those.
    Push,
    /// Read every session.
    Read,
}

impl Access {
    fn group(self) -> &'static str {
        match self {
            Access::Push => "agentlog_pusher",
            Access::Read => "agentlog_reader",
        }
    }
}

impl PgIndex {
    /// Creates the login role `name` with `password` (or changes the
    /// password of an existing one) and gives it `access`. Needs a
    /// connection as the database owner (or a role with CREATEROLE).
    pub fn grant(&self, name: &str, password: &str, access: Access) -> Result<(), PgError> {
        if name.is_empty() || name.len() > 63 {
            return Err(PgError::Data {
                url: self.url.clone(),
                message: format!("{name:?}: a role name has 1 to 63 characters"),
            });
        }
        let exists: bool = self
            .db()?
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)",
                &[&name],
            )
            .map_err(|e| self.err("looking up the role", &e))?
            .get(0);
        let template = if exists {
            "ALTER ROLE %I LOGIN PASSWORD %L"
        } else {
            "CREATE ROLE %I LOGIN PASSWORD %L"
        };
        let statements: Vec<String> = self.db()?
            .query_one(
                "SELECT format($1, $2::text, $3::text), format('GRANT %I TO %I', $4::text, $2::text)",
                &[&template, &name, &password, &access.group()],
            )
            .map(|r| vec![r.get(0), r.get(1)])
            .map_err(|e| self.err("preparing the role", &e))?;
        let mut conn = self.db()?;
        let mut tx = conn
            .transaction()
            .map_err(|e| PgError::sql(&self.url, "starting the transaction", &e))?;
        for s in &statements {
            tx.batch_execute(s)
                .map_err(|e| PgError::sql(&self.url, &format!("setting up role {name}"), &e))?;
        }
        tx.commit()
            .map_err(|e| PgError::sql(&self.url, "committing", &e))
    }

    /// Binds the machine name `machine` to the push role `role`: only it
    /// may push under the name from now on. Rows another role pushed under
    /// the name are removed (readers would take them for that machine's);
    /// returns how many files those were. Needs the database owner.
    pub fn bind_machine(&self, machine: &str, role: &str) -> Result<u64, PgError> {
        let url = self.url.clone();
        let err = |what: &str, e: &postgres::Error| {
            PgError::sql(
                &url,
                &format!("binding machine {machine:?} to {role}: {what}"),
                e,
            )
        };
        let mut conn = self.db()?;
        let mut tx = conn
            .transaction()
            .map_err(|e| err("starting the transaction", &e))?;
        let is_role: bool = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)",
                &[&role],
            )
            .map_err(|e| err("looking up the role", &e))?
            .get(0);
        if !is_role {
            return Err(PgError::Data {
                url: self.url.clone(),
                message: format!("no role {role:?} (create it first)"),
            });
        }
        tx.execute(
            "INSERT INTO machines(name, owner) VALUES ($1, $2)
             ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, claimed_at = now()",
            &[&machine, &role],
        )
        .map_err(|e| err("recording the name", &e))?;
        // The responses whose first row may change once the rows go.
        let responses: Vec<String> = tx
            .query_one(
                "SELECT coalesce(array_agg(DISTINCT u.response_id), '{}') FROM usage u
                 JOIN files f ON f.id = u.session
                 WHERE f.machine = $1 AND f.owner <> $2 AND u.response_id IS NOT NULL",
                &[&machine, &role],
            )
            .map_err(|e| err("reading the responses of the rows to remove", &e))?
            .get(0);
        if !responses.is_empty() {
            tx.execute("SELECT agentlog_lock_responses($1)", &[&responses])
                .map_err(|e| err("waiting for their responses", &e))?;
        }
        let removed = tx
            .execute(
                "DELETE FROM files WHERE machine = $1 AND owner <> $2",
                &[&machine, &role],
            )
            .map_err(|e| err("removing another role's rows", &e))?;
        if !responses.is_empty() {
            tx.execute("SELECT agentlog_recount($1)", &[&responses])
                .map_err(|e| err("recounting their responses", &e))?;
        }
        tx.commit().map_err(|e| err("committing", &e))?;
        Ok(removed)
    }
}
