//! Near-duplicate lookups for `POST /v1/near`: one document in the request body (text, an HTML
//! page or an e-mail message, read as `phishbloom scan` reads them), answered with the known
//! documents within the distance by every near-duplicate list asked — the one named, or every
//! served near-duplicate list — nearest first.

use std::sync::Arc;

use phishbloom_blocklist::documents::{one_document, DocumentFormat};
use phishbloom_core::near::NearHasher;
use phishbloom_core::near::NearMatch;
use phishbloom_core::scan::NearAnswer;
use phishbloom_core::Kind;

use crate::error::{Error, Result};
use crate::lists::{Lists, Slot};

/// How a request body is read, from its `Content-Type` (`text/html`, `message/rfc822`,
/// `text/plain`; anything else is recognized from the content).
pub fn format_of(content_type: Option<&str>) -> DocumentFormat {
    match content_type.map(str::to_ascii_lowercase).as_deref() {
        Some("text/html" | "application/xhtml+xml") => DocumentFormat::Html,
        Some("message/rfc822") => DocumentFormat::Eml,
        Some("text/plain") => DocumentFormat::Text,
        _ => DocumentFormat::Auto,
    }
}

/// One known document near the request's, with the list that knows it.
#[derive(serde::Serialize)]
struct ListedMatch<'a> {
    #[serde(flatten)]
    found: &'a NearMatch,
    list: &'a str,
}

/// The JSON answer for `body`: `{"verdict", "distance", "match", "categories", "exact",
/// "list", "matches": [{…, "list"}]}` (`verdict` `near` or `clean`; the nearest first across
/// the lists asked). `list` names one list; without it every near-duplicate list served is
/// asked, and none served is an error. `max_distance` above a list's own is an error.
pub fn answer(
    lists: &Lists,
    list: Option<&str>,
    max_distance: Option<u32>,
    format: DocumentFormat,
    body: &[u8],
) -> Result<Vec<u8>> {
    let slots: Vec<Arc<Slot>> = match list {
        Some(name) => vec![lists.require(name)?],
        None => lists.registry().slots().to_vec(),
    };
    let document = one_document("request body", body, format)
        .map_err(|e| Error::BadRequest(format!("the document cannot be read: {e}")))?;
    let mut hasher = NearHasher::new();
    let mut found: Vec<(NearMatch, String)> = Vec::new();
    let mut asked = 0;
    for slot in &slots {
        let served = slot.load();
        let state = served.read();
        if state.list.kind() != Kind::Near {
            if list.is_some() {
                return Err(Error::BadRequest(format!(
                    "list {:?} is a {} list, not a near-duplicate list: ask one built with \
                     `phishbloom build --near`",
                    slot.name,
                    state.list.kind()
                )));
            }
            continue;
        }
        asked += 1;
        let built = state.list.near_engine()?.max_distance();
        if let Some(asked) = max_distance.filter(|&k| k > built) {
            return Err(Error::BadRequest(format!(
                "max_distance: {asked} is more than the {built} list {:?} answers",
                slot.name
            )));
        }
        let matches = state.list.near(&document.text, max_distance, &mut hasher)?;
        found.extend(matches.into_iter().map(|m| (m, slot.name.clone())));
    }
    if asked == 0 {
        return Err(Error::BadRequest(
            "no near-duplicate list is served: serve one built with `phishbloom build --near`"
                .into(),
        ));
    }
    found.sort_by(|a, b| (a.0.distance, &a.0.name).cmp(&(b.0.distance, &b.0.name)));
    let matches: Vec<NearMatch> = found.iter().map(|(m, _)| m.clone()).collect();
    let answer = NearAnswer::of(&matches);
    let listed: Vec<ListedMatch<'_>> = found
        .iter()
        .take(answer.matches.len())
        .map(|(m, list)| ListedMatch { found: m, list })
        .collect();
    #[derive(serde::Serialize)]
    struct Body<'a> {
        verdict: &'static str,
        distance: Option<u32>,
        #[serde(rename = "match")]
        matched: Option<&'a str>,
        categories: &'a [String],
        exact: bool,
        list: Option<&'a str>,
        matches: Vec<ListedMatch<'a>>,
    }
    let body = Body {
        verdict: answer.verdict,
        distance: answer.distance,
        matched: answer.matched,
        categories: answer.categories,
        exact: answer.exact,
        list: found.first().map(|(_, list)| list.as_str()),
        matches: listed,
    };
    // Serializing strings and numbers cannot fail.
    Ok(serde_json::to_vec(&body).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_choose_the_reading() {
        assert_eq!(format_of(Some("text/html")), DocumentFormat::Html);
        assert_eq!(format_of(Some("Message/RFC822")), DocumentFormat::Eml);
        assert_eq!(format_of(Some("text/plain")), DocumentFormat::Text);
        assert_eq!(format_of(None), DocumentFormat::Auto);
        assert_eq!(format_of(Some("application/json")), DocumentFormat::Auto);
    }
}
