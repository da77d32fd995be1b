//! The C-ABI exports JavaScript calls (`clients/browser/core.mjs` wraps them): plain numbers
//! in and out, bytes through memory the caller gets from [`pb_alloc`] and gives back with
//! [`pb_free`], and each call's answer (a verdict line, JSON, a file image, or an error's
//! text) left in one result buffer read with [`pb_result_ptr`] and [`pb_result_len`] until
//! the next call.
//!
//! Conventions: a function that can fail returns a negative number (or 0 where it returns a
//! handle) and leaves the error's text in the result buffer. The module is single-threaded
//! (wasm32-unknown-unknown has no threads), so the state is one thread-local value.

use std::cell::RefCell;

use phishbloom_core::printer::{write_verdict, Output};
use phishbloom_core::resolve::Status;

use crate::sync::{next_poll, Session};
use crate::{answer, stream_lines, Lists, Loaded};

thread_local! {
    /// The lists held, and the result buffer of the last call.
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// What the module holds between calls.
#[derive(Default)]
struct State {
    lists: Lists,
    /// Syncs in progress; session ids are 1 + the index.
    sessions: Vec<Option<Running>>,
    result: Vec<u8>,
}

/// A sync in progress and the list it was begun for: [`pb_sync_finish`] only replaces that
/// list, never one that took its handle after it was dropped, nor a copy another sync already
/// replaced.
struct Running {
    session: Session,
    /// The handle given to [`pb_sync_begin`] (0: no local copy).
    handle: u32,
    /// The generation of the list `handle` held then ([`Lists::generation`]; 0 for handle 0).
    generation: u64,
}

/// Runs `f` on the state.
fn with<T>(f: impl FnOnce(&mut State) -> T) -> T {
    STATE.with(|state| f(&mut state.borrow_mut()))
}

/// The bytes JavaScript wrote at `ptr`.
///
/// # Safety
/// `ptr` must point to `len` readable bytes (memory from [`pb_alloc`]) unless `len` is 0, and
/// they must stay unchanged for `'a`.
unsafe fn input<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 || ptr.is_null() {
        return &[];
    }
    // SAFETY: the caller promises `len` readable bytes at `ptr`.
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

/// Leaves `bytes` in the result buffer.
fn set_result(state: &mut State, bytes: Vec<u8>) {
    state.result = bytes;
}

/// `len` bytes of memory for the caller to write input into (free it with [`pb_free`]).
#[no_mangle]
pub extern "C" fn pb_alloc(len: usize) -> *mut u8 {
    let mut buffer = Vec::<u8>::with_capacity(len);
    let ptr = buffer.as_mut_ptr();
    std::mem::forget(buffer);
    ptr
}

/// Frees memory [`pb_alloc`] gave.
///
/// # Safety
/// `ptr` and `len` must be exactly what one call of [`pb_alloc`] took and gave, freed once.
#[no_mangle]
pub unsafe extern "C" fn pb_free(ptr: *mut u8, len: usize) {
    // SAFETY: `ptr` came from a Vec with capacity `len` that was forgotten (see pb_alloc).
    drop(unsafe { Vec::from_raw_parts(ptr, 0, len) });
}

/// Where the last call's result starts.
#[no_mangle]
pub extern "C" fn pb_result_ptr() -> *const u8 {
    with(|state| state.result.as_ptr())
}

/// How many bytes the last call's result holds.
#[no_mangle]
pub extern "C" fn pb_result_len() -> usize {
    with(|state| state.result.len())
}

/// Reads a list from a whole file image and holds it: its handle (1 or more), or 0 with the
/// error's text in the result buffer. `name` labels errors (the file name or URL).
///
/// # Safety
/// Each pointer must point to its length of readable bytes ([`pb_alloc`] memory).
#[no_mangle]
pub unsafe extern "C" fn pb_load(
    name: *const u8,
    name_len: usize,
    bytes: *const u8,
    bytes_len: usize,
) -> u32 {
    // SAFETY: the caller's promise.
    let (name, bytes) = unsafe { (input(name, name_len), input(bytes, bytes_len)) };
    let name = String::from_utf8_lossy(name);
    hold(Loaded::from_bytes(&name, bytes))
}

/// Reads a list from the file JavaScript holds (`file_len` bytes, read through the
/// `env.pb_host_read` import by positioned reads; see [`crate::host`]) and holds it: its
/// handle, or 0 with the error's text in the result buffer. Unlike [`pb_load`], no copy of
/// the file enters the module's memory: a list holds about its file's size.
///
/// # Safety
/// `name` must point to `name_len` readable bytes ([`pb_alloc`] memory).
#[cfg(target_arch = "wasm32")]
#[no_mangle]
pub unsafe extern "C" fn pb_load_host(name: *const u8, name_len: usize, file_len: f64) -> u32 {
    // SAFETY: the caller's promise.
    let name = String::from_utf8_lossy(unsafe { input(name, name_len) }).into_owned();
    let file = crate::host::HostFile {
        len: file_len as u64,
    };
    let list = phishbloom_core::Blocklist::read_from(std::path::Path::new(&name), &file);
    hold(list.map_err(|e| e.to_string()).and_then(Loaded::new))
}

/// Holds a loaded list: its handle, or 0 with the error's text in the result buffer.
fn hold(loaded: Result<Loaded, String>) -> u32 {
    with(|state| match loaded {
        Ok(loaded) => {
            set_result(state, Vec::new());
            state.lists.insert(loaded)
        }
        Err(error) => {
            set_result(state, error.into_bytes());
            0
        }
    })
}

/// Drops the list of `handle`: 1 if it was held, 0 if not.
#[no_mangle]
pub extern "C" fn pb_drop(handle: u32) -> i32 {
    with(|state| i32::from(state.lists.remove(handle)))
}

/// Answers one item against the list of `handle`; the result buffer holds what
/// `phishbloom check` prints for it (`json` 0: the TSV line; 1: the `--json` line), each
/// ending in `\n`. Returns the verdict: 0 clean, 1 listed, 2 allowed, 3 invalid; -1 if no
/// list has that handle.
///
/// # Safety
/// `item` must point to `item_len` readable bytes ([`pb_alloc`] memory).
#[no_mangle]
pub unsafe extern "C" fn pb_check(handle: u32, item: *const u8, item_len: usize, json: u32) -> i32 {
    // SAFETY: the caller's promise.
    let item = unsafe { input(item, item_len) };
    with(|state| {
        let Some(loaded) = state.lists.get_mut(handle) else {
            set_result(state, no_list(handle));
            return -1;
        };
        // As `phishbloom check ITEM` answers: a trailing `\r` is dropped.
        let item = phishbloom_text::line::content(item);
        let verdict = loaded.list.check(item, &mut loaded.scratch);
        let mut out = Vec::new();
        write_verdict(item, &verdict, output_of(json), &mut out);
        let code = match verdict.status {
            Status::Clean => 0,
            Status::Listed => 1,
            Status::Allowed => 2,
            Status::Invalid => 3,
        };
        set_result(state, out);
        code
    })
}

/// Answers a whole stream (the bytes `phishbloom check FILE` would read on standard input:
/// lines split as it splits them); the result buffer holds every line it prints. Returns how
/// many items were listed (at most `i32::MAX`), or -1 if no list has that handle.
///
/// # Safety
/// `text` must point to `text_len` readable bytes ([`pb_alloc`] memory).
#[no_mangle]
pub unsafe extern "C" fn pb_check_lines(
    handle: u32,
    text: *const u8,
    text_len: usize,
    json: u32,
) -> i32 {
    // SAFETY: the caller's promise.
    let text = unsafe { input(text, text_len) };
    with(|state| {
        let Some(loaded) = state.lists.get_mut(handle) else {
            set_result(state, no_list(handle));
            return -1;
        };
        let mut out = Vec::with_capacity(text.len() * 2);
        let listed = answer(loaded, &stream_lines(text), output_of(json), &mut out);
        set_result(state, out);
        i32::try_from(listed).unwrap_or(i32::MAX)
    })
}

/// Checks a navigation's URL against every held list: 1 and the warning as JSON in the
/// result buffer (see [`Lists::warning`]) if one lists it, 0 (empty result) if none does.
///
/// # Safety
/// `url` must point to `url_len` readable bytes ([`pb_alloc`] memory).
#[no_mangle]
pub unsafe extern "C" fn pb_warning(url: *const u8, url_len: usize) -> i32 {
    // SAFETY: the caller's promise.
    let url = unsafe { input(url, url_len) };
    with(|state| match state.lists.warning(url) {
        Some(warning) => {
            set_result(state, warning.to_string().into_bytes());
            1
        }
        None => {
            set_result(state, Vec::new());
            0
        }
    })
}

/// Sets the entries the user continued past this session (lines `LIST<TAB>ENTRY`; see
/// [`Lists::set_passed`]).
///
/// # Safety
/// `text` must point to `text_len` readable bytes ([`pb_alloc`] memory).
#[no_mangle]
pub unsafe extern "C" fn pb_set_passed(text: *const u8, text_len: usize) {
    // SAFETY: the caller's promise.
    let text = unsafe { input(text, text_len) };
    with(|state| state.lists.set_passed(text));
}

/// The list's info as JSON in the result buffer (see [`Loaded::info`]): 0, or -1 if no list
/// has that handle.
#[no_mangle]
pub extern "C" fn pb_info(handle: u32) -> i32 {
    with(|state| match state.lists.get_mut(handle) {
        Some(loaded) => {
            let info = loaded.info().to_string().into_bytes();
            set_result(state, info);
            0
        }
        None => {
            set_result(state, no_list(handle));
            -1
        }
    })
}

/// The list's file image (what `phishbloom` would save) in the result buffer, for storage:
/// 0, or -1 if no list has that handle.
#[no_mangle]
pub extern "C" fn pb_to_bytes(handle: u32) -> i32 {
    with(|state| match state.lists.get_mut(handle) {
        Some(loaded) => {
            let image = loaded.list.to_bytes();
            set_result(state, image);
            0
        }
        None => {
            set_result(state, no_list(handle));
            -1
        }
    })
}

/// Begins a sync of the list of `handle` (0: no local copy yet) from an index's bytes
/// (`origin`, its URL, names it in errors), trusting only the key whose text form is `trust`
/// when that is not empty; a published version older than the local one is refused unless
/// `allow_rollback` is 1. Returns a session id (1 or more) and the plan as JSON in the result
/// buffer (see [`Session::summary`]), or 0 and the error.
///
/// # Safety
/// Each pointer must point to its length of readable bytes ([`pb_alloc`] memory).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn pb_sync_begin(
    handle: u32,
    origin: *const u8,
    origin_len: usize,
    index: *const u8,
    index_len: usize,
    trust: *const u8,
    trust_len: usize,
    allow_rollback: u32,
    now: f64,
) -> u32 {
    // SAFETY: the caller's promise.
    let (origin, index, trust) = unsafe {
        (
            input(origin, origin_len),
            input(index, index_len),
            input(trust, trust_len),
        )
    };
    let origin = String::from_utf8_lossy(origin);
    let trust = String::from_utf8_lossy(trust);
    let trust = Some(trust.as_ref()).filter(|t| !t.trim().is_empty());
    with(|state| {
        let generation = state.lists.generation(handle).unwrap_or(0);
        let local = if handle == 0 {
            None
        } else {
            match state.lists.get_mut(handle) {
                Some(loaded) => Some(&*loaded),
                None => {
                    set_result(state, no_list(handle));
                    return 0;
                }
            }
        };
        // JavaScript's clock in seconds; a negative or NaN one is the epoch (`as` saturates).
        let now = now as u64;
        match Session::begin(&origin, index, trust, local, allow_rollback == 1, now) {
            Ok(session) => {
                let summary = session.summary().to_string().into_bytes();
                set_result(state, summary);
                let free = state.sessions.iter().position(Option::is_none);
                let at = free.unwrap_or(state.sessions.len());
                if at == state.sessions.len() {
                    state.sessions.push(None);
                }
                state.sessions[at] = Some(Running {
                    session,
                    handle,
                    generation,
                });
                crate::handle_of(at)
            }
            Err(error) => {
                set_result(state, error.into_bytes());
                0
            }
        }
    })
}

