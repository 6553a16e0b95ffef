//! Crash tests: a writer process is killed (SIGKILL) at random moments,
//! hundreds of times, appending to one session file. After every kill the
//! file must open (recovering any torn tail into a sidecar) and hold every
//! entry the writer acknowledged; at the end every line of the file is a
//! whole JSON entry and no id appears twice.
//!
//! The random moments come from a seed printed at the start; set
//! `AGENTLOG_CRASH_SEED` to replay a run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_store::read::LineReader;
use agentlog_store::{AppendOptions, AppendWriter, Recovery};
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, HashSet};
use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const WRITER: &str = env!("CARGO_BIN_EXE_crash-writer");

/// What one writer process said before it died.
#[derive(Debug, Default)]
struct Said {
    opened: Option<(u64, bool)>,
    acked: Vec<String>,
    tear: Option<u64>,
}

/// Starts `cmd` with its output piped, and `read` on its standard output
/// in a thread of its own.
fn spawn_reading<T: Send + 'static>(
    cmd: &mut Command,
    read: impl FnOnce(std::io::BufReader<std::process::ChildStdout>) -> T + Send + 'static,
) -> (std::process::Child, std::thread::JoinHandle<T>) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    (child, std::thread::spawn(move || read(stdout)))
}

/// When a writer is killed: `delay` after it starts, or after it says it
/// opened the file (`after_open`), which on a loaded machine may take longer
/// than any delay a test would pick.
#[derive(Clone, Copy)]
struct Kill {
    delay: Duration,
    after_open: bool,
}

fn run_writer(
    path: &Path,
    run: u64,
    policy: &str,
    tear: Option<u64>,
    kill_after: Option<Kill>,
) -> Said {
    let mut cmd = Command::new(WRITER);
    cmd.arg(path)
        .arg(run.to_string())
        .args(["--policy", policy]);
    if let Some(t) = tear {
        cmd.args(["--tear", &t.to_string()]);
    }
    let (opened_tx, opened_rx) = std::sync::mpsc::channel::<()>();
    let (mut child, reader) = spawn_reading(&mut cmd, move |stdout| {
        let mut said = Said::default();
        for line in stdout.lines() {
            let Ok(line) = line else { break };
            let mut parts = line.split(' ');
            match (parts.next(), parts.next(), parts.next()) {
                (Some("open"), Some(t), Some(n)) => {
                    said.opened = Some((t.parse().unwrap(), n == "true"));
                    let _ = opened_tx.send(());
                }
                (Some("ack"), Some(id), None) => said.acked.push(id.to_string()),
                (Some("tear"), Some(n), None) => said.tear = Some(n.parse().unwrap()),
                (Some("done"), None, None) => {}
                _ => panic!("unexpected writer output {line:?}"),
            }
        }
        said
    });
    if let Some(k) = kill_after {
        if k.after_open {
            // Returns at the line, or when the writer ended without it.
            let _ = opened_rx.recv();
        }
        std::thread::sleep(k.delay);
        // SIGKILL; the writer may have aborted already (a tear).
        let _ = child.kill();
    }
    let status = child.wait().unwrap();
    let said = reader.join().unwrap();
    if said.opened.is_none() && kill_after.is_none() {
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        panic!("writer failed to open ({status}): {err}");
    }
    said
}

/// Follows the file and records each entry's id, checking every line is a
/// whole JSON entry.
struct Follower {
    offset: u64,
    seen: HashSet<String>,
    lines: u64,
}

impl Follower {
    fn catch_up(&mut self, path: &Path) {
        let mut r = LineReader::open_at(path, self.offset).unwrap();
        while let Some(line) = r.next_line().unwrap() {
            let v: serde_json::Value = serde_json::from_slice(&line).unwrap_or_else(|e| {
                panic!(
                    "line {} is not whole JSON ({e}): {:?}",
                    self.lines + 1,
                    String::from_utf8_lossy(&line[..line.len().min(80)])
                )
            });
            let id = v["id"].as_str().unwrap().to_string();
            assert!(self.seen.insert(id.clone()), "entry {id} appears twice");
            self.lines += 1;
        }
        self.offset = r.offset();
    }
}

