//! Bar charts drawn as inline SVG (no script, no external service): labels
//! are escaped text, colours come from the style sheet.

use crate::escape::esc;
use std::fmt::Write;

/// One bar: a label and two stacked values (e.g. tokens in and out), plus a
/// note shown at the bar's end (e.g. the cost).
pub struct Bar {
    /// The label.
    pub label: String,
    /// The first part.
    pub a: f64,
    /// The second part, stacked after the first.
    pub b: f64,
    /// Text at the bar's end.
    pub note: String,
}

/// Returns the last `max` characters of `s` after an ellipsis when it is
/// longer (paths and model names differ at their ends).
fn tail(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        s.to_string()
    } else {
        let t: String = s.chars().skip(n - (max - 1)).collect();
        format!("…{t}")
    }
}

fn legend_html(s: &mut String, legend: (&str, &str)) {
    let _ = write!(
        s,
        "<div class=\"legend\"><i class=\"k1\"></i>{}",
        esc(legend.0)
    );
    if !legend.1.is_empty() {
        let _ = write!(s, "<i class=\"k2\"></i>{}", esc(legend.1));
    }
    s.push_str("</div>");
}

/// Returns a horizontal stacked bar chart, one row per bar.
pub fn hbars(title: &str, legend: (&str, &str), bars: &[Bar]) -> String {
    let row = 22.0;
    let label_w = 190.0;
    let width = 640.0;
    let bar_w = width - label_w - 110.0;
    let max = bars
        .iter()
        .map(|b| b.a + b.b)
        .fold(0.0f64, f64::max)
        .max(1.0);
    let h = row * bars.len() as f64 + 8.0;
    let mut s = String::new();
    let _ = write!(s, "<div class=\"chart\"><h2>{}</h2>", esc(title));
    legend_html(&mut s, legend);
    let _ = write!(
        s,
        "<svg viewBox=\"0 0 {width} {h}\" role=\"img\" aria-label=\"{}\">",
        esc(title)
    );
    for (i, b) in bars.iter().enumerate() {
        let y = 4.0 + row * i as f64;
        let wa = bar_w * b.a / max;
        let wb = bar_w * b.b / max;
        let label = tail(&b.label, 30);
        let ell = "";
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}{ell}</text><rect class=\"bar\" x=\"{label_w}\" y=\"{y:.1}\" width=\"{wa:.1}\" height=\"{:.1}\"/><rect class=\"bar2\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{wb:.1}\" height=\"{:.1}\"/><text class=\"dim\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            label_w - 6.0,
            y + 14.0,
            esc(&label),
            row - 6.0,
            label_w + wa,
            row - 6.0,
            label_w + wa + wb + 5.0,
            y + 14.0,
            esc(&b.note)
        );
    }
    s.push_str("</svg></div>");
    s
}

/// Returns a vertical stacked bar chart over time (one bar per day), with
/// the first and last labels and the maximum marked.
pub fn columns(title: &str, legend: (&str, &str), bars: &[Bar], max_note: &str) -> String {
    let width = 640.0;
    let height = 220.0;
    let left = 8.0;
    let bottom = 24.0;
    let top = 18.0;
    let n = bars.len().max(1) as f64;
    let step = (width - left * 2.0) / n;
    let bw = (step * 0.8).max(1.0);
    let max = bars
        .iter()
        .map(|b| b.a + b.b)
        .fold(0.0f64, f64::max)
        .max(1.0);
    let plot = height - bottom - top;
    let mut s = String::new();
    let _ = write!(s, "<div class=\"chart\"><h2>{}</h2>", esc(title));
    legend_html(&mut s, legend);
    let _ = write!(
        s,
        "<svg viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"{}\">",
        esc(title)
    );
    let _ = write!(
        s,
        "<line x1=\"{left}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>",
        width - left,
        height - bottom,
        height - bottom
    );
    let _ = write!(
        s,
        "<text class=\"dim\" x=\"{left}\" y=\"12\">max {}</text>",
        esc(max_note)
    );
    for (i, b) in bars.iter().enumerate() {
        let x = left + step * i as f64 + (step - bw) / 2.0;
        let ha = plot * b.a / max;
        let hb = plot * b.b / max;
        let base = height - bottom;
        let _ = write!(
            s,
            "<rect class=\"bar\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{ha:.1}\"><title>{} {}</title></rect><rect class=\"bar2\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{hb:.1}\"><title>{} {}</title></rect>",
            base - ha,
            esc(&b.label),
            esc(&b.note),
            base - ha - hb,
            esc(&b.label),
            esc(&b.note)
        );
    }
    if let (Some(first), Some(last)) = (bars.first(), bars.last()) {
        let _ = write!(s, "<text class=\"dim\" x=\"{left}\" y=\"{:.1}\">{}</text><text class=\"dim\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>", height - 6.0, esc(&first.label), width - left, height - 6.0, esc(&last.label));
    }
    s.push_str("</svg></div>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped() {
        let bars = [Bar {
            label: "<script>x</script>".into(),
            a: 1.0,
            b: 2.0,
            note: "\"><svg onload=x>".into(),
        }];
        for svg in [
            hbars("t", ("a", "b"), &bars),
            columns("t", ("a", "b"), &bars, "3"),
        ] {
            assert!(!svg.contains("<script"), "{svg}");
            assert!(!svg.contains("<svg onload"), "{svg}");
        }
    }
}