/// The session of `id`, if it is in progress.
fn session(state: &mut State, id: u32) -> Option<&mut Option<Running>> {
    let index = usize::try_from(id).ok()?.checked_sub(1)?;
    state.sessions.get_mut(index).filter(|s| s.is_some())
}

/// What the sync `session` needs next: 1 and `{"path", "bytes"}` (a path relative to the
/// list's base URL, and the length promised) in the result buffer; 0 when it can finish; -1
/// if there is no such session.
#[no_mangle]
pub extern "C" fn pb_sync_next(session_id: u32) -> i32 {
    with(|state| {
        let next = match session(state, session_id) {
            Some(Some(running)) => running
                .session
                .next()
                .map(|(path, bytes)| serde_json::json!({"path": path, "bytes": bytes})),
            _ => {
                set_result(state, no_session(session_id));
                return -1;
            }
        };
        match next {
            Some(next) => {
                set_result(state, next.to_string().into_bytes());
                1
            }
            None => {
                set_result(state, Vec::new());
                0
            }
        }
    })
}

/// Hands the sync `session` the download [`pb_sync_next`] named: its bytes, or (`failed` 1)
/// the text of why it could not be fetched. 0 when taken (a failed delta makes the whole file
/// the next download); -1 and the error when the sync cannot go on (end it with
/// [`pb_sync_end`]).
///
/// # Safety
/// `bytes` must point to `bytes_len` readable bytes ([`pb_alloc`] memory).
#[no_mangle]
pub unsafe extern "C" fn pb_sync_give(
    session_id: u32,
    bytes: *const u8,
    bytes_len: usize,
    failed: u32,
) -> i32 {
    // SAFETY: the caller's promise.
    let bytes = unsafe { input(bytes, bytes_len) };
    with(|state| {
        let Some(Some(Running { session, .. })) = session(state, session_id) else {
            set_result(state, no_session(session_id));
            return -1;
        };
        let why = String::from_utf8_lossy(bytes);
        let download = if failed == 1 {
            Err(why.as_ref())
        } else {
            Ok(bytes)
        };
        match session.give(download) {
            Ok(()) => {
                set_result(state, Vec::new());
                0
            }
            Err(error) => {
                set_result(state, error.into_bytes());
                -1
            }
        }
    })
}

