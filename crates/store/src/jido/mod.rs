//! jido_code's session persistence: one JSON file per closed session in
//! `~/.jido_code/sessions/{id}.json`, listed and restored by `/resume`.
//!
//! - [`JidoStore::save`] sanitizes (see [`sanitize`]), validates against the
//!   schema and writes the file atomically, readable by the owner only
//!   (0600, in a 0700 directory).
//! - [`JidoStore::list_persisted`] lists id, name and closed_at, most
//!   recently closed first, and names the files it had to skip.
//! - [`JidoStore::restore`] reads a file, migrates it from its version to
//!   the current one ([`migrate`]), validates it with precise errors
//!   (field path and problem), and checks its project directory
//!   ([`project`]).
//! - [`JidoStore::delete`] and [`JidoStore::clear_all`] remove files.
//!
//! Session ids become file names, so they are checked with
//! [`crate::names::validate_name`] and may not start with a dot (hidden
//! and temporary files). Unlike jido_code, which only accepts UUID v4 ids,
//! any such name is accepted: the seed's own test data uses
//! `test-session-id`.
//!
//! Differences from the real system: jido_code has no `restore`,
//! `delete`, `clear_all` or migrations (it rejects every version but 1);
//! these follow the seed. jido_code deletes the file when a session is
//! resumed; [`JidoStore::restore`] leaves it. jido_code writes with the
//! default umask; this store writes 0600 as the seed says. The HMAC
//! `signature` jido_code adds is kept when present but neither checked nor
//! written (its key is a per-machine secret).

pub mod migrate;
pub mod project;
pub mod sanitize;

pub use agentlog_formats::jido::validate::{validate, Problem, CURRENT_VERSION};

use crate::snapshot::{is_temp_name, write_atomic};
use crate::StoreError;
use agentlog_formats::jido as format;
use agentlog_formats::Fidelity;
use agentlog_model::Session;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Largest session file read or written (jido_code's default).
pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// The persisted sessions of one directory.
#[derive(Clone, Debug)]
pub struct JidoStore {
    dir: PathBuf,
    home: Option<PathBuf>,
}

/// A session in a listing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PersistedSummary {
    /// The session id.
    pub id: String,
    /// Its display name.
    pub name: String,
    /// When it was closed, as written.
    pub closed_at: String,
    /// The project it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_path: Option<String>,
    /// The file.
    pub path: PathBuf,
}

/// The result of listing a directory.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Listing {
    /// The sessions, most recently closed first.
    pub sessions: Vec<PersistedSummary>,
    /// Files that are not readable session files, with the reason.
    pub skipped: Vec<(PathBuf, String)>,
}

/// A restored session.
#[derive(Debug)]
pub struct Restored {
    /// The session, in the model.
    pub session: Session,
    /// The document after migration.
    pub document: Value,
    /// The version the file had.
    pub from_version: u64,
    /// The migrations applied, oldest first.
    pub migrations: Vec<&'static str>,
    /// The project directory, resolved.
    pub project_dir: PathBuf,
    /// The file.
    pub path: PathBuf,
}

