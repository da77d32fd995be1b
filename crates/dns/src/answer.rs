//! The messages this server writes itself — a blocked name's answer with its Extended DNS
//! Error, FORMERR for a packet that is no query, SERVFAIL when no upstream answers — and what
//! it reads of an upstream's answer (the names its CNAMEs lead to).

use std::net::IpAddr;

use hickory_proto::op::{Edns, Message, MessageType, ResponseCode};
use hickory_proto::rr::rdata::opt::EdnsOption;
use hickory_proto::rr::rdata::{A, AAAA};
use hickory_proto::rr::{Name, RData, Record, RecordType};

use phishbloom_core::engine::Scratch;

use crate::policy::{BlockWith, Blocked, Policy};

/// What a packet from a client gets before any upstream is asked ([`first`]).
#[derive(Debug)]
pub enum First {
    /// This answer, from this server, and why.
    Answer(Vec<u8>, Said),
    /// No answer (too short for a header, or a response).
    Nothing,
    /// The upstreams' answer: the query, parsed.
    Forward(Message),
}

/// Why this server answered itself.
#[derive(Debug)]
pub enum Said {
    /// The packet is no query of one question.
    FormErr,
    /// The client is not answered.
    Refused,
    /// The name is listed.
    Blocked(Blocked),
}

/// The first step for `packet` from a client (`admitted` or not): FORMERR for a packet that is
/// no query of one question (nothing when it is not even a header, or is a response); REFUSED
/// to a client not admitted; the blocked answer for a listed name; else the query to forward.
pub fn first(packet: &[u8], admitted: bool, policy: &Policy, scratch: &mut Scratch) -> First {
    let query = match Message::from_vec(packet) {
        Ok(query) if query.message_type() == MessageType::Query && query.queries().len() == 1 => {
            query
        }
        _ => {
            return formerr(packet).map_or(First::Nothing, |answer| {
                First::Answer(answer, Said::FormErr)
            })
        }
    };
    if !admitted {
        return First::Answer(refused(&query), Said::Refused);
    }
    let host = host_of(query.queries()[0].name());
    match host.and_then(|host| policy.blocked(&host, scratch)) {
        Some(why) => First::Answer(blocked(&query, &why, policy.block_with), Said::Blocked(why)),
        None => First::Forward(query),
    }
}

/// The answer to `query` once an upstream answered it (`upstream`, parsed as `response`): the
/// upstream's bytes, unless a CNAME in them leads to a listed name, which is blocked as the
/// name would be (and why).
pub fn after_upstream(
    query: &Message,
    upstream: Vec<u8>,
    response: &Message,
    policy: &Policy,
    scratch: &mut Scratch,
) -> (Vec<u8>, Option<Blocked>) {
    for target in cname_targets(response) {
        if let Some(why) = policy.blocked(&target, scratch) {
            return (blocked(query, &why, policy.block_with), Some(why));
        }
    }
    (upstream, None)
}

/// RFC 8914's option code of an Extended DNS Error.
const EDE_OPTION: u16 = 15;

/// RFC 8914 §4.16, info-code 15 "Blocked": the name is on a blocklist the operator keeps.
const EDE_BLOCKED: u16 = 15;

/// RFC 8914 §4.18, info-code 17 "Filtered": blocked by a filter the client's operator chose
/// (here: categories kept with `--category`).
const EDE_FILTERED: u16 = 17;

/// The TTL of a blocked answer's address (a minute: a list change reaches clients soon).
const BLOCKED_TTL: u32 = 60;

/// The least EDNS payload size a response advertises (RFC 6891's floor).
const MIN_PAYLOAD: u16 = 512;

/// The most bytes of Extended DNS Error text an answer carries: enough for a list, an entry and
/// a few categories, and small enough that the answer fits any EDNS payload (512 bytes and up)
/// beside a question of the longest name (255 bytes).
const MAX_EDE_TEXT: usize = 200;

