//! Standard output that survives closed pipes, and small printing helpers.

use serde::Serialize;
use std::io::{self, IsTerminal, Write};

/// True when the error (or a cause) is a closed pipe: `agentlog … | head`
/// is a normal use, not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// True when standard output is a terminal.
pub fn stdout_is_terminal() -> bool {
    io::stdout().is_terminal()
}

/// True when colours should be used on standard output (a terminal, and
/// `NO_COLOR` unset).
pub fn use_color() -> bool {
    stdout_is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Writes `text` to standard output.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut o = io::stdout().lock();
    o.write_all(text.as_bytes())?;
    o.flush()?;
    Ok(())
}

/// Writes `value` as pretty JSON and a newline to standard output.
pub fn print_json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    let mut o = io::stdout().lock();
    serde_json::to_writer_pretty(&mut o, value).map_err(io::Error::other)?;
    o.write_all(b"\n")?;
    o.flush()?;
    Ok(())
}
