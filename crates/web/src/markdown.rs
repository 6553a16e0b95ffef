//! Markdown to HTML, safely: raw HTML in the text is shown as text, links
//! go only to web addresses, and images are never fetched (they become
//! links).

use crate::escape::safe_href;
use pulldown_cmark::{html, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

/// Returns `text` rendered as HTML with nothing in it able to run or load.
pub fn render(text: &str) -> String {
    let parser = Parser::new_ext(
        text,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS,
    );
    let events = parser.map(|ev| match ev {
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: guard(dest_url),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            dest_url,
            title,
            id,
            ..
        }) => Event::Start(Tag::Link {
            link_type: LinkType::Inline,
            dest_url: guard(dest_url),
            title,
            id,
        }),
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    });
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    html::push_html(&mut out, events);
    out
}

fn guard(url: CowStr<'_>) -> CowStr<'_> {
    if safe_href(&url) {
        url
    } else {
        CowStr::Borrowed("#unsafe-link")
    }
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn raw_html_is_text() {
        let h = render(
            "hi <script>alert(1)</script> <img src=x onerror=alert(1)>\n\n<div onclick=x>b</div>",
        );
        assert!(!h.contains("<script"), "{h}");
        assert!(!h.contains("<img"), "{h}");
        assert!(!h.contains("<div"), "{h}");
        assert!(h.contains("&lt;script&gt;"), "{h}");
    }

    #[test]
    fn links_and_images_are_guarded() {
        let h =
            render("[a](javascript:alert(1)) ![b](https://evil.test/x.png) [c](https://ok.test/)");
        assert!(!h.contains("javascript:"), "{h}");
        assert!(!h.contains("<img"), "{h}");
        assert!(h.contains("href=\"https://ok.test/\""), "{h}");
        assert!(h.contains("href=\"https://evil.test/x.png\""), "{h}");
    }

    #[test]
    fn renders_markdown() {
        let h = render("# T\n\n**b** `c`\n\n```rust\nfn x() {}\n```\n");
        assert!(
            h.contains("<h1>T</h1>")
                && h.contains("<strong>b</strong>")
                && h.contains("<code>c</code>"),
            "{h}"
        );
        assert!(h.contains("language-rust"), "{h}");
    }
}
