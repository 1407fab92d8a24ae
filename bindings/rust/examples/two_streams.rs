//! Two streams ordered by an event, with stream-ordered memory, through polyhal's C ABI.
//!
//! The producer stream fills a block; the consumer stream waits on an event recorded after the
//! fill, copies the block and copies the result to the host. Run with
//! `POLYHAL_LIB_DIR=<build>/lib cargo run --example two_streams` (POLYHAL_BACKEND picks the
//! backend).

use std::ffi::CStr;
use std::os::raw::c_void;
use std::process::ExitCode;
use std::ptr;

use polyhal_sys::*;

const BYTES: usize = 1 << 20;

/// Returns the number of bytes that arrived wrong.
fn run() -> Result<usize, Error> {
    unsafe {
        let mut backend = ptr::null();
        check(halGetBackendName(&mut backend))?;
        println!("backend: {}", CStr::from_ptr(backend).to_string_lossy());

        let (mut producer, mut consumer): (halStream, halStream) =
            (ptr::null_mut(), ptr::null_mut());
        check(halCreateStream(&mut producer))?;
        check(halCreateStream(&mut consumer))?;
        let mut filled: halEvent = ptr::null_mut();
        check(halCreateEvent(&mut filled))?;

        let mut source: *mut c_void = ptr::null_mut();
        check(halMallocAsync(&mut source, BYTES, producer))?;
        check(halMemsetAsync(source, BYTES, 0x5A, BYTES, producer))?;
        check(halRecordEvent(filled, producer))?;
        check(halStreamWaitEvent(consumer, filled))?; // the consumer's later work waits

        let mut copy: *mut c_void = ptr::null_mut();
        check(halMallocAsync(&mut copy, BYTES, consumer))?;
        check(halMemcpyAsync(
            copy,
            BYTES,
            source,
            BYTES,
            HAL_MEMCPY_DEVICE_TO_DEVICE,
            consumer,
        ))?;
        // Freed while the consumer may still read it: the pool keeps it until that read is done.
        check(halFreeAsync(source, producer))?;

        let mut host = vec![0u8; BYTES];
        check(halMemcpyAsync(
            host.as_mut_ptr().cast(),
            BYTES,
            copy,
            BYTES,
            HAL_MEMCPY_DEVICE_TO_HOST,
            consumer,
        ))?;
        check(halSynchronizeStream(consumer))?;
        let wrong = host.iter().filter(|&&byte| byte != 0x5A).count();
        println!(
            "copied {} bytes through two streams: {} wrong",
            BYTES, wrong
        );

        check(halFreeAsync(copy, consumer))?;
        check(halDestroyEvent(filled))?;
        check(halDestroyStream(consumer))?;
        check(halDestroyStream(producer))?;
        Ok(wrong)
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(0) => ExitCode::SUCCESS,
        Ok(wrong) => {
            eprintln!("{} bytes differ from 0x5A", wrong);
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("polyhal: {}", error);
            ExitCode::FAILURE
        }
    }
}