/// Ends the sync `session` with every download given: the list reached replaces the list of
/// `handle` (or is held anew when `handle` is 0). Returns the handle of the list now current
/// and, in the result buffer, what happened as JSON (`name`, `version`, `min_interval`,
/// `plan`, `via`, `downloaded`, `changed`, and `info`, the list's [`Loaded::info`]); or 0 and
/// the error (the list of `handle` is unchanged). The session ends either way.
///
/// `handle` must be the one the sync was begun for, still holding the same list: a list
/// dropped (its handle perhaps reused by another list) or replaced since is refused, as is
/// another handle.
#[no_mangle]
pub extern "C" fn pb_sync_finish(session_id: u32, handle: u32) -> u32 {
    with(|state| {
        let Some(running) = session(state, session_id).and_then(Option::take) else {
            set_result(state, no_session(session_id));
            return 0;
        };
        if running.handle != handle {
            let error = format!(
                "the sync {session_id} was begun for handle {}, not {handle}",
                running.handle
            );
            set_result(state, error.into_bytes());
            return 0;
        }
        if handle != 0 && state.lists.generation(handle) != Some(running.generation) {
            let error = format!(
                "the list of handle {handle} was dropped or replaced during the sync {session_id}"
            );
            set_result(state, error.into_bytes());
            return 0;
        }
        let (list, mut summary) = match running.session.finish() {
            Ok(done) => done,
            Err(error) => {
                set_result(state, error.into_bytes());
                return 0;
            }
        };
        let handle = match list {
            Some(list) => {
                let loaded = match Loaded::new(list) {
                    Ok(loaded) => loaded,
                    Err(error) => {
                        set_result(state, error.into_bytes());
                        return 0;
                    }
                };
                if handle == 0 {
                    state.lists.insert(loaded)
                } else if state.lists.replace(handle, loaded) {
                    handle
                } else {
                    set_result(state, no_list(handle));
                    return 0;
                }
            }
            None => handle,
        };
        let Some(loaded) = state.lists.get_mut(handle) else {
            set_result(state, no_list(handle));
            return 0;
        };
        summary["info"] = loaded.info();
        set_result(state, summary.to_string().into_bytes());
        handle
    })
}

