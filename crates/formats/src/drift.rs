//! The drift report: record types and fields a file holds that its reader
//! does not know, so a change in an agent's format shows up as a clear
//! message (`agentlog validate --drift`) instead of as missing data.
//!
//! Every format reports the records it kept as unknown
//! ([`EntryKind::Unknown`]); formats that know the full list of their
//! agent's record types and fields (from real files of named versions)
//! report more through [`Format::drift`](crate::Format::drift).
//!
//! ```
//! use agentlog_formats::drift::{Drift, DriftKind, Tally};
//! let mut t = Tally::default();
//! t.add(DriftKind::RecordType, "future.event", Some(3));
//! t.add(DriftKind::RecordType, "future.event", Some(9));
//! let items: Vec<Drift> = t.into_items();
//! assert_eq!(items[0].count, 2);
//! assert_eq!(items[0].first_line, Some(3));
//! ```

use crate::{Format, Read};
use agentlog_model::EntryKind;
use serde::Serialize;
use std::collections::BTreeMap;

/// What kind of thing a reader did not know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DriftKind {
    /// A record (line, event, row, part) type.
    RecordType,
    /// A field of a known record type (`type.field`).
    Field,
    /// The file as a whole: nothing in it is a record the reader knows
    /// (a new top-level layout), though the file is kept and listed.
    Layout,
}

impl DriftKind {
    /// The kind's name (`record_type`, `field`, `layout`), as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            DriftKind::RecordType => "record_type",
            DriftKind::Field => "field",
            DriftKind::Layout => "layout",
        }
    }

    /// The kind named `name` ([`DriftKind::as_str`]).
    pub fn parse(name: &str) -> Option<DriftKind> {
        [DriftKind::RecordType, DriftKind::Field, DriftKind::Layout]
            .into_iter()
            .find(|k| k.as_str() == name)
    }

    /// What it is, in words (`record type`, `field`, `file layout`).
    pub fn words(self) -> &'static str {
        match self {
            DriftKind::RecordType => "record type",
            DriftKind::Field => "field",
            DriftKind::Layout => "file layout",
        }
    }
}

/// The name of the one [`DriftKind::Layout`] item of a file.
pub const LAYOUT: &str = "(no record agentlog reads)";

/// One unknown record type or field, with how often it occurs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// Record type or field.
    pub kind: DriftKind,
    /// Its name (`type`, or `type.field` for a field).
    pub name: String,
    /// How many times it occurs.
    pub count: u64,
    /// The first line (or record number) it occurs on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_line: Option<u64>,
}

/// Counts unknown things as a reader finds them.
#[derive(Default, Debug)]
pub struct Tally {
    seen: BTreeMap<(DriftKind, String), (u64, Option<u64>)>,
}

impl Tally {
    /// Counts one occurrence of `name` at `line`.
    pub fn add(&mut self, kind: DriftKind, name: &str, line: Option<u64>) {
        let e = self
            .seen
            .entry((kind, name.to_string()))
            .or_insert((0, line));
        e.0 += 1;
        if e.1.is_none() {
            e.1 = line;
        }
    }

    /// Counts every key of `fields` not in `known` as `record.key`.
    pub fn fields<'a>(
        &mut self,
        record: &str,
        fields: impl IntoIterator<Item = &'a String>,
        known: &[&str],
        line: Option<u64>,
    ) {
        for k in fields {
            if !k.starts_with('$') && !known.contains(&k.as_str()) {
                self.add(DriftKind::Field, &format!("{record}.{k}"), line);
            }
        }
    }

    /// Returns the items, record types first, then by name.
    pub fn into_items(self) -> Vec<Drift> {
        self.seen
            .into_iter()
            .map(|((kind, name), (count, first_line))| Drift {
                kind,
                name,
                count,
                first_line,
            })
            .collect()
    }
}

/// Counts the records a reader kept as unknown.
pub fn unknown_records(read: &Read, tally: &mut Tally) {
    for e in &read.session.entries {
        if let EntryKind::Unknown { record_type, .. } = &e.kind {
            tally.add(
                DriftKind::RecordType,
                record_type.as_deref().unwrap_or("(no type)"),
                e.line,
            );
        }
    }
}

/// The drift report of `read`, a file `format` read: what the format
/// reports ([`Format::drift`]), and first, when the reader understood
/// nothing in the file (no entry but unknown records, or none) while
/// something in it was unknown or unreadable, the file's layout itself
/// ([`DriftKind::Layout`]). What `agentlog validate --drift` and the
/// index's drift alarm both report.
pub fn report(format: &dyn Format, read: &Read) -> Vec<Drift> {
    let mut items = format.drift(read);
    let understood = read
        .session
        .entries
        .iter()
        .any(|e| !matches!(e.kind, EntryKind::Unknown { .. }));
    // Something unknown, or lines that could not be read at all.
    let unread = !items.is_empty()
        || read
            .diagnostics
            .iter()
            .any(|d| d.severity == crate::Severity::Error);
    if !understood && unread && !items.iter().any(|d| d.kind == DriftKind::Layout) {
        items.insert(
            0,
            Drift {
                kind: DriftKind::Layout,
                name: LAYOUT.to_string(),
                count: 1,
                first_line: None,
            },
        );
    }
    items
}
