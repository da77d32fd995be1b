//! The library's errors as Python exceptions, classes of `phishbloom._errors`: a `FileError`
//! (an `OSError`) where a file could not be read or written, a `ParameterError` (a
//! `ValueError`) for a size, rate or option outside its range, and a `ListError` (a
//! `ValueError`) for a list, filter or source whose content cannot be used — each carrying the
//! library's message, which says how to fix it.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// The exception class of `phishbloom._errors` named `class`, raised with `message`.
fn raise(class: &'static str, message: String) -> PyErr {
    Python::attach(|py| {
        let made = py
            .import("phishbloom._errors")
            .and_then(|module| module.getattr(class))
            .and_then(|class| class.call1((message.clone(),)));
        match made {
            Ok(error) => PyErr::from_value(error),
            // The package ships `_errors`; without it (the module loaded on its own) the
            // message still reaches the caller.
            Err(_) => pyo3::exceptions::PyValueError::new_err(message),
        }
    })
}

/// A parameter outside its range.
pub fn parameter(message: impl Into<String>) -> PyErr {
    raise("ParameterError", message.into())
}

/// A count that must be at least 1 (an item count, a capacity): a Python int of any size.
pub fn count(name: &str, value: i128) -> PyResult<u64> {
    match u64::try_from(value) {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(parameter(format!(
            "{name} must be a whole number from 1 to {}; got {value}",
            u64::MAX
        ))),
    }
}

/// A list or source whose content cannot be used.
pub fn list(message: impl Into<String>) -> PyErr {
    raise("ListError", message.into())
}

/// A value of a type the call does not take.
pub fn wrong_type(message: impl Into<String>) -> PyErr {
    PyTypeError::new_err(message.into())
}

/// The core's error.
pub fn core(error: phishbloom_core::Error) -> PyErr {
    use phishbloom_core::Error as E;
    let class = match &error {
        E::Read { .. } => "FileError",
        E::CapacityTooLarge { .. } => "ParameterError",
        E::Filter(filter) => filter_class(filter),
        _ => "ListError",
    };
    raise(class, error.to_string())
}

/// The class of a filter error: a refused size or rate is a parameter's fault, the rest the
/// filter's content.
fn filter_class(error: &phishbloom_filter::Error) -> &'static str {
    use phishbloom_filter::Error as F;
    match error {
        F::InvalidParameter { .. } | F::TooLarge { .. } | F::OutOfMemory { .. } => "ParameterError",
        _ => "ListError",
    }
}

/// The blocklist crate's error (files, sources).
pub fn blocklist(error: phishbloom_blocklist::Error) -> PyErr {
    use phishbloom_blocklist::Error as E;
    match error {
        E::Core(error) => core(error),
        E::Io { .. }
        | E::IsADirectory { .. }
        | E::NotAFile { .. }
        | E::OutputNotAFile { .. }
        | E::OutputIsSymlink { .. }
        | E::OutputIsInput { .. }
        | E::Locked { .. }
        | E::NoRoom { .. }
        | E::Spill { .. } => raise("FileError", error.to_string()),
        other => raise("ListError", other.to_string()),
    }
}
