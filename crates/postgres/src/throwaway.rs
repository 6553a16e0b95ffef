//! A throwaway PostgreSQL server for tests and benchmarks, started and
//! stopped by the project's `scripts/postgres.sh`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The script that installs, starts and stops the server.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres.sh")
}

/// A running server; stopped (and its directory removed) when dropped.
#[derive(Debug)]
pub struct Throwaway {
    dir: PathBuf,
    url: String,
}

impl Throwaway {
    /// Starts a server in a new directory under the system's temporary
    /// directory; the error says why it could not.
    pub fn start() -> Result<Throwaway, String> {
        let dir = std::env::temp_dir().join(format!(
            "agentlog-pg-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        let out = Command::new("bash")
            .arg(script())
            .arg("start")
            .arg(&dir)
            .output()
            .map_err(|e| format!("running {}: {e}", script().display()))?;
        let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let t = Throwaway { dir, url };
        if !out.status.success() || !t.url.starts_with("postgres://") {
            return Err(format!(
                "{} start failed: {}",
                script().display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(t)
    }

    /// Starts a server for a test. When it cannot start: with `CI` set the
    /// test fails (panics) with the reason; elsewhere it prints that the
    /// test is skipped and why, and returns `None`.
    pub fn for_test(test: &str) -> Option<Throwaway> {
        match Throwaway::start() {
            Ok(t) => Some(t),
            Err(why) => {
                if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
                    panic!("{test}: PostgreSQL is required when CI is set: {why}");
                }
                eprintln!("{test}: skipped: no PostgreSQL ({why})");
                None
            }
        }
    }

    /// Returns the URL of the server's `agentlog` database (as superuser).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Creates a new empty database `name` and returns its URL.
    pub fn database(&self, name: &str) -> Result<String, String> {
        let mut c = postgres::Client::connect(&self.url, postgres::NoTls)
            .map_err(|e| crate::describe(&e))?;
        for sql in [
            format!("DROP DATABASE IF EXISTS \"{name}\""),
            format!("CREATE DATABASE \"{name}\""),
        ] {
            c.batch_execute(&sql).map_err(|e| crate::describe(&e))?;
        }
        Ok(self.url_for(name, None))
    }

    /// Returns the URL of database `db`, logging in as `user` (name and
    /// password) instead of the superuser when given.
    pub fn url_for(&self, db: &str, user: Option<(&str, &str)>) -> String {
        let (base, _) = self.url.rsplit_once('/').unwrap_or((&self.url, ""));
        let base = match user {
            Some((name, pw)) => {
                let host = base.rsplit_once('@').map_or(base, |(_, h)| h);
                format!("postgres://{name}:{pw}@{host}")
            }
            None => base.to_string(),
        };
        format!("{base}/{db}")
    }

    /// Returns the server's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.dir)
            .output();
    }
}
