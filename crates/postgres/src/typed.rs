//! Statements sent with their parameters' types: one round trip each, no
//! statement prepared first (what a command that connects, asks and exits
//! wants).

use postgres::types::{ToSql, Type};

/// A statement's text and its parameters with their types, sent in one
/// round trip (no statement prepared first).
pub(crate) struct Typed {
    pub sql: String,
    params: Vec<(Box<dyn ToSql + Sync>, Type)>,
}

impl Typed {
    pub fn new() -> Typed {
        Typed {
            sql: String::new(),
            params: Vec::new(),
        }
    }

    /// Adds a parameter; returns its placeholder (`$n`).
    pub fn arg<T: ToSql + Sync + 'static>(&mut self, value: T, ty: Type) -> String {
        self.params.push((Box::new(value), ty));
        format!("${}", self.params.len())
    }

    /// Runs the statement.
    pub fn query(&self, db: &mut postgres::Client) -> Result<Vec<postgres::Row>, postgres::Error> {
        let params: Vec<(&(dyn ToSql + Sync), Type)> = self
            .params
            .iter()
            .map(|(v, t)| (v.as_ref(), t.clone()))
            .collect();
        db.query_typed(&self.sql, &params)
    }
}
