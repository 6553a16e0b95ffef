//! `agentlog pick`: a terminal picker over agentlog's index. Type to
//! search (words, `"phrases"`, `prefix*`, and the filters `agent:`, `dir:`,
//! `since:`, `until:`), read the highlighted session's transcript beside
//! the list with the hit in view, and press Enter to continue it in its own
//! agent in its own folder.
//!
//! Only drawing and keys live here; what is searched, previewed and run
//! comes from [`agentlog_api::pick`]. [`run`] draws on the terminal
//! (`/dev/tty`, so standard output may be a pipe) and returns what the
//! user chose ([`Outcome`]); the caller runs it (the CLI replaces itself
//! with the agent) or prints it.
//!
//! Every text taken from a session passes through the CLI's terminal
//! sanitizer ([`agentlog_formats::render::sanitize`]) before it is drawn,
//! and only the default colours with bold, underline and reverse are used,
//! so the picker reads the same on a light or a dark terminal.
#![forbid(unsafe_code)]

mod app;
mod draw;
mod term;
mod text;
mod work;

use agentlog_api::pick::Launch;
use agentlog_api::Settings;
use std::ffi::OsString;

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum PickError {
    /// The terminal could not be used.
    #[error("the terminal: {0}")]
    Terminal(#[from] std::io::Error),
    /// The library failed.
    #[error(transparent)]
    Api(#[from] agentlog_api::ApiError),
}

/// How the picker starts.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The query it starts with.
    pub query: String,
    /// At most this many sessions listed (0: 200).
    pub limit: usize,
    /// The arguments of `agentlog` that serve the web viewer over the same
    /// index and roots (`serve --port 0 --index …`); the picker runs the
    /// current executable with them when asked for the web viewer.
    pub serve: Vec<OsString>,
}

/// What the user chose.
#[derive(Debug)]
pub enum Outcome {
    /// Left without choosing.
    Quit {
        /// What to tell the user once the screen is back (a web viewer
        /// still running, for one).
        notes: Vec<String>,
    },
    /// Continue a session: run this.
    Run {
        /// The command.
        launch: Launch,
        /// What happened first (where a copy for another agent was
        /// written, what it could not hold).
        notes: Vec<String>,
    },
}

/// Runs the picker over `index` (opened and refreshed by the caller) until
/// the user chooses a session or leaves.
pub fn run(
    settings: Settings,
    index: agentlog_index::Index,
    opts: Options,
) -> Result<Outcome, PickError> {
    let mut screen = term::Screen::open()?;
    let result = event_loop(app::App::new(settings, index, opts), &mut screen);
    screen.close()?;
    result
}

/// Draws, waits for a key or an answer, does what it says; again.
fn event_loop(mut app: app::App, screen: &mut term::Screen) -> Result<Outcome, PickError> {
    let (tx, rx) = std::sync::mpsc::channel();
    work::read_input(tx.clone());
    let limit = if app.opts.limit == 0 {
        200
    } else {
        app.opts.limit
    };
    let queries = match app.index.take() {
        Some(index) => work::searcher(app.settings.clone(), index, limit, tx.clone()),
        None => std::sync::mpsc::channel().0,
    };
    let previews = work::previewer(app.settings.clone(), tx.clone());
    app.submit(&queries);
    loop {
        app.ask_preview(&previews);
        screen.terminal.draw(|f| draw::draw(f, &mut app))?;
        let Ok(first) = rx.recv() else {
            return Ok(Outcome::Quit { notes: app.notes() });
        };
        // Everything already waiting (a paste, fast typing) is taken
        // before the next drawing.
        let mut msgs = vec![first];
        while let Ok(m) = rx.try_recv() {
            msgs.push(m);
        }
        for msg in msgs {
            if let app::Step::Leave(outcome) = app.on(msg, screen, &queries, &tx)? {
                return Ok(outcome);
            }
        }
    }
}
