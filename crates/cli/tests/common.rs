//! A hermetic environment for running the `agentlog` binary in tests: an
//! empty temporary HOME, no inherited environment, no colours.
#![allow(
    dead_code,
    missing_docs,
    clippy::new_without_default,
    clippy::unwrap_used,
    clippy::expect_used
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct TestEnv {
    pub home: tempfile::TempDir,
}

pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        TestEnv {
            home: tempfile::tempdir().unwrap(),
        }
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_agentlog"));
        c.args(args)
            .env_clear()
            .env("HOME", self.home())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("NO_COLOR", "1")
            .env("TZ", "UTC")
            .env("XDG_DATA_HOME", self.home().join(".local/share"))
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .current_dir(self.home());
        c
    }

    pub fn run(&self, args: &[&str]) -> Run {
        let out: Output = self.command(args).output().unwrap();
        Run {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Writes `contents` to `rel` under HOME and returns the absolute path.
    pub fn write(&self, rel: &str, contents: &[u8]) -> PathBuf {
        let p = self.home().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, contents).unwrap();
        p
    }

    /// Replaces the temporary HOME path with `[HOME]` in output.
    pub fn redact(&self, s: &str) -> String {
        s.replace(&self.home().display().to_string(), "[HOME]")
    }
}

pub fn fixtures() -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures"
    ))
    .to_path_buf()
}
