//! The visible text of an HTML page: what a reader of the page sees, for fingerprinting and
//! scanning — parsed by a browser-grade HTML5 parser (`scraper`, over Servo's `html5ever`), so
//! malformed markup, comments, entities and `<script>` bodies are read as a browser reads them.
//!
//! Text inside `script`, `style`, `noscript`, `template` and `head` (but for `title`) is not
//! visible and is dropped; block-level elements and `br` end a line, so that words of adjacent
//! paragraphs do not run together, while inline markup (`<b>` inside a word) does not split.

use scraper::Html;

/// Elements whose text is not shown.
fn hidden(name: &str) -> bool {
    matches!(
        name,
        "script" | "style" | "noscript" | "template" | "head" | "svg" | "iframe" | "object"
    )
}

/// Elements that start and end a line of text.
fn block(name: &str) -> bool {
    matches!(
        name,
        "p" | "div"
            | "br"
            | "li"
            | "ul"
            | "ol"
            | "tr"
            | "td"
            | "th"
            | "table"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "section"
            | "article"
            | "header"
            | "footer"
            | "nav"
            | "aside"
            | "main"
            | "form"
            | "blockquote"
            | "pre"
            | "hr"
            | "title"
            | "body"
            | "dd"
            | "dt"
            | "figcaption"
            | "address"
            | "label"
            | "button"
            | "option"
    )
}

/// Whether `bytes` look like an HTML document: after white space (and a byte-order mark), a
/// `<!DOCTYPE html` or `<html` (any case).
pub fn looks_like_html(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let head = &bytes[start..bytes.len().min(start + 14)];
    let lower = head.to_ascii_lowercase();
    lower.starts_with(b"<!doctype html") || lower.starts_with(b"<html")
}

/// The visible text of an HTML document (module docs), lines separated by `\n`.
pub fn visible_text(html: &str) -> String {
    let document = Html::parse_document(html);
    let mut out = String::new();
    // Depth of hidden elements around the current node; `title` is shown even inside `head`.
    let mut hidden_depth = 0usize;
    let mut title_depth = 0usize;
    for edge in document.tree.root().traverse() {
        match edge {
            ego_tree::iter::Edge::Open(node) => {
                if let Some(element) = node.value().as_element() {
                    let name = element.name();
                    if name == "title" {
                        title_depth += 1;
                    } else if hidden(name) {
                        hidden_depth += 1;
                    }
                    if block(name) {
                        out.push('\n');
                    }
                } else if let Some(text) = node.value().as_text() {
                    if hidden_depth == 0 || title_depth > 0 {
                        out.push_str(text);
                    }
                }
            }
            ego_tree::iter::Edge::Close(node) => {
                if let Some(element) = node.value().as_element() {
                    let name = element.name();
                    if name == "title" {
                        title_depth = title_depth.saturating_sub(1);
                    } else if hidden(name) {
                        hidden_depth = hidden_depth.saturating_sub(1);
                    }
                    if block(name) {
                        out.push('\n');
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_visible_text_is_kept() {
        let page = "<!DOCTYPE html><html><head><title>Sign in</title>\
            <style>body{color:red}</style><script>var x = 'hidden words';</script></head>\
            <body><p>Verify your <b>acc</b>ount</p><p>now &amp; here</p><!-- a comment -->\
            <noscript>enable scripts</noscript><div>bye<br>all</div></body></html>";
        let text = visible_text(page);
        let words: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(
            words,
            ["Sign", "in", "Verify", "your", "account", "now", "&", "here", "bye", "all"]
        );
    }

    #[test]
    fn malformed_markup_is_read_as_a_browser_reads_it() {
        let text = visible_text("<html><body><p>unclosed <i>italic<p>next</div></body>");
        assert_eq!(
            text.split_whitespace().collect::<Vec<_>>(),
            ["unclosed", "italic", "next"]
        );
    }

    #[test]
    fn html_is_recognized_by_its_start() {
        assert!(looks_like_html(b"\xef\xbb\xbf  <!doctype HTML>\n<html>"));
        assert!(looks_like_html(b"<HTML lang=en>"));
        assert!(!looks_like_html(b"From: a@example.com\n\n<html>"));
        assert!(!looks_like_html(b"plain text"));
    }
}
