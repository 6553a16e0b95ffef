//! Drawing: the query line, the list, the preview, the status line, and
//! the help and agent overlays. Only the terminal's own colours are used,
//! with bold, underline and reverse: readable on light and dark themes.

use crate::app::{App, Mode};
use crate::text::{fit, marked, one_line, wrapped};
use agentlog_api::pick::{Preview, Row};
use ratatui::layout::{Constraint, Direction, Layout, Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState, Paragraph};
use ratatui::Frame;

/// The keys, as the help shows them.
pub const KEYS: &[(&str, &str)] = &[
    ("type", "search: words, \"a phrase\", prefix*, -not"),
    ("agent:NAME", "only this agent (agent:claude,codex)"),
    ("dir:TEXT", "only sessions whose folder holds TEXT"),
    ("since:7d", "only since then (30m, 12h, 2w, 2026-01-31)"),
    ("until:WHEN", "only before then"),
    ("Up Down", "highlight a session (also Ctrl-P Ctrl-N)"),
    ("PgUp PgDn", "scroll the preview"),
    ("Enter", "continue it in its agent, in its folder"),
    ("Tab", "continue it in another agent (resume --in)"),
    ("Ctrl-Y", "copy the command that continues it"),
    ("Ctrl-O", "open it in the web viewer"),
    ("Ctrl-U Ctrl-W", "clear the query, delete a word"),
    ("?  F1", "this help"),
    ("Esc  Ctrl-C", "leave"),
];

const BOLD: Style = Style::new().add_modifier(Modifier::BOLD);
const REVERSED: Style = Style::new().add_modifier(Modifier::REVERSED);
const DIM: Style = Style::new().add_modifier(Modifier::DIM);

pub fn draw(f: &mut Frame<'_>, app: &mut App) {
    let area = f.area();
    let [top, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(2),
        Constraint::Length(1),
    ])
    .areas(area);
    query_line(f, app, top);
    let side = body.width >= 120;
    let split = if side {
        Layout::new(
            Direction::Horizontal,
            [Constraint::Percentage(45), Constraint::Percentage(55)],
        )
        .split(body)
    } else {
        let list = (body.height * 2 / 5).max(3);
        Layout::vertical([Constraint::Length(list), Constraint::Min(1)]).split(body)
    };
    list(f, app, split[0]);
    preview(f, app, split[1], side);
    status_line(f, app, status);
    match &app.mode {
        Mode::Help => help(f, area),
        Mode::Targets { names, selected } => targets(f, area, names, *selected),
        Mode::List => {}
    }
}

fn query_line(f: &mut Frame<'_>, app: &App, area: Rect) {
    let right = if let Some(e) = &app.query_error {
        format!("! {}", one_line(e))
    } else if app.waiting {
        "searching…".to_string()
    } else {
        let n = app.found.rows.len();
        let more = if app.found.more { "+" } else { "" };
        format!(
            "{n}{more} session{}",
            if n == 1 && more.is_empty() { "" } else { "s" }
        )
    };
    let input = one_line(&app.input);
    let room = (area.width as usize).saturating_sub(right.chars().count() + 4);
    let shown = tail(&input, room);
    let mut spans = vec![Span::styled("> ", BOLD), Span::raw(shown.clone())];
    let used = 2 + unicode_width::UnicodeWidthStr::width(shown.as_str());
    let pad = (area.width as usize).saturating_sub(used + right.chars().count());
    spans.push(Span::raw(" ".repeat(pad)));
    spans.push(Span::styled(right, DIM));
    f.render_widget(Paragraph::new(Line::from(spans)), area);
    if matches!(app.mode, Mode::List) {
        f.set_cursor_position(Position::new(area.x + used as u16, area.y));
    }
}

/// The end of `s` that fits `width` cells (what is being typed stays in view).
fn tail(s: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let mut used = 0;
    let mut start = s.len();
    for (i, c) in s.char_indices().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > width {
            break;
        }
        used += w;
        start = i;
    }
    s[start..].to_string()
}

fn when(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::<chrono::Utc>::from_timestamp_millis)
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| "          ".to_string())
}

fn row_item(r: &Row) -> ListItem<'static> {
    let title = one_line(r.title.as_deref().unwrap_or("(untitled)"));
    let mut head = vec![
        Span::raw(format!(
            "{:<8} {} ",
            fit(&one_line(&r.agent), 8),
            when(r.when_ms)
        )),
        Span::styled(title, BOLD),
    ];
    if r.hits > 1 {
        head.push(Span::styled(format!("  {} hits", r.hits), DIM));
    }
    if r.deleted {
        head.push(Span::styled("  (deleted, archived)", DIM));
    }
    let mut lines = vec![Line::from(head)];
    // With no words searched, one line a session: more in view.
    if let Some(h) = &r.hit {
        let mut spans = vec![Span::raw("  ")];
        for seg in h.segments() {
            let t = one_line(&seg.text);
            spans.push(if seg.hit {
                Span::styled(t, BOLD.add_modifier(Modifier::UNDERLINED))
            } else {
                Span::raw(t)
            });
        }
        lines.push(Line::from(spans));
    }
    ListItem::new(lines)
}

