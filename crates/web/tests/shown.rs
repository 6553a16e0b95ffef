//! `render::keep_shown` drops only what no page shows: on every sample
//! file of every agent, the page of a session after it is the page of the
//! session before it (a subagent named only by a tool result is checked in
//! `render`'s own tests).

use agentlog_formats::registry;
use agentlog_model::Session;
use agentlog_web::pages::export_session_with;
use agentlog_web::render::{keep_shown, keep_shown_entry};
use std::path::Path;

mod common;

use common::{files, FIXTURES};

/// The page of `session` (with its subagents), and the page of both after
/// `keep_shown`.
fn pages(session: &Session, path: &str, subagents: &[(String, Session)]) -> (String, String) {
    let before = export_session_with(session, path, subagents);
    let mut pruned = session.clone();
    keep_shown(&mut pruned);
    let mut subs = subagents.to_vec();
    for (_, s) in &mut subs {
        keep_shown(s);
    }
    (before, export_session_with(&pruned, path, &subs))
}

#[test]
fn a_page_is_the_same_after_what_no_page_shows_is_dropped() {
    let mut all = Vec::new();
    files(Path::new(FIXTURES), &mut all);
    all.sort();
    let mut checked = 0;
    let mut dropped = 0;
    for path in &all {
        let Ok(format) = registry::detect(path) else {
            continue;
        };
        let Ok(read) = format.read_path(path) else {
            continue;
        };
        let shown = path.to_string_lossy().into_owned();
        let subagents = agentlog_web::files::read_subagents(path, format.name());
        let (before, after) = pages(&read.session, &shown, &subagents);
        assert!(before == after, "{shown}: the page changed");
        let mut pruned = read.session.clone();
        keep_shown(&mut pruned);
        if pruned != read.session {
            dropped += 1;
        }
        // Dropped as the session is read (what the viewer reads), the same.
        let mut shown_after = format.read_path_to_show(path).unwrap().session;
        keep_shown(&mut shown_after);
        let as_read = format
            .read_path_to_show_with(path, &keep_shown_entry)
            .unwrap()
            .session;
        assert!(as_read == shown_after, "{shown}: trimmed as read differs");
        checked += 1;
    }
    // The sample files of every agent are there, and most of them keep
    // fields no page shows.
    assert!(checked >= 40, "only {checked} sample files were read");
    assert!(
        dropped * 2 >= checked,
        "{dropped} of {checked} lost anything"
    );
}