impl JidoStore {
    /// Returns the store of the directory `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> JidoStore {
        JidoStore {
            dir: dir.into(),
            home: None,
        }
    }

    /// Returns jido_code's default directory under `home`.
    pub fn default_dir(home: &Path) -> PathBuf {
        home.join(".jido_code").join("sessions")
    }

    /// Sets the home directory, which restore refuses as a project.
    pub fn with_home(mut self, home: impl Into<PathBuf>) -> JidoStore {
        self.home = Some(home.into());
        self
    }

    /// Returns the directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Returns the file of session `id` after checking the id.
    pub fn path_of(&self, id: &str) -> Result<PathBuf, StoreError> {
        crate::names::session_file(&self.dir, id, "json")
    }

    /// Sanitizes and validates `doc` (a current-version session document)
    /// and writes it atomically as `{id}.json`, mode 0600.
    pub fn save(&self, doc: &Value) -> Result<PathBuf, StoreError> {
        let mut doc = doc.clone();
        sanitize::sanitize(&mut doc);
        let id = doc
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let path = self.path_of(&id)?;
        if let Ok(v) = migrate::version_of(&doc) {
            if v != CURRENT_VERSION {
                return Err(StoreError::Invalid(format!(
                    "{}: version {v}: only version {CURRENT_VERSION} is written",
                    path.display()
                )));
            }
        }
        check_schema(&path, &doc)?;
        let mut bytes =
            format::to_pretty(&doc).map_err(|e| StoreError::io(&path, "serialize", e))?;
        bytes.push(b'\n');
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(StoreError::Invalid(format!(
                "{}: the session is {} bytes, over the {MAX_FILE_BYTES}-byte limit",
                path.display(),
                bytes.len()
            )));
        }
        write_atomic(&path, &bytes)?;
        Ok(path)
    }

    /// Converts `session` to a jido document and saves it; returns the file
    /// and what the document could not hold.
    pub fn save_session(&self, session: &Session) -> Result<(PathBuf, Fidelity), StoreError> {
        let (doc, fidelity) = format::encode(session);
        Ok((self.save(&doc)?, fidelity))
    }

    /// Lists the sessions, most recently closed first (an unparsable
    /// `closed_at` sorts last).
    pub fn list_persisted(&self) -> Result<Listing, StoreError> {
        let mut out = Listing::default();
        for path in self.files()? {
            match read_doc(&path).and_then(|doc| summary(&path, &doc)) {
                Ok(s) => out.sessions.push(s),
                Err(e) => out.skipped.push((path, e.to_string())),
            }
        }
        let key = |s: &PersistedSummary| {
            chrono::DateTime::parse_from_rfc3339(&s.closed_at)
                .map(|t| t.timestamp_millis())
                .unwrap_or(i64::MIN)
        };
        out.sessions
            .sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.id.cmp(&b.id)));
        Ok(out)
    }

    /// Reads session `id`, migrates it to the current version, validates it
    /// and checks its project directory. The file is left as it is.
    pub fn restore(&self, id: &str) -> Result<Restored, StoreError> {
        let path = self.path_of(id)?;
        let mut doc = read_doc(&path)?;
        let invalid = |m: String| StoreError::Invalid(format!("{}: {m}", path.display()));
        let from_version = migrate::version_of(&doc).map_err(invalid)?;
        let steps = migrate::migrate(&mut doc).map_err(invalid)?;
        check_schema(&path, &doc)?;
        let file_id = doc.get("id").and_then(Value::as_str).unwrap_or_default();
        if file_id != id {
            return Err(invalid(format!(
                "id: {file_id:?} does not match the file name {id:?}"
            )));
        }
        let project = doc
            .get("project_path")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let project_dir = project::check_project_path(project, self.home.as_deref())
            .map_err(|m| invalid(format!("project_path {project:?}: {m}")))?;
        let obj = doc.as_object().cloned().unwrap_or_default();
        let session = format::decode(&path, &obj, &mut Vec::new());
        Ok(Restored {
            session,
            document: doc,
            from_version,
            migrations: steps.iter().map(|s| s.description).collect(),
            project_dir,
            path,
        })
    }

    /// Deletes session `id`; true when it existed.
    pub fn delete(&self, id: &str) -> Result<bool, StoreError> {
        let path = self.path_of(id)?;
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(StoreError::io(&path, "remove", e)),
        }
    }

    /// Deletes every session file (`*.json`) of the directory and returns
    /// how many; other files are left alone.
    pub fn clear_all(&self) -> Result<usize, StoreError> {
        let mut n = 0;
        for path in self.files()? {
            std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, "remove", e))?;
            n += 1;
        }
        Ok(n)
    }

    fn files(&self) -> Result<Vec<PathBuf>, StoreError> {
        let rd = match std::fs::read_dir(&self.dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(&self.dir, "list", e)),
        };
        let mut out: Vec<PathBuf> = rd
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.ends_with(".json") && !n.starts_with('.') && !is_temp_name(&n)
            })
            .map(|e| e.path())
            .collect();
        out.sort();
        Ok(out)
    }
}

fn check_schema(path: &Path, doc: &Value) -> Result<(), StoreError> {
    let problems = validate(doc);
    if problems.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = problems.iter().map(|p| format!("  - {p}")).collect();
    Err(StoreError::Invalid(format!(
        "{}: not a valid jido session ({} problem{}):\n{}",
        path.display(),
        problems.len(),
        if problems.len() == 1 { "" } else { "s" },
        list.join("\n")
    )))
}

fn read_doc(path: &Path) -> Result<Value, StoreError> {
    let meta = std::fs::metadata(path).map_err(|e| StoreError::io(path, "stat", e))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(StoreError::Invalid(format!(
            "{}: {} bytes, over the {MAX_FILE_BYTES}-byte limit",
            path.display(),
            meta.len()
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| StoreError::io(path, "read", e))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        StoreError::Invalid(format!(
            "{}:{}:{}: not valid JSON: {e}",
            path.display(),
            e.line(),
            e.column()
        ))
    })
}

fn summary(path: &Path, doc: &Value) -> Result<PersistedSummary, StoreError> {
    let s = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_string);
    let id = s("id").ok_or_else(|| {
        StoreError::Invalid(format!(
            "{}: id: required string is missing",
            path.display()
        ))
    })?;
    Ok(PersistedSummary {
        name: s("name").unwrap_or_else(|| id.clone()),
        closed_at: s("closed_at").unwrap_or_default(),
        project_path: s("project_path"),
        id,
        path: path.to_path_buf(),
    })
}
