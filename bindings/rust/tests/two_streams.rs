//! polyhal's C ABI called from Rust: streams, events, a host function written in Rust,
//! stream-ordered memory, and errors.

use std::mem;
use std::os::raw::c_void;
use std::ptr;
use std::sync::{Arc, Condvar, Mutex};

use polyhal_sys::*;

const BYTES: usize = 256 * 1024;

/// Holds streams until opened: `hold` enqueues a host function (a Rust `extern "C" fn`) that
/// blocks until `open`. Dropping the gate opens it, so a failing test never leaves a stream held.
struct Gate {
    state: Arc<(Mutex<bool>, Condvar)>,
}

impl Gate {
    fn new() -> Gate {
        Gate {
            state: Arc::new((Mutex::new(false), Condvar::new())),
        }
    }

    unsafe fn hold(&self, stream: halStream) {
        unsafe extern "C" fn wait(state: *mut c_void) {
            // The host function owns one reference to the state, given to it by `hold`.
            let state = Arc::from_raw(state as *const (Mutex<bool>, Condvar));
            let (opened, changed) = &*state;
            let mut opened = opened.lock().unwrap();
            while !*opened {
                opened = changed.wait(opened).unwrap();
            }
        }
        let state = Arc::into_raw(Arc::clone(&self.state)) as *mut c_void;
        check(halLaunchHostFunc(stream, Some(wait), state)).unwrap();
    }

    fn open(&self) {
        let (opened, changed) = &*self.state;
        *opened.lock().unwrap() = true;
        changed.notify_all();
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
    }
}

unsafe fn stream() -> halStream {
    let mut stream = ptr::null_mut();
    check(halCreateStream(&mut stream)).unwrap();
    stream
}

unsafe fn malloc_async(bytes: usize, stream: halStream) -> *mut c_void {
    let mut ptr = ptr::null_mut();
    check(halMallocAsync(&mut ptr, bytes, stream)).unwrap();
    ptr
}

unsafe fn read_back(ptr: *const c_void, stream: halStream) -> Vec<u8> {
    let mut host = vec![0u8; BYTES];
    check(halMemcpyAsync(
        host.as_mut_ptr().cast(),
        BYTES,
        ptr,
        BYTES,
        HAL_MEMCPY_DEVICE_TO_HOST,
        stream,
    ))
    .unwrap();
    check(halSynchronizeStream(stream)).unwrap();
    host
}

fn pool_stats() -> halMemPoolStats {
    let mut stats = halMemPoolStats {
        size: mem::size_of::<halMemPoolStats>(),
        ..Default::default()
    };
    unsafe { check(halMemPoolGetStats(0, &mut stats)).unwrap() };
    stats
}

#[test]
fn event_orders_the_consumer_after_the_producer() {
    unsafe {
        let (producer, consumer) = (stream(), stream());
        let mut filled = ptr::null_mut();
        check(halCreateEvent(&mut filled)).unwrap();
        let source = malloc_async(BYTES, producer);
        let gate = Gate::new();
        gate.hold(producer);
        check(halMemsetAsync(source, BYTES, 0x5A, BYTES, producer)).unwrap();
        check(halRecordEvent(filled, producer)).unwrap();
        check(halStreamWaitEvent(consumer, filled)).unwrap();
        let copy = malloc_async(BYTES, consumer);
        check(halMemcpyAsync(
            copy,
            BYTES,
            source,
            BYTES,
            HAL_MEMCPY_DEVICE_TO_DEVICE,
            consumer,
        ))
        .unwrap();
        assert_eq!(halQueryEvent(filled), HAL_ERROR_NOT_READY);
        assert_eq!(
            halQueryStream(consumer),
            HAL_ERROR_NOT_READY,
            "the consumer did not wait"
        );
        gate.open();
        assert!(read_back(copy, consumer).iter().all(|&byte| byte == 0x5A));
        check(halSynchronizeEvent(filled)).unwrap();
        assert_eq!(halQueryStream(producer), HAL_SUCCESS);

        check(halFreeAsync(source, producer)).unwrap();
        check(halFreeAsync(copy, consumer)).unwrap();
        check(halDestroyEvent(filled)).unwrap();
        check(halDestroyStream(consumer)).unwrap();
        check(halDestroyStream(producer)).unwrap();
    }
}

#[test]
fn block_freed_while_another_stream_reads_it_is_not_reused() {
    unsafe {
        let (s0, s1) = (stream(), stream());
        let mut written = ptr::null_mut();
        check(halCreateEvent(&mut written)).unwrap();
        let block = malloc_async(BYTES, s0);
        check(halMemsetAsync(block, BYTES, 0xA5, BYTES, s0)).unwrap();
        check(halRecordEvent(written, s0)).unwrap();
        check(halStreamWaitEvent(s1, written)).unwrap();
        let gate = Gate::new();
        gate.hold(s1); // a long operation on s1 before it reads the block
        let out = malloc_async(BYTES, s1);
        check(halMemcpyAsync(
            out,
            BYTES,
            block,
            BYTES,
            HAL_MEMCPY_DEVICE_TO_DEVICE,
            s1,
        ))
        .unwrap();
        let before = pool_stats();
        check(halFreeAsync(block, s0)).unwrap();
        let after_free = pool_stats();
        let other = malloc_async(BYTES, s0);
        check(halMemsetAsync(other, BYTES, 0x3C, BYTES, s0)).unwrap();
        assert_ne!(other, block, "s0 got memory s1 still reads");
        assert!(after_free.bytesPending >= before.bytesPending + BYTES as u64);
        gate.open();
        assert!(read_back(out, s1).iter().all(|&byte| byte == 0xA5));
        assert!(read_back(other, s0).iter().all(|&byte| byte == 0x3C));

        check(halFreeAsync(other, s0)).unwrap();
        check(halFreeAsync(out, s1)).unwrap();
        check(halDestroyEvent(written)).unwrap();
        check(halDestroyStream(s1)).unwrap();
        check(halDestroyStream(s0)).unwrap();
    }
}

#[test]
fn errors_carry_their_name_and_message() {
    unsafe {
        let error = check(halDestroyStream(ptr::null_mut())).unwrap_err();
        assert_eq!(error.code, HAL_ERROR_INVALID_HANDLE);
        assert_eq!(error.name, "HAL_ERROR_INVALID_HANDLE");
        assert!(!error.message.is_empty());

        let mut not_from_the_pool = [0u8; 16];
        let error = check(halFreeAsync(
            not_from_the_pool.as_mut_ptr().cast(),
            ptr::null_mut(),
        ))
        .unwrap_err();
        assert_eq!(error.code, HAL_ERROR_INVALID_VALUE);
        assert!(error.to_string().starts_with("HAL_ERROR_INVALID_VALUE: "));

        let mut count = 0;
        check(halGetDeviceCount(&mut count)).unwrap();
        assert!(count >= 1);
    }
}
