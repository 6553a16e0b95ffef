use crate::{config, out};
use agentlog_index::prices::{self, PriceTable};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The address of LiteLLM's price list.
pub const LITELLM_URL: &str =
    "https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json";

/// Show or refresh the model prices `stats` estimates cost with.
///
/// Prices come from LiteLLM's model_prices_and_context_window.json, the
/// public list ccusage and agentsview use. agentlog has a dated snapshot
/// built in; `prices update` fetches the current list (with curl) or reads
/// a file, keeps the fields agentlog uses and stores them as
/// $XDG_DATA_HOME/agentlog/prices.json, which `stats` then uses instead.
/// `stats --prices FILE` uses FILE (a LiteLLM file or such a snapshot) for
/// one run.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: PricesCommand,
}

/// What to do with the price list.
#[derive(clap::Subcommand, Debug)]
pub enum PricesCommand {
    /// Fetch the current price list and keep it for `stats`.
    Update(UpdateArgs),
    /// Print the price agentlog uses for each model named, and where the
    /// list comes from.
    Show(ShowArgs),
}

/// Arguments of `prices update`.
#[derive(clap::Args, Debug)]
pub struct UpdateArgs {
    /// An http(s) address or a file holding LiteLLM's price list.
    #[arg(long, value_name = "URL|FILE", default_value = LITELLM_URL)]
    pub from: String,
    /// Where to write the snapshot (default:
    /// $XDG_DATA_HOME/agentlog/prices.json).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The date to record as when the list was taken (default: today, UTC).
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub date: Option<String>,
    /// How to describe where the list came from (default: the address or
    /// file it was read from).
    #[arg(long, value_name = "TEXT")]
    pub source: Option<String>,
}

/// Arguments of `prices show`.
#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// Model names as session files write them.
    #[arg(value_name = "MODEL")]
    pub models: Vec<String>,
    /// Use this price list instead of the kept or built-in one.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The price list `prices update` keeps.
pub fn kept_path() -> anyhow::Result<PathBuf> {
    let settings = config::settings(&[])?;
    Ok(settings
        .env
        .xdg_data_home()
        .join("agentlog")
        .join("prices.json"))
}

/// Makes the price list of this run the one given with `--prices`, else the
/// one `prices update` kept, else the built-in snapshot; returns a line
/// saying which.
pub fn use_prices(file: Option<&Path>) -> anyhow::Result<String> {
    let kept = kept_path()?;
    let path = match file {
        Some(f) => Some(f.to_path_buf()),
        None => kept.exists().then_some(kept.clone()),
    };
    let table = match &path {
        Some(p) => PriceTable::load(p).with_context(|| {
            if file.is_none() {
                format!(
                    "the price list kept by `agentlog prices update` cannot be read; \
                     run it again or remove {}",
                    p.display()
                )
            } else {
                "reading --prices".to_string()
            }
        })?,
        None => PriceTable::bundled(),
    };
    let line = describe(&table, path.as_deref());
    prices::install(table);
    Ok(line)
}

fn describe(t: &PriceTable, path: Option<&Path>) -> String {
    let when = t.taken.as_deref().unwrap_or("an unknown date");
    match path {
        Some(p) => format!(
            "prices: {} of {when} ({} models, {})",
            t.source,
            t.len(),
            p.display()
        ),
        None => format!(
            "prices: {} of {when} ({} models, built in)",
            t.source,
            t.len()
        ),
    }
}

/// Runs `agentlog prices`.
pub fn cmd_prices(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        PricesCommand::Update(a) => update(a),
        PricesCommand::Show(a) => show(a),
    }
}

fn fetch(from: &str) -> anyhow::Result<String> {
    if from.starts_with("http://") || from.starts_with("https://") {
        let out = std::process::Command::new("curl")
            .args(["-fsSL", "--max-time", "120", from])
            .output()
            .with_context(|| format!("fetching {from} needs curl, which could not be run"))?;
        if !out.status.success() {
            anyhow::bail!(
                "fetching {from} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        String::from_utf8(out.stdout).with_context(|| format!("{from} is not UTF-8 text"))
    } else {
        std::fs::read_to_string(from).with_context(|| format!("reading {from}"))
    }
}

fn update(a: UpdateArgs) -> anyhow::Result<ExitCode> {
    let text = fetch(&a.from)?;
    let table = PriceTable::from_json(&a.from, &text)?;
    if table.is_empty() {
        anyhow::bail!("{}: no chat model with a price in it", a.from);
    }
    let date = match a.date {
        Some(d) => {
            if chrono::NaiveDate::parse_from_str(&d, "%Y-%m-%d").is_err() {
                anyhow::bail!("--date {d:?}: expected YYYY-MM-DD");
            }
            d
        }
        None => chrono::Utc::now().format("%Y-%m-%d").to_string(),
    };
    let source = a
        .source
        .unwrap_or_else(|| format!("LiteLLM price list from {}", a.from));
    let json = table.to_snapshot_json(&source, &date);
    let out_path = match a.out {
        Some(p) => p,
        None => kept_path()?,
    };
    if let Some(dir) = out_path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    agentlog_store::snapshot::write_atomic(&out_path, json.as_bytes())
        .with_context(|| format!("writing {}", out_path.display()))?;
    out::print(&format!(
        "{} models priced, taken {date}, written to {}\n",
        table.len(),
        out_path.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn show(a: ShowArgs) -> anyhow::Result<ExitCode> {
    let line = use_prices(a.prices.as_deref())?;
    let t = prices::table();
    let rows: Vec<serde_json::Value> = a
        .models
        .iter()
        .map(|m| serde_json::json!({"model": m, "price": t.find(m)}))
        .collect();
    if a.json {
        out::print_json(&serde_json::json!({
            "source": t.source, "taken": t.taken, "models": t.len(), "prices": rows,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut s = format!("{line}\n");
    if !a.models.is_empty() {
        s.push_str("USD per million tokens: input, output, cache read, cache write\n");
    }
    for m in &a.models {
        match t.find(m) {
            Some(p) => {
                s.push_str(&format!(
                    "{m}: {} {} {} {} (row {})",
                    p.input, p.output, p.cache_read, p.cache_write, p.model
                ));
                if let Some(above) = p.above_200k {
                    let f = |x: Option<f64>| x.map_or("-".to_string(), |v| v.to_string());
                    s.push_str(&format!(
                        "; above 200k tokens: {} {} {} {}",
                        f(above[0]),
                        f(above[1]),
                        f(above[2]),
                        f(above[3])
                    ));
                }
                s.push('\n');
            }
            None => s.push_str(&format!("{m}: not in the list (cost unknown)\n")),
        }
    }
    out::print(&s)?;
    Ok(ExitCode::SUCCESS)
}
