//! A full disk under the archive (a small tmpfs mounted by the test; root
//! only, it prints why and passes when it cannot mount one): the capture
//! that does not fit fails with an error naming the archive, and every
//! capture stored before it reads back exactly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_archive::Archive;
use rand::{RngCore, SeedableRng};
use std::path::Path;
use std::process::Command;

struct SmallFs(tempfile::TempDir);

impl SmallFs {
    fn mount(size: &str) -> Option<SmallFs> {
        let dir = tempfile::tempdir().ok()?;
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(SmallFs(dir)),
            Ok(o) => {
                println!(
                    "SKIPPED: cannot mount a small tmpfs ({}); run as root to test a full disk",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                println!("SKIPPED: cannot run mount ({e}); run as root to test a full disk");
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn a_full_disk_fails_the_capture_that_does_not_fit_and_keeps_the_others() {
    let Some(fs) = SmallFs::mount("3m") else {
        return;
    };
    let sources = tempfile::tempdir().unwrap();
    let dir = fs.path().join("archive");
    let mut a = Archive::open(&dir).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let mut kept = Vec::new();
    let err = loop {
        // Random bytes do not compress: each file costs its size.
        let mut bytes = vec![0u8; 300 * 1024];
        rng.fill_bytes(&mut bytes);
        let p = sources.path().join(format!("s{}.jsonl", kept.len()));
        std::fs::write(&p, &bytes).unwrap();
        match a.capture(&p, "pi") {
            Ok(_) => kept.push((p, bytes)),
            Err(e) => break e,
        }
        assert!(kept.len() < 100, "the small file system never filled up");
    };
    let text = err.to_string();
    assert!(text.contains("archive.sqlite"), "{text}");
    assert!(!kept.is_empty());
    drop(a);
    let a = Archive::open(&dir).unwrap();
    assert!(a.verify().unwrap().problems.is_empty());
    for (p, bytes) in &kept {
        assert!(a.read(p, None).unwrap() == *bytes, "{}", p.display());
    }
}