fn list(f: &mut Frame<'_>, app: &App, area: Rect) {
    let title = match &app.shown_for {
        Some(s) => format!(" {} ", one_line(s)),
        None => " newest first ".to_string(),
    };
    let block = Block::new()
        .borders(Borders::TOP)
        .title(Span::styled(title, BOLD));
    if app.found.rows.is_empty() && !app.waiting {
        let msg = if app.shown_for.is_some() {
            "no session matches"
        } else {
            "no sessions found (agentlog index reads them)"
        };
        f.render_widget(Paragraph::new(msg).block(block), area);
        return;
    }
    let items: Vec<ListItem<'static>> = app.found.rows.iter().map(row_item).collect();
    let mut state = ListState::default().with_selected(Some(app.selected));
    f.render_stateful_widget(
        List::new(items).block(block).highlight_style(REVERSED),
        area,
        &mut state,
    );
}

/// The preview's lines at `width`, and the line to bring into view.
fn preview_lines(p: &Preview, width: usize, words: &[String]) -> (Vec<Line<'static>>, usize) {
    let mut lines = vec![Line::from(Span::styled(one_line(&p.facts), DIM))];
    let mut focus = 0;
    for (i, e) in p.entries.iter().enumerate() {
        lines.push(Line::raw(""));
        let focused = p.focus == Some(i);
        let head = match &e.time {
            Some(t) => format!("{} · {t}", one_line(&e.label)),
            None => one_line(&e.label),
        };
        let head_at = lines.len();
        lines.push(Line::from(Span::styled(
            head,
            if focused {
                BOLD.add_modifier(Modifier::REVERSED)
            } else {
                BOLD
            },
        )));
        let mut first_mark = None;
        for l in wrapped(&e.text, width.saturating_sub(2)) {
            let line = marked(format!("  {l}"), words, Style::new());
            if focused && first_mark.is_none() && line.spans.len() > 1 {
                first_mark = Some(lines.len());
            }
            lines.push(line);
        }
        if focused {
            // The entry's head, or its first marked line, near the top.
            focus = match first_mark {
                Some(m) if m > head_at + 4 => m.saturating_sub(2),
                _ => head_at.saturating_sub(1),
            };
        }
    }
    (lines, focus)
}

fn preview(f: &mut Frame<'_>, app: &mut App, area: Rect, side: bool) {
    let borders = if side {
        Borders::TOP | Borders::LEFT
    } else {
        Borders::TOP
    };
    let block = Block::new().borders(borders);
    let wanted = app.row().map(|r| r.path.clone());
    match &app.preview {
        Some(((path, _), Ok(p))) if Some(path) == wanted.as_ref() => {
            let block = block.title(Span::styled(format!(" {} ", one_line(&p.title)), BOLD));
            let inner = block.inner(area);
            let (lines, focus) = preview_lines(p, inner.width as usize, &app.marked);
            if app.scroll_auto {
                app.scroll = focus;
            }
            let max = lines.len().saturating_sub(inner.height as usize);
            app.scroll = app.scroll.min(max);
            let para = Paragraph::new(lines)
                .block(block)
                .scroll((app.scroll.min(u16::MAX as usize) as u16, 0));
            f.render_widget(para, area);
        }
        Some(((path, _), Err(e))) if Some(path) == wanted.as_ref() => {
            f.render_widget(Paragraph::new(one_line(e)).block(block), area);
        }
        _ if wanted.is_some() => {
            f.render_widget(Paragraph::new("reading…").style(DIM).block(block), area);
        }
        _ => f.render_widget(block, area),
    }
}

fn status_line(f: &mut Frame<'_>, app: &App, area: Rect) {
    let text = match &app.status {
        Some(s) => one_line(s),
        None => "Enter resume  Tab other agent  ^Y copy  ^O web  ? help  Esc quit".to_string(),
    };
    let text = fit(&text, area.width as usize);
    f.render_widget(Paragraph::new(text).style(REVERSED), area);
}

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

fn help(f: &mut Frame<'_>, area: Rect) {
    let lines: Vec<Line<'static>> = KEYS
        .iter()
        .map(|(k, what)| {
            Line::from(vec![
                Span::styled(format!(" {k:<14}"), BOLD),
                Span::raw(what.to_string()),
            ])
        })
        .collect();
    let r = centered(area, 72, lines.len() as u16 + 2);
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines)
            .block(Block::bordered().title(Span::styled(" keys (any key closes) ", BOLD))),
        r,
    );
}

fn targets(f: &mut Frame<'_>, area: Rect, names: &[&'static str], selected: usize) {
    let items: Vec<ListItem<'static>> = names
        .iter()
        .map(|n| ListItem::new(format!(" {n}")))
        .collect();
    let r = centered(area, 40, names.len() as u16 + 2);
    f.render_widget(Clear, r);
    let mut state = ListState::default().with_selected(Some(selected));
    f.render_stateful_widget(
        List::new(items)
            .block(Block::bordered().title(Span::styled(" continue in (Enter, Esc) ", BOLD)))
            .highlight_style(REVERSED),
        r,
        &mut state,
    );
}