fn seed() -> u64 {
    std::env::var("AGENTLOG_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        })
}

/// Kills writers `runs` times and checks the file after each kill.
fn crash_loop(policy: &str, runs: u64, max_delay_ms: u64) {
    let seed = seed();
    println!("crash test ({policy}): seed {seed} (AGENTLOG_CRASH_SEED={seed} replays it)");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions/s.jsonl");
    let mut f = Follower {
        offset: 0,
        seen: HashSet::new(),
        lines: 0,
    };
    let mut acked_total = 0usize;
    let mut stats: BTreeMap<&str, u64> = BTreeMap::new();
    for run in 0..runs {
        let tear = rng.gen_ratio(1, 8).then(|| rng.gen_range(0..4));
        // Most kills come a while after the writer opened the file, so they
        // land among its appends however slow its start; some come a while
        // after its start, before or during the open.
        let kill = Kill {
            delay: Duration::from_micros(rng.gen_range(0..max_delay_ms * 1000)),
            after_open: !rng.gen_ratio(1, 8),
        };
        let said = run_writer(&path, run, policy, tear, Some(kill));
        if said.opened.is_none() {
            *stats.entry("killed before the file was open").or_default() += 1;
        }
        // The file opens after every crash; a deliberate tear is cut off
        // whole and kept in a sidecar.
        let (w, rec): (AppendWriter, Recovery) =
            AppendWriter::open(&path, AppendOptions::default())
                .unwrap_or_else(|e| panic!("run {run}: the file does not open after a kill: {e}"));
        w.close().unwrap();
        match (said.tear, &rec) {
            (Some(n), rec) => {
                assert_eq!(rec.torn_bytes, n, "run {run}: torn bytes");
                let cut = std::fs::read(rec.sidecar.as_ref().unwrap()).unwrap();
                assert!(
                    cut.starts_with(format!("{{\"id\":\"r{run}-").as_bytes()),
                    "run {run}: sidecar holds {:?}",
                    String::from_utf8_lossy(&cut[..cut.len().min(40)])
                );
                *stats.entry("deliberate torn writes cut").or_default() += 1;
            }
            (None, rec) if rec.torn_bytes > 0 => {
                *stats.entry("writes torn by the kill, cut").or_default() += 1
            }
            (None, rec) if rec.newline_added => *stats.entry("newline added").or_default() += 1,
            _ => {}
        }
        f.catch_up(&path);
        for id in &said.acked {
            assert!(
                f.seen.contains(id),
                "run {run}: acknowledged entry {id} is missing (seed {seed})"
            );
        }
        acked_total += said.acked.len();
    }
    // A last, clean run: the file is still fully usable.
    let said = run_writer(
        &path,
        runs,
        policy,
        None,
        Some(Kill {
            delay: Duration::from_millis(20),
            after_open: true,
        }),
    );
    assert!(said.opened.is_some());
    let (w, _) = AppendWriter::open(&path, AppendOptions::default()).unwrap();
    drop(w);
    // Read the whole file again from the start.
    let mut all = Follower {
        offset: 0,
        seen: HashSet::new(),
        lines: 0,
    };
    all.catch_up(&path);
    assert_eq!(
        all.offset,
        std::fs::metadata(&path).unwrap().len(),
        "the file ends with a whole line"
    );
    for id in f.seen.iter().chain(&said.acked) {
        assert!(all.seen.contains(id), "entry {id} lost later");
    }
    println!(
        "crash test ({policy}): {runs} kills, {acked_total} acknowledged entries all present, {} lines in the file; {stats:?}",
        all.lines
    );
    assert!(acked_total > 0, "no writer ever acknowledged an entry");
}

#[test]
fn every_acknowledged_entry_survives_hundreds_of_kills() {
    crash_loop("every", 300, 25);
}

#[test]
fn grouped_and_unsynced_writers_leave_openable_files() {
    // Under these policies a line is acknowledged after its group's sync
    // (grouped) or its write (none); a process kill loses neither.
    crash_loop("grouped", 60, 20);
    crash_loop("none", 60, 4);
}

/// Checks that the folder `dir/name` is whole: every file of the writer,
/// each the whole JSON it wrote.
fn folder_is_whole(dir: &Path, name: &str) {
    let folder = dir.join(name);
    let files = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .count();
    assert_eq!(files, 40, "{name} has {files} files of 40");
    for k in 0..40 {
        let bytes = std::fs::read(folder.join(format!("f{k}.json"))).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{name}/f{k}.json is not whole JSON: {e}"));
        assert_eq!(v["name"], name);
        assert_eq!(v["k"], k);
    }
}

/// What one folder writer said before it was killed.
#[derive(Debug, Default)]
struct FolderRun {
    /// The folders it finished (`ack`).
    acked: Vec<String>,
    /// Whether the kill landed while the target folder was being written
    /// (begun, not acknowledged).
    mid_folder: bool,
}

/// Starts a folder writer, waits until it says it begins its `target`-th
/// folder, waits `delay`, kills it, and reads what it said. The kill is
/// placed relative to the writer's own progress, not to its start, so on a
/// loaded machine it still lands in (or just after) a folder write.
fn kill_folder_writer(dir: &Path, run: u64, target: u64, delay: Duration) -> FolderRun {
    let mut child = Command::new(env!("CARGO_BIN_EXE_folder-writer"))
        .arg(dir)
        .arg(run.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let target_name = format!("r{run}-{target}");
    let mut said = FolderRun::default();
    let mut reached = false;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(name) = line.strip_prefix("ack ") {
            said.acked.push(name.to_owned());
        } else if line.strip_prefix("begin ") == Some(target_name.as_str()) {
            reached = true;
            break;
        }
    }
    if !reached {
        let status = child.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        panic!("run {run}: the folder writer stopped before folder {target} ({status}): {err}");
    }
    if !delay.is_zero() {
        std::thread::sleep(delay);
    }
    let _ = child.kill();
    child.wait().unwrap();
    for line in lines {
        let Ok(line) = line else { break };
        if let Some(name) = line.strip_prefix("ack ") {
            said.acked.push(name.to_owned());
        }
    }
    said.mid_folder = !said.acked.contains(&target_name);
    said
}

#[test]
fn a_folder_is_whole_or_not_there_after_150_kills() {
    let seed = seed();
    eprintln!("folder crash test seed: {seed} (AGENTLOG_CRASH_SEED replays it)");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut acked = Vec::new();
    // The kill comes up to `window` µs after the writer says it begins a
    // folder. The window adapts to the machine: it shrinks when the folder
    // was finished before the kill and grows when it was not, so about half
    // the kills land mid-folder whether a folder takes 0.2 ms or 50 ms.
    let mut window: u64 = 2_000;
    let mut mid_folder = 0u64;
    let mut runs = 0u64;
    // 150 kills, and more (up to 600) until some landed mid-folder.
    while runs < 150 || (mid_folder == 0 && runs < 600) {
        let target = rng.gen_range(0..2);
        let delay = Duration::from_micros(rng.gen_range(0..=window));
        let said = kill_folder_writer(dir.path(), runs, target, delay);
        if said.mid_folder {
            mid_folder += 1;
            window = (window + window / 4 + 1).min(200_000);
        } else {
            window = (window - window / 4).max(1);
        }
        acked.extend(said.acked);
        runs += 1;
    }
    // Every folder acknowledged is whole; every folder in sight is whole
    // (a writer killed midway leaves only its hidden temp folder).
    let mut visible = 0;
    let mut temps = 0;
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if agentlog_store::snapshot::is_temp_name(&name) {
            temps += 1;
            continue;
        }
        folder_is_whole(dir.path(), &name);
        visible += 1;
    }
    for name in &acked {
        folder_is_whole(dir.path(), name);
    }
    // Runs whose target was folder 1 or 2 waited for a finished folder.
    assert!(!acked.is_empty(), "no writer ever finished a folder");
    assert!(
        mid_folder > 0,
        "no kill out of {runs} landed while a folder was being written (seed {seed})"
    );
    eprintln!(
        "folder crash test: {runs} kills, {mid_folder} mid-folder, {} folders acknowledged, {visible} whole folders, {temps} temp folders left, final window {window} µs",
        acked.len()
    );
}
