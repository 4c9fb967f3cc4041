//! What every function of the C ABI shares: the status codes, the panic
//! guard, error logging that survives a panicking logger, C strings in, and
//! arrays handed out to C and taken back.

use std::any::Any;
use std::ffi::{c_char, CStr, CString};
use std::panic::{self, AssertUnwindSafe};

use interned_string_db::Error;

/// Status codes, as the Neuron runtime defines them.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NRT_STATUS {
    /// Success.
    NRT_SUCCESS = 0,
    /// An internal failure (a panic caught at the boundary).
    NRT_FAILURE = 1,
    /// Bad input: NULL, empty, invalid UTF-8, out of range.
    NRT_INVALID = 2,
    /// The handle cannot be used now (an NC that is closed).
    NRT_INVALID_HANDLE = 3,
    /// Out of memory, or a cap or slab limit reached.
    NRT_RESOURCE = 4,
}

impl From<&Error> for NRT_STATUS {
    fn from(error: &Error) -> Self {
        match error {
            Error::NcClosed { .. } => NRT_STATUS::NRT_INVALID_HANDLE,
            Error::CapReached { .. }
            | Error::OutOfMemory { .. }
            | Error::SlabsExhausted { .. }
            | Error::ConfigTooLarge { .. } => NRT_STATUS::NRT_RESOURCE,
            _ => NRT_STATUS::NRT_INVALID,
        }
    }
}

/// Logs an error at the C boundary. The installed logger is the caller's
/// code and may panic: that panic is swallowed here, so that the function
/// still returns its status (and the report in [`guard`], outside its
/// `catch_unwind`, cannot unwind out of an `extern "C"` function, which
/// aborts).
pub(crate) fn log_error(message: core::fmt::Arguments<'_>) {
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| log::error!("{message}"))) {
        drop_payload(payload);
    }
}

/// Drops a caught panic's payload. Its destructor is arbitrary code and may
/// panic too: that second payload is leaked rather than dropped.
fn drop_payload(payload: Box<dyn Any + Send>) {
    if let Err(again) = panic::catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        core::mem::forget(again);
    }
}

/// The status of `result`, logging an error with the function's name.
pub(crate) fn status<T>(function: &str, result: Result<T, Error>) -> NRT_STATUS {
    match result {
        Ok(_) => NRT_STATUS::NRT_SUCCESS,
        Err(e) => {
            log_error(format_args!("{function}: {e}"));
            NRT_STATUS::from(&e)
        }
    }
}

/// Runs `body`, turning a panic into `on_panic` (logged) so that it never
/// unwinds into C, even when the panic came from the logger.
pub(crate) fn guard<T>(function: &str, on_panic: T, body: impl FnOnce() -> T) -> T {
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(payload) => {
            drop_payload(payload);
            log_error(format_args!(
                "{function}: internal panic caught at the C boundary"
            ));
            on_panic
        }
    }
}

/// The bytes of a C string that must be non-NULL, non-empty UTF-8; else
/// `NRT_INVALID`, with the reason (NULL, empty or not UTF-8) logged here,
/// once.
///
/// # Safety
///
/// `s` is NULL or points to a NUL-terminated string that stays valid and
/// unchanged for `'a`.
pub(crate) unsafe fn required_str<'a>(
    function: &str,
    s: *const c_char,
) -> Result<&'a str, NRT_STATUS> {
    let reason = if s.is_null() {
        "the string is NULL"
    } else {
        // SAFETY: non-NULL, and the caller guarantees a valid C string.
        let bytes = unsafe { CStr::from_ptr(s) }.to_bytes();
        match core::str::from_utf8(bytes) {
            Ok("") => "the string is empty",
            Ok(name) => return Ok(name),
            Err(_) => "the input is not valid UTF-8",
        }
    };
    log_error(format_args!("{function}: {reason}"));
    Err(NRT_STATUS::NRT_INVALID)
}

/// Leaks `items` as a C array that [`take_array`] frees. An empty array is a
/// dangling, non-NULL pointer, as the reference's empty `Vec` is.
pub(crate) fn leak_array<T>(items: Vec<T>) -> *mut T {
    Box::into_raw(items.into_boxed_slice()).cast::<T>()
}

/// Reclaims an array made by [`leak_array`].
///
/// # Safety
///
/// `ptr` and `len` come from one [`leak_array`] call, and the array is not
/// used afterwards.
pub(crate) unsafe fn take_array<T>(ptr: *mut T, len: usize) -> Box<[T]> {
    // SAFETY: the caller guarantees a boxed slice of exactly `len` elements.
    unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) }
}

/// Copies each name into a C string, as an array the caller owns (freed by
/// [`free_c_strings`]); `None`, with nothing allocated, if any name holds a
/// NUL byte, which C could not see whole.
pub(crate) fn export_names<'a>(
    names: impl Iterator<Item = &'a [u8]> + Clone,
) -> Option<*mut *mut c_char> {
    if names.clone().any(|name| name.contains(&0)) {
        return None;
    }
    Some(leak_array(
        names
            .map(|name| CString::new(name).expect("checked for NUL").into_raw())
            .collect(),
    ))
}

/// Frees an array made by [`export_names`] and its strings.
///
/// # Safety
///
/// `names` and `count` come from one [`export_names`] call, and are not used
/// afterwards.
pub(crate) unsafe fn free_c_strings(names: *mut *mut c_char, count: usize) {
    // SAFETY: `export_names` made the array with `leak_array`.
    for name in unsafe { take_array(names, count) }.iter() {
        // SAFETY: each element came from `CString::into_raw`.
        drop(unsafe { CString::from_raw(*name) });
    }
}
