//! Prepares the built-in rules (`src/rules.toml`) for the library, so that a
//! short command does not pay for it at run time:
//!
//! - the rules as JSON (parsing the TOML took a short command half a
//!   millisecond, JSON a few microseconds);
//! - the keyword automaton as tables (`keywords.rs`): building the
//!   Aho-Corasick DFA of every rule's keywords was half of what `--redact`
//!   added to exporting one session. The DFA is built here, with the options
//!   the library uses, and its transitions, byte classes and matches are
//!   written out as arrays, so the built-in rules search the very automaton
//!   the library would have built (a test compares the two).
//!
//! - for each rule whose every match starts with one of its keywords, its
//!   pattern as an anchored DFA (`starts.rs`, `starts.bin`): the rule's
//!   screen runs where its keywords start instead of being built from the
//!   pattern when the rule first runs.
//!
//! The TOML stays the file people read and edit; a broken one fails the
//! build, naming the problem.

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::Anchored;
use regex_automata::dfa::{dense, Automaton as _, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::start;
use regex_syntax::hir::{Hir, HirKind, Repetition};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() -> Result<(), String> {
    println!("cargo::rerun-if-changed=src/rules.toml");
    let text = std::fs::read_to_string("src/rules.toml")
        .map_err(|e| format!("reading src/rules.toml: {e}"))?;
    let value: toml::Value = toml::from_str(&text).map_err(|e| format!("src/rules.toml: {e}"))?;
    let json = serde_json::to_string(&value).map_err(|e| format!("rules as JSON: {e}"))?;
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    write(&out.join("rules.json"), &json)?;
    let keywords = keywords(&value)?;
    write(&out.join("keywords.rs"), &tables(&keywords)?)?;
    let (rs, blob) = starts(&value)?;
    write(&out.join("starts.rs"), &rs)?;
    std::fs::write(out.join("starts.bin"), blob).map_err(|e| format!("writing starts.bin: {e}"))
}

fn write(path: &std::path::Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Every rule's keywords, in the order the library numbers them: rule by
/// rule, each rule's in the order written.
fn keywords(rules: &toml::Value) -> Result<Vec<String>, String> {
    let mut all = Vec::new();
    let Some(list) = rules.get("rule").and_then(toml::Value::as_array) else {
        return Ok(all);
    };
    for rule in list {
        let Some(words) = rule.get("keywords") else {
            continue;
        };
        let words = words
            .as_array()
            .ok_or("src/rules.toml: keywords is not a list")?;
        for w in words {
            let w = w
                .as_str()
                .ok_or("src/rules.toml: a keyword is not a string")?;
            all.push(w.to_string());
        }
    }
    Ok(all)
}

/// The keyword DFA as Rust arrays (see `Fixed` in `src/rules.rs`).
fn tables(keywords: &[String]) -> Result<String, String> {
    // The options of `Keywords::new` in src/rules.rs.
    let dfa = aho_corasick::dfa::Builder::new()
        .ascii_case_insensitive(true)
        .prefilter(false)
        .build(keywords)
        .map_err(|e| format!("keywords: {e}"))?;
    let start = dfa
        .start_state(Anchored::No)
        .map_err(|e| format!("keywords: {e}"))?;
    // Every state an unanchored search reaches, numbered as found.
    let mut states = vec![start];
    let mut number: HashMap<StateID, usize> = HashMap::from([(start, 0)]);
    let mut i = 0;
    while i < states.len() {
        for b in 0..=255u8 {
            let next = dfa.next_state(Anchored::No, states[i], b);
            if dfa.is_dead(next) {
                return Err("keywords: an unanchored search reached the dead state".into());
            }
            number.entry(next).or_insert_with(|| {
                states.push(next);
                states.len() - 1
            });
        }
        i += 1;
    }
    // Non-matching states first, so that a state is a match state when its
    // number is at least the first match state's.
    let mut order: Vec<usize> = (0..states.len()).collect();
    order.sort_by_key(|&s| (dfa.is_match(states[s]), s));
    let mut place = vec![0; states.len()];
    for (new, &old) in order.iter().enumerate() {
        place[old] = new;
    }
    let first_match = order
        .iter()
        .position(|&s| dfa.is_match(states[s]))
        .unwrap_or(order.len());
    // Bytes that every state treats alike share a class.
    let mut classes = [0u8; 256];
    let mut seen: HashMap<Vec<usize>, u8> = HashMap::new();
    for b in 0..=255u8 {
        let row: Vec<usize> = states
            .iter()
            .map(|&s| number[&dfa.next_state(Anchored::No, s, b)])
            .collect();
        let n = seen.len();
        let class = *seen.entry(row).or_insert_with(|| n as u8);
        if seen.len() > 256 {
            return Err("keywords: more than 256 byte classes".into());
        }
        classes[b as usize] = class;
    }
    let stride = seen.len();
    let cells = states.len() * stride;
    if cells > u32::MAX as usize {
        return Err("keywords: the table is too large".into());
    }
    // The transitions, each the next state's number times the stride, in a
    // table whose length is a power of two (the search masks its index).
    let mut next = vec![0u32; cells.next_power_of_two()];
    let mut rep = [0u8; 256];
    for b in (0..=255u8).rev() {
        rep[classes[b as usize] as usize] = b;
    }
    for (old, &s) in states.iter().enumerate() {
        for (class, &b) in rep.iter().enumerate().take(stride) {
            let to = place[number[&dfa.next_state(Anchored::No, s, b)]];
            next[place[old] * stride + class] = (to * stride) as u32;
        }
    }
    // The keywords each match state reports.
    let mut match_at = vec![0u32];
    let mut match_list = Vec::new();
    for &old in &order[first_match..] {
        let s = states[old];
        for k in 0..dfa.match_len(s) {
            match_list.push(dfa.match_pattern(s, k).as_usize() as u32);
        }
        match_at.push(match_list.len() as u32);
    }
    let mut rs = String::new();
    let w = &mut rs;
    let _ = writeln!(
        w,
        "// Generated by build.rs from src/rules.toml: do not edit."
    );
    let _ = writeln!(
        w,
        "pub(crate) static PATTERNS: [&str; {}] = {:?};",
        keywords.len(),
        keywords
    );
    let _ = writeln!(w, "pub(crate) static CLASSES: [u8; 256] = {classes:?};");
    let _ = writeln!(w, "pub(crate) const STRIDE: u32 = {stride};");
    let _ = writeln!(w, "pub(crate) const START: u32 = {};", place[0] * stride);
    let _ = writeln!(
        w,
        "pub(crate) const FIRST_MATCH: u32 = {};",
        first_match * stride
    );
    let _ = writeln!(
        w,
        "pub(crate) const MAX_LEN: usize = {};",
        dfa.max_pattern_len()
    );
    // Two bytes a transition when every one fits.
    let cell = if next.iter().all(|&n| n <= u32::from(u16::MAX)) {
        "u16"
    } else {
        "u32"
    };
    let _ = writeln!(w, "pub(crate) type Cell = {cell};");
    let _ = writeln!(
        w,
        "pub(crate) static NEXT: [Cell; {}] = {next:?};",
        next.len()
    );
    let _ = writeln!(
        w,
        "pub(crate) static MATCH_AT: [u32; {}] = {match_at:?};",
        match_at.len()
    );
    let _ = writeln!(
        w,
        "pub(crate) static MATCH_LIST: [u32; {}] = {match_list:?};",
        match_list.len()
    );
    Ok(rs)
}

/// The largest anchored DFA kept for a rule (bytes); a rule whose DFA is
/// larger keeps the screen built at run time.
const MAX_START_DFA: usize = 192 * 1024;

/// The anchored DFAs of the rules whose every match starts with one of
/// their keywords: Rust naming each (rule id, pattern, keywords, where its
/// bytes are) and the bytes, each DFA at a multiple of 8.
fn starts(rules: &toml::Value) -> Result<(String, Vec<u8>), String> {
    let mut rs = String::new();
    let mut blob = Vec::new();
    let mut rows = Vec::new();
    let list = rules
        .get("rule")
        .and_then(toml::Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    for rule in list {
        let text = |k: &str| rule.get(k).and_then(toml::Value::as_str).unwrap_or("");
        let (id, pattern) = (text("id"), text("regex"));
        let keywords: Vec<&str> = rule
            .get("keywords")
            .and_then(toml::Value::as_array)
            .map(|a| a.iter().filter_map(toml::Value::as_str).collect())
            .unwrap_or_default();
        let match_case = rule
            .get("keywords_match_case")
            .and_then(toml::Value::as_bool)
            .unwrap_or(false);
        if keywords.is_empty() {
            continue;
        }
        let Ok(hir) = regex_syntax::ParserBuilder::new()
            .unicode(false)
            .utf8(false)
            .build()
            .parse(pattern)
        else {
            continue;
        };
        let Ok(nfa) = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .utf8(false)
                    .which_captures(thompson::WhichCaptures::None),
            )
            .build_from_hir(&shortened(hir))
        else {
            continue;
        };
        let Ok(dfa) = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .start_kind(StartKind::Anchored)
                    .minimize(true)
                    .dfa_size_limit(Some(MAX_START_DFA)),
            )
            .build_from_nfa(&nfa)
        else {
            continue;
        };
        if !starts_with_keyword(&dfa, &keywords, match_case) {
            continue;
        }
        let (bytes, pad) = dfa.to_bytes_little_endian();
        let bytes = &bytes[pad..];
        if bytes.len() > MAX_START_DFA {
            continue;
        }
        while blob.len() % 8 != 0 {
            blob.push(0);
        }
        rows.push(format!(
            "    super::BuiltStart {{ id: {id:?}, pattern: {pattern:?}, keywords: &{keywords:?}, \
             match_case: {match_case}, from: {}, len: {} }},",
            blob.len(),
            bytes.len()
        ));
        blob.extend_from_slice(bytes);
    }
    let _ = writeln!(
        rs,
        "// Generated by build.rs from src/rules.toml: do not edit."
    );
    let _ = writeln!(
        rs,
        "pub(crate) static STARTS: [super::BuiltStart; {}] = [",
        rows.len()
    );
    for row in rows {
        let _ = writeln!(rs, "{row}");
    }
    let _ = writeln!(rs, "];");
    Ok((rs, blob))
}

/// A pattern that matches where `hir` does (and perhaps elsewhere), for a
/// screen that only asks whether a match starts somewhere: what follows
/// the last part that must match is dropped, and a repetition that ends
/// the pattern (`[A-Za-z0-9]{20,150}`) repeats its fewest times: every
/// match of the pattern begins with a match of this one. Counting to the
/// most a repetition allows was most of the states of the DFAs that have
/// one.
fn shortened(hir: Hir) -> Hir {
    match hir.into_kind() {
        HirKind::Concat(mut parts) => {
            while parts.len() > 1
                && parts.last().and_then(|p| p.properties().minimum_len()) == Some(0)
            {
                parts.pop();
            }
            if let Some(last) = parts.pop() {
                parts.push(shortened(last));
            }
            Hir::concat(parts)
        }
        HirKind::Alternation(branches) => {
            Hir::alternation(branches.into_iter().map(shortened).collect())
        }
        HirKind::Capture(capture) => shortened(*capture.sub),
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            max: Some(r.min),
            ..r
        }),
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(literal) => Hir::literal(literal.0),
        HirKind::Class(class) => Hir::class(class),
        HirKind::Look(look) => Hir::look(look),
    }
}

