//! Integration tests of the `phishbloom` executable, each driving the real binary.
//! One test binary for the crate (one link instead of one per file); each module is one
//! concern, and `cargo test -p phishbloom-cli --test it MODULE::` runs one.

mod admin_checks;
mod admin_inputs;
mod admin_serve;
mod blocklist_file;
mod browser;
mod changes;
mod cli;
mod common;
mod compact;
mod completions;
mod dns;
mod frontends;
mod frontends_writes;
mod list_formats;
mod near;
mod near_acceptance;
mod never;
mod readme;
mod redis;
mod scan;
mod serve_common;
mod serve_http;
mod serve_http_connections;
mod serve_http_routes;
mod serve_redisbloom;
mod serve_reload;
mod serve_resp;
mod serve_squid;
mod serve_tls;
mod split;
mod sync;
mod sync_trust;
mod verdicts;
