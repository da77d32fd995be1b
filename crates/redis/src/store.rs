//! Where the list lives: a Redis URL parsed into one server or a cluster's seed nodes, and a
//! [`Store`], the connection that sends a batch of commands in one round trip.
//!
//! Accepted URLs: `redis://[[USER]:PASSWORD@]HOST:PORT[/DB]`, `rediss://…` (TLS, checked against
//! the system's roots), `unix:///path/to/socket` (redis-rs's own forms), and
//! `redis+cluster://[[USER]:PASSWORD@]HOST:PORT,HOST:PORT,…` (or `rediss+cluster://…`) for a
//! Redis Cluster, given by any of its nodes. Without a password in the URL, the environment
//! variable [`PASSWORD_ENV`] supplies one, so that it need not appear on a command line.
//! Messages show the URL with its password replaced by `***`.

use std::time::Duration;

use redis::cluster::{ClusterClient, ClusterConnection};
use redis::{Cmd, ConnectionInfo, FromRedisValue, IntoConnectionInfo, Value};

use crate::error::{Error, Result};

/// The environment variable that supplies a password when the URL has none.
pub const PASSWORD_ENV: &str = "PHISHBLOOM_REDIS_PASSWORD";

/// How long to wait for a TCP (and TLS) connection: a server on the same network answers in
/// milliseconds, so a few seconds means it is down or unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long to wait for the answers of one round trip: generous, as a push sends up to
/// [`crate::push::PIPELINE_BYTES`] in one.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);

/// Times the cluster client retries a command after a connection error or a redirection
/// before it gives up (redis-rs's default of 16, with back-off, would hide a dead node for
/// minutes).
const CLUSTER_RETRIES: u32 = 2;

/// A parsed Redis URL: one server, or a cluster's seed nodes.
#[derive(Clone, Debug)]
pub struct Target {
    shown: String,
    nodes: Vec<ConnectionInfo>,
    cluster: bool,
}

