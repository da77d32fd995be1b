//! Verdict printers: one line per checked item, as tab-separated text or as one JSON object
//! (the output of `phishbloom check`, and the body of the server's NDJSON answers).

use crate::blocklist::Verdict;

/// Output format of verdicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// `ITEM<TAB>listed|clean`, plus `<TAB>EXPRESSION<TAB>domain|url` for a URL match.
    Tsv,
    /// `{"key": ITEM, "listed": bool, "expression": …, "entry": …}` per line.
    Json,
}

/// Appends the verdict line for `item` to `out`.
pub fn write_verdict(item: &[u8], verdict: &Verdict, output: Output, out: &mut Vec<u8>) {
    let hit = verdict.hit.as_ref();
    match output {
        Output::Tsv => {
            out.extend_from_slice(item);
            out.extend_from_slice(if verdict.listed {
                b"\tlisted"
            } else {
                b"\tclean"
            });
            if let Some(hit) = hit {
                out.push(b'\t');
                out.extend_from_slice(hit.expression.as_bytes());
                out.push(b'\t');
                out.extend_from_slice(hit.kind.as_bytes());
            }
            out.push(b'\n');
        }
        Output::Json => {
            #[derive(serde::Serialize)]
            struct Line<'a> {
                key: std::borrow::Cow<'a, str>,
                listed: bool,
                #[serde(skip_serializing_if = "Option::is_none")]
                expression: Option<&'a str>,
                #[serde(skip_serializing_if = "Option::is_none")]
                entry: Option<&'a str>,
            }
            let line = Line {
                key: String::from_utf8_lossy(item),
                listed: verdict.listed,
                expression: hit.map(|h| h.expression.as_str()),
                entry: hit.map(|h| h.kind),
            };
            // Serializing strings and a bool into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, &line);
            out.push(b'\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Hit;

    #[test]
    fn tsv_and_json_lines() {
        let hit = Verdict {
            listed: true,
            hit: Some(Hit {
                expression: "evil.com".into(),
                kind: "domain",
            }),
        };
        let mut out = Vec::new();
        write_verdict(b"http://a.evil.com/", &hit, Output::Tsv, &mut out);
        write_verdict(b"x", &Verdict::default(), Output::Tsv, &mut out);
        assert_eq!(
            out,
            b"http://a.evil.com/\tlisted\tevil.com\tdomain\nx\tclean\n"
        );
        out.clear();
        write_verdict(b"\xff\"q", &hit, Output::Json, &mut out);
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(value["key"], "\u{fffd}\"q");
        assert_eq!(value["listed"], true);
        assert_eq!(value["expression"], "evil.com");
    }
}