/// True when every match of the anchored `dfa` begins with one of
/// `keywords` (ASCII case-insensitively unless `match_case`), whatever byte
/// precedes it: the walk follows the DFA and the keywords' trie together
/// from the start, and fails on a match before a keyword is complete or on
/// a byte the DFA takes and no keyword has there.
fn starts_with_keyword(dfa: &dense::DFA<Vec<u32>>, keywords: &[&str], match_case: bool) -> bool {
    let fold = |b: u8| {
        if match_case {
            b
        } else {
            b.to_ascii_lowercase()
        }
    };
    // The trie: for each node, its children by byte and whether a keyword
    // ends there.
    let mut trie: Vec<(HashMap<u8, usize>, bool)> = vec![(HashMap::new(), false)];
    for k in keywords {
        let mut node = 0;
        for &b in k.as_bytes() {
            let n = trie.len();
            node = *trie[node].0.entry(fold(b)).or_insert(n);
            if node == n {
                trie.push((HashMap::new(), false));
            }
        }
        trie[node].1 = true;
    }
    for before in [None, Some(b'a'), Some(b' '), Some(b'\n')] {
        let config = start::Config::new()
            .anchored(regex_automata::Anchored::Yes)
            .look_behind(before);
        let Ok(first) = dfa.start_state(&config) else {
            return false;
        };
        let mut todo = vec![(first, 0usize)];
        let mut seen = std::collections::HashSet::new();
        while let Some((sid, node)) = todo.pop() {
            if !seen.insert((sid, node)) {
                continue;
            }
            if trie[node].1 {
                continue;
            }
            if dfa.is_match_state(dfa.next_eoi_state(sid)) {
                return false;
            }
            for b in 0..=255u8 {
                let next = dfa.next_state(sid, b);
                if dfa.is_dead_state(next) {
                    continue;
                }
                if dfa.is_match_state(next) || dfa.is_quit_state(next) {
                    return false;
                }
                match trie[node].0.get(&fold(b)) {
                    Some(&child) => todo.push((next, child)),
                    None => return false,
                }
            }
        }
    }
    true
}
