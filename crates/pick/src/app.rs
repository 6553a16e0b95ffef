//! The picker's state and what each key does.

use crate::term::Screen;
use crate::work::{self, Msg, PreviewKey};
use crate::{Options, Outcome, PickError};
use agentlog_api::pick::{self, Found, Preview, Query, Row};
use agentlog_api::Settings;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::sync::mpsc::Sender;

/// What the screen shows besides the list.
pub enum Mode {
    /// The list and the preview.
    List,
    /// The keys.
    Help,
    /// The agents the highlighted session can continue in.
    Targets {
        /// Their names.
        names: Vec<&'static str>,
        /// The one highlighted.
        selected: usize,
    },
}

/// The web viewer started for the picker.
pub struct Server {
    pub pid: u32,
    pub url: Option<String>,
    /// The session to open once it serves.
    pub pending: Option<String>,
}

/// Everything drawn.
pub struct App {
    pub settings: Settings,
    pub index: Option<agentlog_index::Index>,
    pub opts: Options,
    /// The query as typed.
    pub input: String,
    /// Why the query cannot be run, when it cannot.
    pub query_error: Option<String>,
    /// The number of the last query sent, and of the one shown.
    sent: u64,
    shown: u64,
    /// What the shown rows were found with (the search text), or `None`
    /// for the newest sessions.
    pub shown_for: Option<String>,
    pub found: Found,
    /// True until the first answer.
    pub waiting: bool,
    pub selected: usize,
    pub preview: Option<(PreviewKey, Result<Preview, String>)>,
    asked_preview: Option<PreviewKey>,
    /// The first preview line shown, and whether it follows the hit.
    pub scroll: usize,
    pub scroll_auto: bool,
    /// The words marked in the preview.
    pub marked: Vec<String>,
    pub mode: Mode,
    /// A message in the status line.
    pub status: Option<String>,
    pub server: Option<Server>,
}

/// What a key asks for.
pub enum Step {
    Stay,
    Leave(Outcome),
}

impl App {
    pub fn new(settings: Settings, index: agentlog_index::Index, opts: Options) -> App {
        App {
            settings,
            index: Some(index),
            input: opts.query.clone(),
            opts,
            query_error: None,
            sent: 0,
            shown: 0,
            shown_for: None,
            found: Found::default(),
            waiting: true,
            selected: 0,
            preview: None,
            asked_preview: None,
            scroll: 0,
            scroll_auto: true,
            marked: Vec::new(),
            mode: Mode::List,
            status: None,
            server: None,
        }
    }

    /// The highlighted session.
    pub fn row(&self) -> Option<&Row> {
        self.found.rows.get(self.selected)
    }

    pub fn notes(&self) -> Vec<String> {
        match &self.server {
            Some(Server {
                pid,
                url: Some(url),
                ..
            }) => vec![format!(
                "the web viewer is still serving at {url} (process {pid}; `kill {pid}` stops it)"
            )],
            Some(Server { pid, .. }) => vec![format!(
                "the web viewer was starting (process {pid}; `kill {pid}` stops it)"
            )],
            None => Vec::new(),
        }
    }

    pub fn on(
        &mut self,
        msg: Msg,
        screen: &mut Screen,
        queries: &Sender<(u64, Query)>,
        tx: &Sender<Msg>,
    ) -> Result<Step, PickError> {
        match msg {
            Msg::Input(Event::Key(k)) if k.kind != KeyEventKind::Release => {
                return Ok(self.key(k, screen, queries, tx));
            }
            Msg::Input(Event::Paste(text)) => {
                self.input.push_str(&text.replace(['\n', '\r', '\t'], " "));
                self.submit(queries);
            }
            Msg::Input(_) => {}
            Msg::InputGone(e) => return Err(PickError::Terminal(e)),
            Msg::Found(n, searched, found) => {
                // An answer older than the one shown is dropped; a newer
                // one is shown even if yet newer ones are on the way.
                if n >= self.shown {
                    self.shown = n;
                    self.waiting = false;
                    match found {
                        Ok(found) => {
                            self.found = found;
                            self.selected = 0;
                            self.shown_for = searched;
                            self.query_error = None;
                        }
                        Err(e) => self.query_error = Some(e.to_string()),
                    }
                }
            }
            Msg::Preview(key, p) => {
                if self.asked_preview.as_ref() == Some(&key) {
                    self.preview = Some((key, p.map_err(|e| e.to_string())));
                    self.scroll_auto = true;
                }
            }
            Msg::Served(r) => self.served(r),
        }
        Ok(Step::Stay)
    }