/// The answer to `query`, blocked for `why` as `with` says: its id, opcode, recursion-desired
/// flag and question; NXDOMAIN, NOERROR without an answer, REFUSED, or the address (`null`:
/// `0.0.0.0` / `::`) to a query of that family; and, when the query carries EDNS (RFC 6891: a
/// response carries an OPT record only then), an Extended DNS Error "Blocked" naming the list.
pub fn blocked(query: &Message, why: &Blocked, with: BlockWith) -> Vec<u8> {
    let mut response = reply_to(query);
    let code = match with {
        BlockWith::NxDomain => ResponseCode::NXDomain,
        BlockWith::Refused => ResponseCode::Refused,
        BlockWith::NoData | BlockWith::Null | BlockWith::Ip(_) => ResponseCode::NoError,
    };
    response.set_response_code(code);
    if let Some(question) = query.queries().first() {
        let address = match (with, question.query_type()) {
            (BlockWith::Null, RecordType::A) => Some(RData::A(A(std::net::Ipv4Addr::UNSPECIFIED))),
            (BlockWith::Null, RecordType::AAAA) => {
                Some(RData::AAAA(AAAA(std::net::Ipv6Addr::UNSPECIFIED)))
            }
            (BlockWith::Ip(IpAddr::V4(ip)), RecordType::A) => Some(RData::A(A(ip))),
            (BlockWith::Ip(IpAddr::V6(ip)), RecordType::AAAA) => Some(RData::AAAA(AAAA(ip))),
            _ => None,
        };
        if let Some(data) = address {
            response.add_answer(Record::from_rdata(
                question.name().clone(),
                BLOCKED_TTL,
                data,
            ));
        }
    }
    if let Some(edns) = query.extensions() {
        let mut answer = Edns::new();
        answer.set_max_payload(edns.max_payload().max(MIN_PAYLOAD));
        let code = if why.filtered {
            EDE_FILTERED
        } else {
            EDE_BLOCKED
        };
        let mut data = code.to_be_bytes().to_vec();
        data.extend_from_slice(cut(&why.text(), MAX_EDE_TEXT).as_bytes());
        answer
            .options_mut()
            .insert(EdnsOption::Unknown(EDE_OPTION, data));
        response.set_edns(answer);
    }
    encode(&response)
}

/// SERVFAIL to `query` (no upstream answered).
pub fn servfail(query: &Message) -> Vec<u8> {
    let mut response = reply_to(query);
    response.set_response_code(ResponseCode::ServFail);
    encode(&response)
}

/// REFUSED to `query` (a client this server does not answer).
pub fn refused(query: &Message) -> Vec<u8> {
    let mut response = reply_to(query);
    response.set_response_code(ResponseCode::Refused);
    encode(&response)
}

/// FORMERR to a packet that is no query, when it holds at least a header to answer (RFC 1035
/// §4.1.1: the id copied, QR set, the opcode kept); `None` for anything shorter, which gets
/// no answer.
pub fn formerr(packet: &[u8]) -> Option<Vec<u8>> {
    let header = packet.get(..12)?;
    // A packet that is a response already is not answered: no loop between two servers.
    if header[2] & 0x80 != 0 {
        return None;
    }
    let mut response = Message::new();
    response.set_id(u16::from_be_bytes([header[0], header[1]]));
    response.set_message_type(MessageType::Response);
    response.set_op_code(hickory_proto::op::OpCode::from_u8((header[2] >> 3) & 0x0f));
    response.set_response_code(ResponseCode::FormErr);
    Some(encode(&response))
}

/// The hosts (see [`host_of`]) the CNAME records of `response`'s answer section lead to, in
/// order.
pub fn cname_targets(response: &Message) -> Vec<String> {
    response
        .answers()
        .iter()
        .filter_map(|record| match record.data() {
            RData::CNAME(target) => host_of(&target.0),
            _ => None,
        })
        .collect()
}

