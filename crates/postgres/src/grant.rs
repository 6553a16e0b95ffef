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
}
