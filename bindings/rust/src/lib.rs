//! Rust declarations of a subset of polyhal's C ABI (`<polyhal/hal.h>`): devices, streams,
//! events, host functions, stream-ordered memory and copies. They call libpolyhal directly,
//! with no C shim in between; the names, types and values are those of the header.
//!
//! Every function returns a `halError`; [`check`] turns one into a `Result` carrying the
//! error's name and `halGetLastErrorMessage()`.
#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_void, CStr};
use std::fmt;
use std::os::raw::{c_char, c_int};

pub type halError = c_int;
pub const HAL_SUCCESS: halError = 0;
pub const HAL_ERROR_INVALID_VALUE: halError = 1;
pub const HAL_ERROR_INVALID_HANDLE: halError = 2;
pub const HAL_ERROR_OUT_OF_MEMORY: halError = 3;
pub const HAL_ERROR_NOT_READY: halError = 4;
pub const HAL_ERROR_NOT_SUPPORTED: halError = 5;

/// Opaque objects behind the handles.
#[repr(C)]
pub struct halStream_t {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct halEvent_t {
    _opaque: [u8; 0],
}
/// A stream; null is the default stream of the calling thread's current device.
pub type halStream = *mut halStream_t;
pub type halEvent = *mut halEvent_t;

pub type halHostFn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

pub type halMemcpyKind = c_int;
pub const HAL_MEMCPY_HOST_TO_HOST: halMemcpyKind = 0;
pub const HAL_MEMCPY_HOST_TO_DEVICE: halMemcpyKind = 1;
pub const HAL_MEMCPY_DEVICE_TO_HOST: halMemcpyKind = 2;
pub const HAL_MEMCPY_DEVICE_TO_DEVICE: halMemcpyKind = 3;
pub const HAL_MEMCPY_DEFAULT: halMemcpyKind = 4;

/// Statistics of a device's pool; set `size` to `size_of::<halMemPoolStats>()`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct halMemPoolStats {
    pub size: usize,
    pub bytesInUse: u64,
    pub peakBytesInUse: u64,
    pub bytesReserved: u64,
    pub peakBytesReserved: u64,
    pub bytesCached: u64,
    pub bytesPending: u64,
    pub reusedSameStream: u64,
    pub reusedProvenOrder: u64,
    pub reusedObservedComplete: u64,
    pub newSegments: u64,
    pub oomSynchronized: u64,
    pub backendAllocations: u64,
    pub backendFrees: u64,
}

#[link(name = "polyhal")]
extern "C" {
    pub fn halGetErrorName(error: halError) -> *const c_char;
    pub fn halGetLastErrorMessage() -> *const c_char;
    pub fn halGetBackendName(name: *mut *const c_char) -> halError;
    pub fn halGetDeviceCount(count: *mut c_int) -> halError;

    pub fn halCreateStream(stream: *mut halStream) -> halError;
    pub fn halDestroyStream(stream: halStream) -> halError;
    pub fn halSynchronizeStream(stream: halStream) -> halError;
    pub fn halQueryStream(stream: halStream) -> halError;
    pub fn halStreamWaitEvent(stream: halStream, event: halEvent) -> halError;

    pub fn halCreateEvent(event: *mut halEvent) -> halError;
    pub fn halRecordEvent(event: halEvent, stream: halStream) -> halError;
    pub fn halQueryEvent(event: halEvent) -> halError;
    pub fn halSynchronizeEvent(event: halEvent) -> halError;
    pub fn halDestroyEvent(event: halEvent) -> halError;

    pub fn halLaunchHostFunc(
        stream: halStream,
        function: halHostFn,
        user_data: *mut c_void,
    ) -> halError;

    pub fn halMallocAsync(ptr: *mut *mut c_void, size: usize, stream: halStream) -> halError;
    pub fn halFreeAsync(ptr: *mut c_void, stream: halStream) -> halError;
    pub fn halMemsetAsync(
        dst: *mut c_void,
        dst_max: usize,
        value: c_int,
        count: usize,
        stream: halStream,
    ) -> halError;
    pub fn halMemcpyAsync(
        dst: *mut c_void,
        dst_max: usize,
        src: *const c_void,
        count: usize,
        kind: halMemcpyKind,
        stream: halStream,
    ) -> halError;
    pub fn halMemPoolGetStats(device: c_int, stats: *mut halMemPoolStats) -> halError;
}

/// A failed polyhal call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The `halError` value.
    pub code: halError,
    /// Its enumerator name, e.g. "HAL_ERROR_INVALID_HANDLE".
    pub name: String,
    /// `halGetLastErrorMessage()` of the failed call.
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.message)
    }
}

impl std::error::Error for Error {}

/// `Ok(())` for HAL_SUCCESS; otherwise the error with the calling thread's last error message.
/// Call it right after the failed call, on the same thread.
pub fn check(code: halError) -> Result<(), Error> {
    if code == HAL_SUCCESS {
        return Ok(());
    }
    // SAFETY: both functions return static or thread-owned NUL-terminated strings, never null.
    unsafe {
        let message = CStr::from_ptr(halGetLastErrorMessage())
            .to_string_lossy()
            .into_owned();
        let name = CStr::from_ptr(halGetErrorName(code))
            .to_string_lossy()
            .into_owned();
        Err(Error {
            code,
            name,
            message,
        })
    }
}