/// The part of `name` a URL's host can be: its labels after the last one holding a byte that
/// is no letter, digit, `-` or `_` (a `/`, `?`, `#`, `:`, `@`, `\\`, `%`, a dot inside a label
/// would make `http://NAME/` another URL, whose host is not the name), joined by dots; `None`
/// for the root or when no label is left. The parent domains of a name are its suffixes, so
/// every domain entry that could list the name lists this part.
pub fn host_of(name: &Name) -> Option<String> {
    let labels: Vec<&[u8]> = name.iter().collect();
    let plain = |label: &&[u8]| {
        label
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    let start = labels
        .iter()
        .rposition(|label| !plain(label))
        .map_or(0, |bad| bad + 1);
    let kept = &labels[start..];
    if kept.is_empty() {
        return None;
    }
    // Every kept label is ASCII (checked above).
    let parts: Vec<&str> = kept
        .iter()
        .map(|label| std::str::from_utf8(label).unwrap_or_default())
        .collect();
    Some(parts.join("."))
}

/// `text` cut to at most `max` bytes on a character boundary.
fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A response to `query`: its id, opcode, recursion-desired flag and question, recursion
/// available.
fn reply_to(query: &Message) -> Message {
    let mut response = Message::new();
    response
        .set_id(query.id())
        .set_message_type(MessageType::Response)
        .set_op_code(query.op_code())
        .set_recursion_desired(query.recursion_desired())
        .set_recursion_available(true);
    for question in query.queries() {
        response.add_query(question.clone());
    }
    response
}

/// The message's bytes. Encoding a message built from a parsed query cannot fail: its names
/// and records were read from the wire, so they fit it; should it ever fail, the answer is a
/// bare header with SERVFAIL, which always encodes.
fn encode(message: &Message) -> Vec<u8> {
    message.to_vec().unwrap_or_else(|_| {
        let mut bare = Message::new();
        bare.set_id(message.id())
            .set_message_type(MessageType::Response)
            .set_response_code(ResponseCode::ServFail);
        bare.to_vec().unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hickory_proto::op::Query;
    use hickory_proto::rr::Name;

    fn query(name: &str, kind: RecordType, edns: bool) -> Message {
        let mut query = Message::new();
        query
            .set_id(7)
            .set_recursion_desired(true)
            .add_query(Query::query(Name::from_ascii(name).unwrap(), kind));
        if edns {
            query.set_edns(Edns::new());
        }
        query
    }

    fn why() -> Blocked {
        Blocked {
            list: "ut1".into(),
            entry: "evil.example".into(),
            categories: vec!["phishing".into()],
            filtered: false,
        }
    }

    #[test]
    fn a_blocked_name_gets_nxdomain_and_the_extended_error_naming_the_list() {
        let bytes = blocked(
            &query("www.evil.example.", RecordType::A, true),
            &why(),
            BlockWith::NxDomain,
        );
        let answer = Message::from_vec(&bytes).unwrap();
        assert_eq!(
            (answer.id(), answer.response_code()),
            (7, ResponseCode::NXDomain)
        );
        assert_eq!(answer.queries().len(), 1);
        let edns = answer.extensions().as_ref().unwrap();
        let option = edns.options().as_ref().iter().find_map(|(_, o)| match o {
            EdnsOption::Unknown(15, data) => Some(data.clone()),
            _ => None,
        });
        let data = option.unwrap();
        assert_eq!(&data[..2], &[0, 15]);
        assert_eq!(&data[2..], why().text().as_bytes());
        // Without EDNS in the query, no OPT record in the answer.
        let bytes = blocked(
            &query("evil.example.", RecordType::A, false),
            &why(),
            BlockWith::NxDomain,
        );
        assert!(Message::from_vec(&bytes).unwrap().extensions().is_none());
    }

    #[test]
    fn null_and_ip_answer_only_queries_of_their_family() {
        let a = Message::from_vec(&blocked(
            &query("e.example.", RecordType::A, false),
            &why(),
            BlockWith::Null,
        ))
        .unwrap();
        assert_eq!(a.answers().len(), 1);
        assert_eq!(
            a.answers()[0].data(),
            &RData::A(A(std::net::Ipv4Addr::UNSPECIFIED))
        );
        let ip = BlockWith::Ip("192.0.2.9".parse().unwrap());
        let aaaa = Message::from_vec(&blocked(
            &query("e.example.", RecordType::AAAA, false),
            &why(),
            ip,
        ))
        .unwrap();
        assert_eq!(
            (aaaa.response_code(), aaaa.answers().len()),
            (ResponseCode::NoError, 0)
        );
    }

    #[test]
    fn a_name_is_checked_from_its_last_label_a_url_host_cannot_hold() {
        let name = |text: &str| Name::from_ascii(text).unwrap();
        assert_eq!(
            host_of(&name("WWW.Evil.Example.")).as_deref(),
            Some("WWW.Evil.Example")
        );
        // `a/b` would make http://a/b.evil.example/ a URL of host `a`: its parents are checked.
        let labels: [&[u8]; 4] = [b"x", b"a/b", b"evil", b"example"];
        let odd = Name::from_labels(labels).unwrap();
        assert_eq!(host_of(&odd).as_deref(), Some("evil.example"));
        assert_eq!(host_of(&Name::root()), None);
        let labels: [&[u8]; 1] = [b"a?b"];
        assert_eq!(host_of(&Name::from_labels(labels).unwrap()), None);
    }

    #[test]
    fn a_block_for_chosen_categories_says_filtered() {
        let filtered = Blocked {
            filtered: true,
            ..why()
        };
        let bytes = blocked(
            &query("evil.example.", RecordType::A, true),
            &filtered,
            BlockWith::NxDomain,
        );
        let answer = Message::from_vec(&bytes).unwrap();
        let edns = answer.extensions().as_ref().unwrap();
        let data = edns.options().as_ref().iter().find_map(|(_, o)| match o {
            EdnsOption::Unknown(15, data) => Some(data.clone()),
            _ => None,
        });
        assert_eq!(&data.unwrap()[..2], &[0, 17]);
    }

    #[test]
    fn the_extended_error_text_is_cut_to_fit_any_payload() {
        let long = Blocked {
            list: "l".repeat(300),
            entry: "é".repeat(100),
            categories: vec![],
            filtered: true,
        };
        let bytes = blocked(
            &query("e.example.", RecordType::A, true),
            &long,
            BlockWith::NxDomain,
        );
        assert!(bytes.len() <= 512, "{} bytes", bytes.len());
    }

    #[test]
    fn a_header_gets_formerr_and_less_gets_nothing() {
        let mut packet = vec![0xab, 0xcd, 0x01, 0x00];
        packet.extend_from_slice(&[0xff; 20]);
        let answer = Message::from_vec(&formerr(&packet).unwrap()).unwrap();
        assert_eq!(
            (answer.id(), answer.response_code()),
            (0xabcd, ResponseCode::FormErr)
        );
        assert!(formerr(&packet[..11]).is_none());
        packet[2] |= 0x80;
        assert!(formerr(&packet).is_none());
    }
}
