//! A list file JavaScript holds, read by the core in place through the module's one import,
//! `env.pb_host_read`: the core copies each section straight into the structure that keeps it
//! (a compact table's words, a filter's bits), so loading a list never holds a second copy of
//! the file in the module's memory — which, once grown, a WebAssembly memory never gives back.

use phishbloom_core::format::Source;

#[link(wasm_import_module = "env")]
extern "C" {
    /// Copies `len` bytes of the file JavaScript holds for the load in progress, from byte
    /// `offset` (a double: exact below 2⁵³), to `dest` in the module's memory; 0 on success,
    /// -1 when that range is not in the file.
    fn pb_host_read(offset: f64, dest: *mut u8, len: usize) -> i32;
}

/// The file JavaScript holds for the load in progress, `len` bytes long.
#[derive(Debug)]
pub struct HostFile {
    /// Its length, as JavaScript gave it.
    pub len: u64,
}

impl Source for HostFile {
    fn source_len(&self) -> std::io::Result<u64> {
        Ok(self.len)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let fits = offset
            .checked_add(buf.len() as u64)
            .is_some_and(|end| end <= self.len);
        if !fits {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        // SAFETY: `buf` is `buf.len()` writable bytes of this module's memory, and the import
        // writes at most that many there (core.mjs's `hostRead` copies exactly `len` bytes).
        let status = unsafe { pb_host_read(offset as f64, buf.as_mut_ptr(), buf.len()) };
        match status {
            0 => Ok(()),
            _ => Err(std::io::ErrorKind::UnexpectedEof.into()),
        }
    }
}
