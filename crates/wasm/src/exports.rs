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
use phishbloom_core::Status;

use crate::{answer, stream_lines, Loaded, Lists};

thread_local! {
    /// The lists held, and the result buffer of the last call.
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// What the module holds between calls.
#[derive(Default)]
struct State {
    lists: Lists,
    result: Vec<u8>,
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
    with(|state| match Loaded::from_bytes(&name, bytes) {
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
        let item = item.strip_suffix(b"\r").unwrap_or(item);
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

/// Applies a delta file's bytes to the list of `handle`: 0 and the new info as JSON in the
/// result buffer, or -1 and the error (the list may then be partly changed: reload it from
/// its stored bytes, as [`phishbloom_core::Blocklist::apply`] says).
///
/// # Safety
/// `delta` must point to `delta_len` readable bytes ([`pb_alloc`] memory).
#[no_mangle]
pub unsafe extern "C" fn pb_apply_delta(handle: u32, delta: *const u8, delta_len: usize) -> i32 {
    // SAFETY: the caller's promise.
    let delta = unsafe { input(delta, delta_len) };
    with(|state| {
        let Some(loaded) = state.lists.get_mut(handle) else {
            set_result(state, no_list(handle));
            return -1;
        };
        match loaded.apply_delta(delta) {
            Ok(info) => {
                set_result(state, info.to_string().into_bytes());
                0
            }
            Err(error) => {
                set_result(state, error.into_bytes());
                -1
            }
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
    fn load_check_apply_and_serialize_through_the_exports() {
        let bytes = image("t", &["evil.com"]);
        let (name, name_len) = put(b"t.bloom");
        let (ptr, len) = put(&bytes);
        // SAFETY: memory from pb_alloc, freed once below.
        let handle = unsafe { pb_load(name, name_len, ptr, len) };
        assert!(handle > 0, "{}", String::from_utf8_lossy(&result()));
        let (url, url_len) = put(b"http://a.evil.com/");
        // SAFETY: as above.
        assert_eq!(unsafe { pb_check(handle, url, url_len, 0) }, 1);
        assert_eq!(result(), b"http://a.evil.com/\tlisted\tevil.com\tdomain\tphishing\n");
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
        // SAFETY: as above.
        assert_eq!(unsafe { pb_apply_delta(handle, url, url_len) }, -1);
        assert!(!result().is_empty(), "the error is told");
        assert_eq!(pb_info(handle), 0);
        assert_eq!(pb_drop(handle), 1);
        // SAFETY: as above.
        assert_eq!(unsafe { pb_check(handle, url, url_len, 0) }, -1);
        assert_eq!(pb_info(handle), -1);
        for (ptr, len) in [(name, name_len), (ptr, len), (url, url_len), (lines, lines_len)] {
            // SAFETY: each pair is one pb_alloc's, freed once.
            unsafe { pb_free(ptr, len) };
        }
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