impl Target {
    /// Parses a Redis URL (see the module documentation for the forms).
    pub fn parse(url: &str) -> Result<Target> {
        let shown = redact(url);
        let bad = |problem: String| Error::BadUrl {
            url: shown.clone(),
            problem,
        };
        let (scheme, rest, cluster) = if let Some(rest) = url.strip_prefix("redis+cluster://") {
            ("redis", rest, true)
        } else if let Some(rest) = url.strip_prefix("rediss+cluster://") {
            ("rediss", rest, true)
        } else {
            ("", url, false)
        };
        let urls: Vec<String> = if cluster {
            let rest = rest.trim_end_matches('/');
            let (userinfo, hosts) = match rest.rsplit_once('@') {
                Some((userinfo, hosts)) => (format!("{userinfo}@"), hosts),
                None => (String::new(), rest),
            };
            if hosts.contains('/') {
                return Err(bad(
                    "a cluster has no database number: drop the `/…` part".into()
                ));
            }
            let hosts: Vec<&str> = hosts.split(',').filter(|h| !h.is_empty()).collect();
            if hosts.is_empty() {
                return Err(bad("no HOST:PORT after redis+cluster://".into()));
            }
            hosts
                .iter()
                .map(|host| format!("{scheme}://{userinfo}{host}"))
                .collect()
        } else {
            vec![url.to_string()]
        };
        let password = std::env::var(PASSWORD_ENV).ok().filter(|p| !p.is_empty());
        let nodes = urls
            .iter()
            .map(|node| {
                let info = node
                    .as_str()
                    .into_connection_info()
                    .map_err(|e| bad(e.to_string()))?;
                Ok(match &password {
                    Some(password) if info.redis_settings().password().is_none() => {
                        let settings = info.redis_settings().clone().set_password(password);
                        info.set_redis_settings(settings)
                    }
                    _ => info,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Target {
            shown,
            nodes,
            cluster,
        })
    }

    /// The URL with its password hidden, for messages.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Whether the URL names a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        self.cluster
    }

    /// Connects (for a cluster: to the first seed node that answers, then to every master as
    /// commands need them).
    pub fn connect(&self) -> Result<Store> {
        let connect_error = |e: redis::RedisError| Error::Connect {
            url: self.shown.clone(),
            error: e.to_string(),
        };
        let conn = if self.cluster {
            let client = ClusterClient::builder(self.nodes.clone())
                .connection_timeout(CONNECT_TIMEOUT)
                .response_timeout(RESPONSE_TIMEOUT)
                .retries(CLUSTER_RETRIES)
                .build()
                .map_err(connect_error)?;
            Conn::Cluster(Box::new(client.get_connection().map_err(connect_error)?))
        } else {
            // `parse` made exactly one node for a URL that is not a cluster's.
            let client = redis::Client::open(self.nodes[0].clone()).map_err(connect_error)?;
            let conn = client
                .get_connection_with_timeout(CONNECT_TIMEOUT)
                .map_err(connect_error)?;
            conn.set_read_timeout(Some(RESPONSE_TIMEOUT))
                .and_then(|()| conn.set_write_timeout(Some(RESPONSE_TIMEOUT)))
                .map_err(connect_error)?;
            Conn::Node(Box::new(conn))
        };
        Ok(Store {
            conn,
            shown: self.shown.clone(),
        })
    }
}

/// `url` with the password of its user information (`:PASSWORD@` or `USER:PASSWORD@`) replaced
/// by `***`.
pub fn redact(url: &str) -> String {
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let authority_end = url[start..].find('/').map_or(url.len(), |i| start + i);
    let Some(at) = url[start..authority_end].rfind('@').map(|i| start + i) else {
        return url.to_string();
    };
    match url[start..at].find(':').map(|i| start + i) {
        Some(colon) => format!("{}:***{}", &url[..colon], &url[at..]),
        None => url.to_string(),
    }
}

enum Conn {
    Node(Box<redis::Connection>),
    Cluster(Box<ClusterConnection>),
}

/// A connection to one server or to a cluster: runs batches of commands, each batch in one
/// round trip (one per node for a cluster, all sent before any answer is read).
pub struct Store {
    conn: Conn,
    shown: String,
}

impl Store {
    /// The URL with its password hidden, for messages.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Whether this is a cluster connection.
    pub fn is_cluster(&self) -> bool {
        matches!(self.conn, Conn::Cluster(_))
    }

    /// Sends `commands` as one pipeline and returns their answers in order; `action` names the
    /// batch in errors. An error answer to any command fails the batch.
    pub fn run(&mut self, commands: Vec<Cmd>, action: &str) -> Result<Vec<Value>> {
        if commands.is_empty() {
            return Ok(Vec::new());
        }
        let answers: redis::RedisResult<Vec<Value>> = match &mut self.conn {
            Conn::Node(conn) => {
                let mut pipe = redis::pipe();
                for command in commands {
                    pipe.add_command(command);
                }
                pipe.query(&mut **conn)
            }
            Conn::Cluster(conn) => {
                let mut pipe = redis::cluster::ClusterPipeline::with_capacity(commands.len());
                for command in commands {
                    pipe.add_command(command);
                }
                pipe.query(conn)
            }
        };
        let answers = answers.map_err(|e| self.command_error(action, e))?;
        if let Some(Value::ServerError(error)) =
            answers.iter().find(|a| matches!(a, Value::ServerError(_)))
        {
            return Err(Error::Command {
                url: self.shown.clone(),
                action: action.to_string(),
                error: format!("{error:?}"),
            });
        }
        Ok(answers)
    }

    /// Runs one command and converts its answer; `key` and `action` name it in errors.
    pub fn query<T: FromRedisValue>(&mut self, command: Cmd, key: &str, action: &str) -> Result<T> {
        let answer = self.run(vec![command], action)?.pop().unwrap_or(Value::Nil);
        self.convert(answer, key, action)
    }

    /// Converts one answer of a batch; `key` and `action` name it in errors.
    pub fn convert<T: FromRedisValue>(&self, answer: Value, key: &str, action: &str) -> Result<T> {
        T::from_redis_value_ref(&answer).map_err(|_| Error::UnexpectedReply {
            url: self.shown.clone(),
            key: key.to_string(),
            action: action.to_string(),
            answer: format!("{answer:?}").chars().take(120).collect(),
        })
    }

    fn command_error(&self, action: &str, error: redis::RedisError) -> Error {
        Error::Command {
            url: self.shown.clone(),
            action: action.to_string(),
            error: error.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden_in_messages() {
        assert_eq!(redact("redis://:s3cret@h:6379/0"), "redis://:***@h:6379/0");
        assert_eq!(redact("rediss://bob:pw@h:1"), "rediss://bob:***@h:1");
        assert_eq!(
            redact("redis+cluster://:pw@a:1,b:2"),
            "redis+cluster://:***@a:1,b:2"
        );
        assert_eq!(redact("redis://h:6379"), "redis://h:6379");
        assert_eq!(redact("redis://bob@h"), "redis://bob@h");
    }

    #[test]
    fn urls_of_one_server_and_of_a_cluster() {
        let one = Target::parse("redis://:pw@127.0.0.1:7000").unwrap();
        assert!(!one.is_cluster());
        assert_eq!(one.nodes[0].redis_settings().password(), Some("pw"));
        let cluster = Target::parse("redis+cluster://:pw@127.0.0.1:7000,127.0.0.1:7001/").unwrap();
        assert!(cluster.is_cluster());
        assert_eq!(cluster.nodes.len(), 2);
        assert!(cluster
            .nodes
            .iter()
            .all(|n| n.redis_settings().password() == Some("pw")));
        assert_eq!(
            cluster.shown(),
            "redis+cluster://:***@127.0.0.1:7000,127.0.0.1:7001/"
        );
        let tls = Target::parse("rediss+cluster://a:1").unwrap();
        assert!(matches!(
            tls.nodes[0].addr(),
            redis::ConnectionAddr::TcpTls { .. }
        ));
        for bad in [
            "http://x",
            "redis+cluster://",
            "redis+cluster://a:1/0",
            "nonsense",
        ] {
            let error = Target::parse(bad).unwrap_err();
            assert!(matches!(error, Error::BadUrl { .. }), "{bad}: {error}");
        }
    }
}
