//! The whole `--help` of every command, as snapshots: a change to the
//! interface shows up in review.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::TestEnv;

fn help(args: &[&str]) -> String {
    let env = TestEnv::new();
    let mut full: Vec<&str> = args.to_vec();
    full.push("--help");
    let r = env.run(&full);
    assert_eq!(r.status, 0, "{}", r.stderr);
    r.stdout
}

/// Every subcommand path, from the top-level help.
fn subcommands(prefix: &[&str]) -> Vec<String> {
    let text = help(prefix);
    let mut out = Vec::new();
    let mut in_commands = false;
    for line in text.lines() {
        if line.starts_with("Commands:") {
            in_commands = true;
            continue;
        }
        if in_commands {
            if !line.starts_with("  ") {
                break;
            }
            // Wrapped descriptions are indented further than names.
            if line.starts_with("   ") {
                continue;
            }
            if let Some(name) = line.split_whitespace().next() {
                if name != "help" {
                    out.push(name.to_string());
                }
            }
        }
    }
    out
}

#[test]
fn top_level_help() {
    insta::assert_snapshot!(help(&[]));
}

#[test]
fn every_command_has_help() {
    let commands = subcommands(&[]);
    assert!(commands.len() >= 15, "{commands:?}");
    for c in &commands {
        insta::assert_snapshot!(format!("help-{c}"), help(&[c]));
    }
    for system in subcommands(&["seed"]) {
        insta::assert_snapshot!(format!("help-seed-{system}"), help(&["seed", &system]));
        for op in subcommands(&["seed", &system]) {
            insta::assert_snapshot!(
                format!("help-seed-{system}-{op}"),
                help(&["seed", &system, &op])
            );
        }
    }
}

#[test]
fn version_is_printed() {
    let env = TestEnv::new();
    let r = env.run(&["--version"]);
    assert_eq!(r.status, 0);
    assert_eq!(
        r.stdout,
        format!("agentlog {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn a_misspelt_command_is_a_usage_error() {
    let env = TestEnv::new();
    let r = env.run(&["shwo"]);
    assert_eq!(r.status, 2);
    assert!(
        r.stderr.contains("unrecognized subcommand 'shwo'"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("a similar subcommand exists: 'show'"),
        "{}",
        r.stderr
    );
}
