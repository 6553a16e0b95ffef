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

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Whether this is a CI run, where a missing dependency fails the test
/// instead of skipping it.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Runs `scripts/<script>` with `args` (it installs `what` when missing and
/// prints the path of the program to use) and returns that path. When the
/// script fails: under CI the test fails, saying why; elsewhere it is
/// skipped (`None`), and says so.
pub fn installed(script: &str, args: &[&str], what: &str) -> Option<PathBuf> {
    let out = Command::new("bash")
        .arg(repo().join("scripts").join(script))
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output();
    let found = out.ok().and_then(|o| {
        let p = String::from_utf8(o.stdout).ok()?;
        let p = p.trim();
        (o.status.success() && !p.is_empty() && Path::new(p).exists()).then(|| PathBuf::from(p))
    });
    if found.is_none() {
        assert!(
            !in_ci(),
            "{what} could not be installed (scripts/{script}), and CI is set"
        );
        println!("skipped: {what} is not available (scripts/{script} could not install it)");
    }
    found
}
