//! The terminal: raw mode and the alternate screen on `/dev/tty` for the
//! picker's lifetime, given back as it was on every way out; and the
//! clipboard through OSC 52.

use base64::Engine as _;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::{cursor, execute, terminal};
use ratatui::Terminal;
use std::fs::File;
use std::io::Write;

/// The picker's screen.
pub struct Screen {
    /// What ratatui draws on.
    pub terminal: Terminal<CrosstermBackend<File>>,
    /// The terminal again, for what ratatui does not write (OSC 52).
    tty: File,
    open: bool,
}

impl Screen {
    /// Takes the terminal: raw mode, the alternate screen.
    pub fn open() -> std::io::Result<Screen> {
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")?;
        let mut draw = tty.try_clone()?;
        terminal::enable_raw_mode()?;
        if let Err(e) = execute!(draw, terminal::EnterAlternateScreen, cursor::Hide) {
            let _ = terminal::disable_raw_mode();
            return Err(e);
        }
        let screen = Screen {
            terminal: Terminal::new(CrosstermBackend::new(draw))?,
            tty,
            open: true,
        };
        Ok(screen)
    }

    /// Gives the terminal back as it was.
    pub fn close(&mut self) -> std::io::Result<()> {
        if !self.open {
            return Ok(());
        }
        self.open = false;
        let left = execute!(self.tty, terminal::LeaveAlternateScreen, cursor::Show);
        terminal::disable_raw_mode()?;
        left
    }

    /// Asks the terminal to put `text` on the clipboard (OSC 52; terminals
    /// and tmux that do not take it ignore it).
    pub fn copy(&mut self, text: &str) -> std::io::Result<()> {
        let b64 = base64::engine::general_purpose::STANDARD.encode(text);
        write!(self.tty, "\x1b]52;c;{b64}\x07")?;
        self.tty.flush()
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.close();
    }
}
