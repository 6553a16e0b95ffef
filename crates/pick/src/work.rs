//! The picker's threads: one reads the keyboard, one searches, one reads
//! previews. Each tells the main loop through one channel of [`Msg`], so
//! the screen is redrawn the moment anything arrives and typing never
//! waits for a search.

use agentlog_api::pick::{self, Found, Preview, Query};
use agentlog_api::{ApiError, Settings};
use ratatui::crossterm::event::{self, Event};
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};

/// What the main loop hears.
pub enum Msg {
    /// A key, a paste, a resize.
    Input(Event),
    /// The terminal cannot be read any more.
    InputGone(std::io::Error),
    /// The sessions query number `.0` found, and what it searched.
    Found(u64, Option<String>, Result<Found, ApiError>),
    /// The preview of a session (its file, the hit's entry).
    Preview(PreviewKey, Result<Preview, ApiError>),
    /// The web viewer's address, or why it did not start.
    Served(Result<String, String>),
}

/// Which preview: the session file and the entry to show.
pub type PreviewKey = (PathBuf, Option<String>);

/// Starts the thread reading the keyboard.
pub fn read_input(tx: Sender<Msg>) {
    std::thread::spawn(move || loop {
        let msg = match event::read() {
            Ok(ev) => Msg::Input(ev),
            Err(e) => Msg::InputGone(e),
        };
        let gone = matches!(msg, Msg::InputGone(_));
        if tx.send(msg).is_err() || gone {
            return;
        }
    });
}

/// Starts the thread that searches `index`; returns where to send queries
/// (numbered; only the newest waiting one is run).
pub fn searcher(
    settings: Settings,
    index: agentlog_index::Index,
    limit: usize,
    tx: Sender<Msg>,
) -> Sender<(u64, Query)> {
    let (qtx, qrx) = channel::<(u64, Query)>();
    std::thread::spawn(move || {
        let gone = pick::Gone::of(&settings);
        while let Some((n, q)) = newest(&qrx) {
            let found = pick::find_with(&settings, &index, &q, limit, &gone);
            if tx.send(Msg::Found(n, q.search_text(), found)).is_err() {
                return;
            }
        }
    });
    qtx
}

/// Starts the thread that reads previews; returns where to ask for one
/// (only the newest waiting one is read).
pub fn previewer(settings: Settings, tx: Sender<Msg>) -> Sender<PreviewKey> {
    let (ptx, prx) = channel::<PreviewKey>();
    std::thread::spawn(move || {
        while let Some(key) = newest(&prx) {
            let p = pick::preview(&settings, &key.0, key.1.as_deref());
            if tx.send(Msg::Preview(key, p)).is_err() {
                return;
            }
        }
    });
    ptx
}

/// Waits for a request, then takes the newest of those waiting.
fn newest<T>(rx: &Receiver<T>) -> Option<T> {
    let mut last = rx.recv().ok()?;
    while let Ok(next) = rx.try_recv() {
        last = next;
    }
    Some(last)
}

/// Starts `agentlog serve` (the current executable with `args`) in its
/// own process group, and a thread that tells the web viewer's address
/// once it says it; returns the server's process id.
pub fn serve(args: &[std::ffi::OsString], tx: Sender<Msg>) -> Result<u32, String> {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt as _;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find agentlog itself: {e}"))?;
    let mut child = std::process::Command::new(exe)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start agentlog serve: {e}"))?;
    let pid = child.id();
    let Some(out) = child.stdout.take() else {
        return Err("agentlog serve gave no output".into());
    };
    std::thread::spawn(move || {
        let mut said = String::new();
        for line in std::io::BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if let Some(url) = line
                .split_whitespace()
                .find(|w| w.starts_with("http://") || w.starts_with("https://"))
            {
                // The pipe closes here: what the server says later is
                // lost (it ignores the failed writes), never waited on.
                let _ = tx.send(Msg::Served(Ok(url.to_string())));
                return;
            }
            said = line;
        }
        let _ = child.wait();
        let _ = tx.send(Msg::Served(Err(if said.is_empty() {
            "agentlog serve stopped before it served".to_string()
        } else {
            format!("agentlog serve: {said}")
        })));
    });
    Ok(pid)
}
