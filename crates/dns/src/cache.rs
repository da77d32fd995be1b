//! Answers the upstreams gave, kept for as long as their records live (RFC 1035 §7.4; RFC 2308
//! for an NXDOMAIN or an empty answer, whose life is its SOA's). A later query for the same
//! name, type and class, with the same DNSSEC-OK flag, is answered from here with its id and
//! every TTL lowered by the time since — unless the answer is larger than that client's UDP
//! payload, when the upstream is asked again. At most [`CAPACITY`] answers are kept.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::rdata::opt::EdnsCode;

/// The most answers kept: about 10,000 × a few hundred bytes, a few MB.
pub const CAPACITY: usize = 10_000;

/// The longest an answer is kept whatever its records say (a day, as unbound's default
/// `cache-max-ttl`).
const MAX_TTL: u32 = 86_400;

/// What an answer is kept under.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    name: String,
    kind: u16,
    class: u16,
    dnssec_ok: bool,
}

impl Key {
    /// The key of `query`'s one question.
    fn of(query: &Message) -> Option<Key> {
        let question = query.queries().first()?;
        Some(Key {
            name: question.name().to_lowercase().to_ascii(),
            kind: question.query_type().into(),
            class: question.query_class().into(),
            dnssec_ok: query
                .extensions()
                .as_ref()
                .is_some_and(|e| e.flags().dnssec_ok),
        })
    }
}

/// A kept answer.
struct Kept {
    answer: Message,
    stored: Instant,
    ttl: u32,
}

/// The kept answers.
#[derive(Default)]
pub struct Cache {
    kept: Mutex<HashMap<Key, Kept>>,
}

impl Cache {
    /// The kept answer to `query`, as bytes and parsed, its id the query's and its TTLs lowered
    /// by its age, if one is alive and fits the client's UDP payload (`udp`: the query came by
    /// UDP).
    pub fn get(&self, query: &Message, udp: bool) -> Option<(Vec<u8>, Message)> {
        let key = Key::of(query)?;
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let entry = kept.get(&key)?;
        let age = entry.stored.elapsed().as_secs();
        if age >= u64::from(entry.ttl) {
            return None;
        }
        let mut answer = entry.answer.clone();
        drop(kept);
        // Below `ttl`, which is a u32: fits.
        let age = age as u32;
        answer.set_id(query.id());
        for record in answer.answers_mut() {
            record.set_ttl(record.ttl().saturating_sub(age));
        }
        for record in answer.name_servers_mut() {
            record.set_ttl(record.ttl().saturating_sub(age));
        }
        let bytes = answer.to_vec().ok()?;
        let payload = usize::from(query.max_payload().max(512));
        (!udp || bytes.len() <= payload).then_some((bytes, answer))
    }

    /// Keeps `answer` to `query` for its life: a NOERROR or NXDOMAIN that is not truncated and
    /// whose records give a life (the least TTL of the answer and authority sections).
    pub fn put(&self, query: &Message, answer: &Message) {
        let cacheable = matches!(
            answer.response_code(),
            ResponseCode::NoError | ResponseCode::NXDomain
        ) && !answer.truncated();
        let ttl = answer
            .answers()
            .iter()
            .chain(answer.name_servers())
            .map(|r| r.ttl())
            .min()
            .unwrap_or(0)
            .min(MAX_TTL);
        let Some(key) = Key::of(query).filter(|_| cacheable && ttl > 0) else {
            return;
        };
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() >= CAPACITY {
            kept.retain(|_, k| k.stored.elapsed() < Duration::from_secs(u64::from(k.ttl)));
        }
        // A DNS cookie (RFC 7873) is the asking client's: another client is given none.
        let mut answer = answer.clone();
        if let Some(edns) = answer.extensions_mut() {
            edns.options_mut().remove(EdnsCode::Cookie);
        }
        if kept.len() < CAPACITY {
            kept.insert(
                key,
                Kept {
                    answer,
                    stored: Instant::now(),
                    ttl,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hickory_proto::op::{MessageType, Query};
    use hickory_proto::rr::rdata::A;
    use hickory_proto::rr::{Name, RData, Record, RecordType};

    fn query(id: u16) -> Message {
        let mut query = Message::new();
        query.set_id(id).add_query(Query::query(
            Name::from_ascii("Clean.Test.").unwrap(),
            RecordType::A,
        ));
        query
    }

    fn answer(ttl: u32) -> Message {
        let mut answer = query(1);
        answer.set_message_type(MessageType::Response);
        answer.add_answer(Record::from_rdata(
            Name::from_ascii("clean.test.").unwrap(),
            ttl,
            RData::A(A([192, 0, 2, 1].into())),
        ));
        answer
    }

    #[test]
    fn an_answer_is_kept_with_the_askers_id_for_its_life_only() {
        let cache = Cache::default();
        cache.put(&query(1), &answer(60));
        let (bytes, parsed) = cache.get(&query(77), true).unwrap();
        let again = Message::from_vec(&bytes).unwrap();
        assert_eq!(
            (again.id(), again.answers()),
            (parsed.id(), parsed.answers())
        );
        assert_eq!(again.id(), 77);
        assert_eq!(again.answers()[0].ttl(), 60);
        // A record without life is not kept.
        let cache = Cache::default();
        cache.put(&query(1), &answer(0));
        assert!(cache.get(&query(2), true).is_none());
        // Another type is another key.
        let mut aaaa = Message::new();
        aaaa.add_query(Query::query(
            Name::from_ascii("clean.test.").unwrap(),
            RecordType::AAAA,
        ));
        let cache = Cache::default();
        cache.put(&query(1), &answer(60));
        assert!(cache.get(&aaaa, true).is_none());
    }
}