    /// Sends the query as typed to the searcher (or says why it cannot be
    /// run).
    pub fn submit(&mut self, queries: &Sender<(u64, Query)>) {
        match Query::parse(&self.input, agentlog_index::time::now_ms()) {
            Ok(q) => {
                self.marked = q.marked_words();
                self.sent += 1;
                let _ = queries.send((self.sent, q));
            }
            Err(e) => self.query_error = Some(e.to_string()),
        }
    }

    pub fn ask_preview(&mut self, previews: &Sender<PreviewKey>) {
        let want = self
            .row()
            .map(|r| (r.path.clone(), r.hit.as_ref().map(|h| h.entry_id.clone())));
        if want != self.asked_preview {
            self.asked_preview = want.clone();
            if let Some(w) = want {
                let _ = previews.send(w);
            }
        }
    }

    fn key(
        &mut self,
        k: KeyEvent,
        screen: &mut Screen,
        queries: &Sender<(u64, Query)>,
        tx: &Sender<Msg>,
    ) -> Step {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(k.code, KeyCode::Char('c') | KeyCode::Char('g')) {
            return Step::Leave(Outcome::Quit {
                notes: self.notes(),
            });
        }
        match &mut self.mode {
            Mode::Help => {
                self.mode = Mode::List;
                return Step::Stay;
            }
            Mode::Targets { names, selected } => {
                match k.code {
                    KeyCode::Esc => self.mode = Mode::List,
                    KeyCode::Up => *selected = selected.saturating_sub(1),
                    KeyCode::Down if *selected + 1 < names.len() => *selected += 1,
                    KeyCode::Char('p') if ctrl => *selected = selected.saturating_sub(1),
                    KeyCode::Char('n') if ctrl && *selected + 1 < names.len() => *selected += 1,
                    KeyCode::Enter => {
                        let target = names.get(*selected).copied();
                        self.mode = Mode::List;
                        if let Some(t) = target {
                            return self.resume_in(t);
                        }
                    }
                    _ => {}
                }
                return Step::Stay;
            }
            Mode::List => {}
        }
        self.status = None;
        let rows = self.found.rows.len();
        match k.code {
            KeyCode::Esc => {
                return Step::Leave(Outcome::Quit {
                    notes: self.notes(),
                })
            }
            KeyCode::Enter => return self.resume_here(),
            KeyCode::Tab => self.choose_target(),
            KeyCode::F(1) | KeyCode::Char('?') => self.mode = Mode::Help,
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down if self.selected + 1 < rows => self.selected += 1,
            KeyCode::Char('p') if ctrl => self.selected = self.selected.saturating_sub(1),
            KeyCode::Char('n') if ctrl && self.selected + 1 < rows => self.selected += 1,
            KeyCode::Home if ctrl => self.selected = 0,
            KeyCode::End if ctrl => self.selected = rows.saturating_sub(1),
            KeyCode::PageDown => {
                self.scroll_auto = false;
                self.scroll += 10;
            }
            KeyCode::PageUp => {
                self.scroll_auto = false;
                self.scroll = self.scroll.saturating_sub(10);
            }
            KeyCode::Char('y') if ctrl => self.copy(screen),
            KeyCode::Char('o') if ctrl => self.web(tx),
            KeyCode::Char('u') if ctrl => {
                self.input.clear();
                self.submit(queries);
            }
            KeyCode::Char('w') if ctrl => {
                let kept = self.input.trim_end().rfind(' ').map_or(0, |i| i + 1);
                self.input.truncate(kept);
                self.submit(queries);
            }
            KeyCode::Backspace => {
                self.input.pop();
                self.submit(queries);
            }
            KeyCode::Char(c) if !ctrl && !k.modifiers.contains(KeyModifiers::ALT) => {
                self.input.push(c);
                self.submit(queries);
            }
            _ => {}
        }
        Step::Stay
    }

    fn resume_here(&mut self) -> Step {
        let Some(row) = self.row() else {
            return Step::Stay;
        };
        match pick::resume_here(&self.settings, &row.path) {
            Ok(launch) => match launch.cwd.as_deref().filter(|d| !d.is_dir()) {
                Some(gone) => {
                    self.status = Some(format!(
                        "the session's folder {} is not there any more; Tab continues it in another agent elsewhere",
                        gone.display()
                    ));
                    Step::Stay
                }
                None => Step::Leave(Outcome::Run {
                    launch,
                    notes: self.notes(),
                }),
            },
            Err(e) => {
                self.status = Some(e.to_string());
                Step::Stay
            }
        }
    }

