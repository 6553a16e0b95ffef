use crate::out;
use agentlog_formats::registry;
use std::process::ExitCode;

/// List the formats agentlog reads and writes.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `agentlog formats`.
pub fn cmd_formats(args: Args) -> anyhow::Result<ExitCode> {
    let rows: Vec<serde_json::Value> = registry::all()
        .iter()
        .map(|f| {
            serde_json::json!({
                "name": f.name(),
                "agent": f.agent().as_str(),
                "read": true,
                "write": f.can_write(),
                "description": f.description(),
            })
        })
        .collect();
    if args.json {
        out::print_json(&rows)?;
    } else {
        let mut text = format!("{:<10} {:<6} {}\n", "FORMAT", "WRITE", "DESCRIPTION");
        for f in registry::all() {
            text.push_str(&format!(
                "{:<10} {:<6} {}\n",
                f.name(),
                if f.can_write() { "yes" } else { "no" },
                f.description()
            ));
        }
        out::print(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