/// Drops the sync `session` (after an error, or to abandon it): 1 if it was in progress.
#[no_mangle]
pub extern "C" fn pb_sync_end(session_id: u32) -> i32 {
    with(|state| i32::from(session(state, session_id).and_then(Option::take).is_some()))
}

/// Seconds until the next poll (see [`next_poll`]).
#[no_mangle]
pub extern "C" fn pb_next_poll(every: f64, min_interval: f64, failures: u32, rand: f64) -> f64 {
    next_poll(every, min_interval, failures, rand)
}

/// The error text for a session id that is not in progress.
fn no_session(id: u32) -> Vec<u8> {
    format!("no sync is in progress with id {id}").into_bytes()
}

/// The printer format of a `json` flag.
fn output_of(json: u32) -> Output {
    if json == 0 {
        Output::Tsv
    } else {
        Output::Json
    }
}

/// The error text for a handle that holds no list.
fn no_list(handle: u32) -> Vec<u8> {
    format!("no list is loaded with handle {handle}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::image;

    /// Copies `bytes` into module memory, as JavaScript does.
    fn put(bytes: &[u8]) -> (*mut u8, usize) {
        let ptr = pb_alloc(bytes.len());
        // SAFETY: pb_alloc gave `bytes.len()` writable bytes at `ptr`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len()) };
        (ptr, bytes.len())
    }

    fn result() -> Vec<u8> {
        with(|state| state.result.clone())
    }

    #[test]
    fn load_check_and_serialize_through_the_exports() {
        let bytes = image("t", &["evil.com"]);
        let (name, name_len) = put(b"t.bloom");
        let (ptr, len) = put(&bytes);
        // SAFETY: memory from pb_alloc, freed once below.
        let handle = unsafe { pb_load(name, name_len, ptr, len) };
        assert!(handle > 0, "{}", String::from_utf8_lossy(&result()));
        let (url, url_len) = put(b"http://a.evil.com/");
        // SAFETY: as above.
        assert_eq!(unsafe { pb_check(handle, url, url_len, 0) }, 1);
        assert_eq!(
            result(),
            b"http://a.evil.com/\tlisted\tevil.com\tdomain\tphishing\n"
        );
        // SAFETY: as above.
        assert_eq!(unsafe { pb_warning(url, url_len) }, 1);
        let warning: serde_json::Value = serde_json::from_slice(&result()).unwrap();
        assert_eq!(warning["verdict"]["entry"], "evil.com");
        let (lines, lines_len) = put(b"http://b.com/\nhttp://evil.com/\n");
        // SAFETY: as above.
        assert_eq!(unsafe { pb_check_lines(handle, lines, lines_len, 0) }, 1);
        assert_eq!(
            result(),
            b"http://b.com/\tclean\nhttp://evil.com/\tlisted\tevil.com\tdomain\tphishing\n"
        );
        assert_eq!(pb_to_bytes(handle), 0);
        assert_eq!(result(), bytes, "an unchanged list serializes to its image");
        assert_eq!(pb_info(handle), 0);
        assert_eq!(pb_drop(handle), 1);
        // SAFETY: as above.
        assert_eq!(unsafe { pb_check(handle, url, url_len, 0) }, -1);
        assert_eq!(pb_info(handle), -1);
        for (ptr, len) in [
            (name, name_len),
            (ptr, len),
            (url, url_len),
            (lines, lines_len),
        ] {
            // SAFETY: each pair is one pb_alloc's, freed once.
            unsafe { pb_free(ptr, len) };
        }
    }

    #[test]
    fn a_first_sync_through_the_exports_holds_the_whole_file() {
        use phishbloom_core::sync::{Download, IndexBody};
        let bytes = image("s", &["evil.com"]);
        let list = phishbloom_core::Blocklist::from_bytes("s", &bytes).unwrap();
        let index = IndexBody::describe(&list, Download::of("files/v1.bloom", &bytes), vec![])
            .to_json(None);
        let (origin, origin_len) = put(b"http://h/l/index.json");
        let (ptr, len) = put(&index);
        // SAFETY: memory from pb_alloc, freed once below; an empty trust key.
        let session =
            unsafe { pb_sync_begin(0, origin, origin_len, ptr, len, std::ptr::null(), 0, 0, 1.0) };
        assert!(session > 0, "{}", String::from_utf8_lossy(&result()));
        assert_eq!(pb_sync_next(session), 1);
        let next: serde_json::Value = serde_json::from_slice(&result()).unwrap();
        assert_eq!(next["path"], "files/v1.bloom");
        assert_eq!(pb_sync_finish(session + 1, 0), 0, "no such session");
        let (file, file_len) = put(&bytes);
        // SAFETY: as above.
        assert_eq!(unsafe { pb_sync_give(session, file, file_len, 0) }, 0);
        assert_eq!(pb_sync_next(session), 0);
        let handle = pb_sync_finish(session, 0);
        assert!(handle > 0, "{}", String::from_utf8_lossy(&result()));
        let summary: serde_json::Value = serde_json::from_slice(&result()).unwrap();
        assert_eq!(summary["via"], "whole");
        assert_eq!(summary["info"]["name"], "s");
        assert_eq!(pb_sync_end(session), 0, "finish ended it");
        assert_eq!(pb_drop(handle), 1);
        for (ptr, len) in [(origin, origin_len), (ptr, len), (file, file_len)] {
            // SAFETY: each pair is one pb_alloc's, freed once.
            unsafe { pb_free(ptr, len) };
        }
    }

    /// Holds the list image `bytes`; its handle.
    fn load(bytes: &[u8]) -> u32 {
        let (ptr, len) = put(bytes);
        // SAFETY: memory from pb_alloc, freed once below; the name is empty.
        let handle = unsafe { pb_load(std::ptr::null(), 0, ptr, len) };
        // SAFETY: as above.
        unsafe { pb_free(ptr, len) };
        assert!(handle > 0, "{}", String::from_utf8_lossy(&result()));
        handle
    }

    /// Begins a sync of `handle` from an index describing `bytes` (its whole file); the
    /// session id.
    fn begin(handle: u32, bytes: &[u8]) -> u32 {
        use phishbloom_core::sync::{Download, IndexBody};
        let list = phishbloom_core::Blocklist::from_bytes("s", bytes).unwrap();
        let index =
            IndexBody::describe(&list, Download::of("files/v.bloom", bytes), vec![]).to_json(None);
        let (ptr, len) = put(&index);
        // SAFETY: memory from pb_alloc, freed once below; the origin and the trust key are
        // empty.
        let session = unsafe {
            pb_sync_begin(
                handle,
                std::ptr::null(),
                0,
                ptr,
                len,
                std::ptr::null(),
                0,
                0,
                1.0,
            )
        };
        // SAFETY: as above.
        unsafe { pb_free(ptr, len) };
        assert!(session > 0, "{}", String::from_utf8_lossy(&result()));
        session
    }

    /// Gives the sync `session` the whole file `bytes` it asks for.
    fn give_whole(session: u32, bytes: &[u8]) {
        assert_eq!(pb_sync_next(session), 1, "the whole file is asked for");
        let (ptr, len) = put(bytes);
        // SAFETY: memory from pb_alloc, freed once below.
        assert_eq!(unsafe { pb_sync_give(session, ptr, len, 0) }, 0);
        // SAFETY: as above.
        unsafe { pb_free(ptr, len) };
        assert_eq!(pb_sync_next(session), 0);
    }

    /// The name of the list of `handle`.
    fn name_of(handle: u32) -> String {
        assert_eq!(pb_info(handle), 0);
        let info: serde_json::Value = serde_json::from_slice(&result()).unwrap();
        info["name"].as_str().unwrap_or_default().to_owned()
    }

    /// Version 2 of the list "old" (one more entry than [`image`]'s version 1).
    fn version_2() -> Vec<u8> {
        let mut list =
            phishbloom_core::Blocklist::from_bytes("old", &image("old", &["evil.com"])).unwrap();
        list.add(&[b"worse.org".as_slice()], None).unwrap();
        list.to_bytes()
    }

    #[test]
    fn a_sync_never_finishes_into_a_list_that_took_its_handle() {
        let old = load(&image("old", &["evil.com"]));
        let v2 = version_2();
        let session = begin(old, &v2);
        give_whole(session, &v2);
        // The list is removed mid-sync and a new list takes its (freed) handle.
        assert_eq!(pb_drop(old), 1);
        let new = load(&image("new", &["other.net"]));
        assert_eq!(new, old, "the freed slot is reused");
        assert_eq!(pb_sync_finish(session, new), 0);
        let error = String::from_utf8_lossy(&result()).into_owned();
        assert!(error.contains("dropped or replaced"), "{error}");
        assert_eq!(name_of(new), "new", "the new list keeps its own bytes");
        assert_eq!(
            pb_sync_end(session),
            0,
            "the refused finish ended the session"
        );
        assert_eq!(pb_drop(new), 1);
    }

    #[test]
    fn a_sync_finishes_only_into_the_handle_it_began_for_and_only_once() {
        let old = load(&image("old", &["evil.com"]));
        let other = load(&image("other", &["other.net"]));
        let v2 = version_2();
        let first = begin(old, &v2);
        let second = begin(old, &v2);
        give_whole(first, &v2);
        give_whole(second, &v2);
        assert_eq!(pb_sync_finish(first, other), 0, "another handle");
        assert!(String::from_utf8_lossy(&result()).contains("begun for handle"));
        assert_eq!(name_of(other), "other");
        assert_eq!(pb_sync_finish(first, 0), 0, "no handle");
        let third = begin(old, &v2);
        give_whole(third, &v2);
        assert_eq!(pb_sync_finish(third, old), old);
        let summary: serde_json::Value = serde_json::from_slice(&result()).unwrap();
        assert_eq!(summary["info"]["version"], 2);
        // The second sync was begun for the list the third one replaced.
        assert_eq!(pb_sync_finish(second, old), 0);
        assert!(String::from_utf8_lossy(&result()).contains("dropped or replaced"));
        assert_eq!(pb_drop(old), 1);
        assert_eq!(pb_drop(other), 1);
    }

    #[test]
    fn a_bad_image_gives_no_handle_and_its_error() {
        let (ptr, len) = put(b"not a list");
        // SAFETY: memory from pb_alloc, freed once below.
        assert_eq!(unsafe { pb_load(ptr, 0, ptr, len) }, 0);
        assert!(!result().is_empty());
        // SAFETY: as above.
        unsafe { pb_free(ptr, len) };
    }
}