    fn choose_target(&mut self) {
        let Some(row) = self.row() else { return };
        match pick::targets(&self.settings, &row.path) {
            Ok(names) if names.is_empty() => {
                self.status = Some("no other agent can continue this session".into())
            }
            Ok(names) => {
                self.mode = Mode::Targets { names, selected: 0 };
            }
            Err(e) => self.status = Some(e.to_string()),
        }
    }

    fn resume_in(&mut self, target: &str) -> Step {
        let Some(row) = self.row() else {
            return Step::Stay;
        };
        match pick::resume_in(&self.settings, &row.path, target) {
            Ok((done, launch)) => {
                let mut notes = vec![format!("wrote {}", done.path.display())];
                let lost = done.fidelity.to_string();
                if !lost.trim().is_empty() {
                    notes.push(lost.trim_end().to_string());
                }
                notes.extend(self.notes());
                Step::Leave(Outcome::Run { launch, notes })
            }
            Err(e) => {
                self.status = Some(e.to_string());
                Step::Stay
            }
        }
    }

    fn copy(&mut self, screen: &mut Screen) {
        let Some(row) = self.row() else { return };
        match pick::resume_here(&self.settings, &row.path) {
            Ok(launch) => {
                self.status = Some(match screen.copy(&launch.command) {
                    Ok(()) => format!("copied: {}", launch.command),
                    Err(e) => format!("could not copy ({e}): {}", launch.command),
                })
            }
            Err(e) => self.status = Some(e.to_string()),
        }
    }

    fn web(&mut self, tx: &Sender<Msg>) {
        let Some(id) = self.row().map(|r| r.id.clone()) else {
            return;
        };
        match &mut self.server {
            Some(Server { url: Some(url), .. }) => {
                let url = session_url(url, &id);
                self.status = Some(open_browser(&url));
            }
            Some(s) => {
                s.pending = Some(id);
                self.status = Some("starting the web viewer…".into());
            }
            None => match work::serve(&self.opts.serve, tx.clone()) {
                Ok(pid) => {
                    self.server = Some(Server {
                        pid,
                        url: None,
                        pending: Some(id),
                    });
                    self.status = Some("starting the web viewer…".into());
                }
                Err(e) => self.status = Some(e),
            },
        }
    }

    fn served(&mut self, r: Result<String, String>) {
        let Some(s) = &mut self.server else { return };
        match r {
            Ok(url) => {
                let pending = s.pending.take();
                s.url = Some(url.clone());
                if let Some(id) = pending {
                    self.status = Some(open_browser(&session_url(&url, &id)));
                }
            }
            Err(e) => {
                self.server = None;
                self.status = Some(e);
            }
        }
    }
}

/// Returns the web viewer's page of session `id` on the server at `base`
/// (`http://127.0.0.1:PORT/`, maybe with `?token=…`).
fn session_url(base: &str, id: &str) -> String {
    let (root, query) = match base.split_once('?') {
        Some((r, q)) => (r, format!("?{q}")),
        None => (base, String::new()),
    };
    let mut enc = String::new();
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            enc.push(b as char);
        } else {
            enc.push_str(&format!("%{b:02X}"));
        }
    }
    format!("{}/s/{enc}{query}", root.trim_end_matches('/'))
}

/// Opens `url` in the user's browser when there is one to open (`$BROWSER`,
/// or `xdg-open` / `open` on a desktop); returns what to tell the user.
fn open_browser(url: &str) -> String {
    let quiet = |c: &mut std::process::Command| {
        c.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .is_ok()
    };
    let desktop = std::env::var_os("DISPLAY").is_some()
        || std::env::var_os("WAYLAND_DISPLAY").is_some()
        || cfg!(target_os = "macos");
    let opened = match std::env::var_os("BROWSER").filter(|b| !b.is_empty()) {
        Some(b) => quiet(std::process::Command::new(b).arg(url)),
        None if desktop => {
            let opener = if cfg!(target_os = "macos") {
                "open"
            } else {
                "xdg-open"
            };
            quiet(std::process::Command::new(opener).arg(url))
        }
        None => false,
    };
    if opened {
        format!("opened in the browser: {url}")
    } else {
        format!("web viewer: {url}")
    }
}

#[cfg(test)]
mod tests {
    use super::session_url;

    #[test]
    fn session_pages_keep_the_token_and_encode_the_id() {
        assert_eq!(
            session_url("http://127.0.0.1:5/", "a b/c"),
            "http://127.0.0.1:5/s/a%20b%2Fc"
        );
        assert_eq!(
            session_url("http://h:5/?token=t", "x"),
            "http://h:5/s/x?token=t"
        );
    }
}
