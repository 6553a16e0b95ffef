#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Safe by default: files agentlog writes are private, never written
//! through a planted symbolic link, never overwritten unless asked; session
//! text never drives the terminal; paths from session content stay inside
//! their directory; inputs and resources are bounded.

mod common;

use common::{fixtures, TestEnv};
use std::path::{Path, PathBuf};

fn claude_fixture() -> PathBuf {
    fixtures().join("native/claude/ccv-sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[cfg(unix)]
#[test]
fn outputs_are_private_new_files_unless_forced() {
    let env = TestEnv::new();
    let src = claude_fixture();
    let src = src.to_str().unwrap();
    for (cmd, to) in [
        ("export", "markdown"),
        ("export", "text"),
        ("convert", "pi"),
    ] {
        let out = env.home().join(format!("new/dir/{cmd}-{to}.out"));
        let o = out.to_str().unwrap();
        let r = env.run(&[cmd, src, "--to", to, "-o", o]);
        assert_eq!(r.status, 0, "{cmd} {to}: {}", r.stderr);
        assert_eq!(mode(&out), 0o600, "{cmd} {to}");
        assert_eq!(mode(out.parent().unwrap()), 0o700);
        assert_eq!(mode(&env.home().join("new")), 0o700);
        // Again onto the existing file: refused, the file untouched.
        std::fs::write(&out, b"mine").unwrap();
        let r = env.run(&[cmd, src, "--to", to, "-o", o]);
        assert_eq!(r.status, 1, "{cmd} {to}");
        assert!(r.stderr.contains("already exists"), "{}", r.stderr);
        assert!(r.stderr.contains("--force"), "{}", r.stderr);
        assert_eq!(std::fs::read(&out).unwrap(), b"mine");
        // With --force it is replaced.
        let r = env.run(&[cmd, src, "--to", to, "-o", o, "--force"]);
        assert_eq!(r.status, 0, "{}", r.stderr);
        assert_ne!(std::fs::read(&out).unwrap(), b"mine");
        let left: Vec<_> = std::fs::read_dir(out.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with('.'))
            .collect();
        assert!(left.is_empty(), "temp files left: {left:?}");
    }
}

#[cfg(unix)]
#[test]
fn no_write_follows_a_planted_symlink() {
    let env = TestEnv::new();
    let victim = env.write("victim.txt", b"precious");
    let src = claude_fixture();
    let src = src.to_str().unwrap();
    // export/convert/migrate -o onto a planted link: refused; with --force
    // the link itself is replaced.
    for args in [
        vec!["export", src, "--to", "markdown", "-o"],
        vec!["convert", src, "--to", "codex", "-o"],
    ] {
        let link = env.home().join("out/link");
        let _ = std::fs::remove_file(&link);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let mut a = args.clone();
        a.push(link.to_str().unwrap());
        let r = env.run(&a);
        assert_eq!(r.status, 1, "{a:?}: {}", r.stderr);
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        a.push("--force");
        let r = env.run(&a);
        assert_eq!(r.status, 0, "{a:?}: {}", r.stderr);
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(!std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }
    // The predictable SpecStory transcript name, planted as a link.
    let r = env.run(&["seed", "specstory", "name", src]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let name = r.stdout.trim();
    let hist = env.home().join("proj/.specstory/history");
    std::fs::create_dir_all(&hist).unwrap();
    std::os::unix::fs::symlink(&victim, hist.join(name)).unwrap();
    let proj = env.home().join("proj");
    let r = env.run(&[
        "seed",
        "specstory",
        "render",
        src,
        "-o",
        proj.to_str().unwrap(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    let written = hist.join(name);
    assert!(!std::fs::symlink_metadata(&written)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&written)
        .unwrap()
        .contains("SpecStory"));
    assert_eq!(mode(&written), 0o600);
}

#[cfg(unix)]
#[test]
fn resumed_sessions_and_the_index_are_private() {
    let env = TestEnv::new();
    let src = claude_fixture();
    for agent in ["pi", "codex", "gemini", "claude"] {
        let r = env.run(&[
            "resume",
            src.to_str().unwrap(),
            "--in",
            agent,
            "--json",
            "--cwd",
            "/work/proj",
        ]);
        assert_eq!(r.status, 0, "{agent}: {}", r.stderr);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let p = PathBuf::from(v["path"].as_str().unwrap());
        assert!(p.starts_with(env.home()), "{}", p.display());
        assert_eq!(mode(&p), 0o600, "{agent}");
        assert_eq!(mode(p.parent().unwrap()), 0o700, "{agent}");
    }
    let r = env.run(&["index"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let ix = env.home().join(".local/share/agentlog/index.sqlite");
    assert_eq!(mode(&ix), 0o600);
    assert_eq!(mode(ix.parent().unwrap()), 0o700);
    assert_eq!(mode(&env.home().join(".local/share")), 0o700);
}
