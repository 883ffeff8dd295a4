//! The Bash-boundary guard, both as `guard::judge` and through `hl_bash_guard` on an active
//! session. Invariants: the verdict is 0, 1 or 2; a block has a reason and an allow has none;
//! the C ABI agrees with the Rust API; a dormant session is always allowed; and whatever follows
//! a complete first line `herdr agent wait x` cannot unblock it.
#![no_main]

use std::ffi::{c_char, CStr, CString};
use std::sync::Once;

use herdr_link::{ffi, guard, session};
use libfuzzer_sys::fuzz_target;

const ACTIVE: &CStr = c"fuzz-active";
const DORMANT: &CStr = c"fuzz-dormant";

fuzz_target!(|data: &[u8]| {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        session::activate("fuzz-active");
    });
    let text = String::from_utf8_lossy(data);
    let verdict = guard::judge(&text);
    let code = verdict.code();
    assert!((0..=2).contains(&code));
    assert_eq!(verdict.reason().is_some(), code != 0);
    let prefixed = format!("herdr agent wait x\n{text}");
    assert_eq!(guard::judge(&prefixed).code(), 2, "{prefixed:?}");

    // The C ABI sees the bytes up to the first NUL, judged on their lossy text.
    let cut = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let command = CString::new(&data[..cut]).expect("no NUL before the cut");
    let expected = guard::judge(&String::from_utf8_lossy(&data[..cut])).code();
    let mut reason: *mut c_char = std::ptr::null_mut();
    // SAFETY: valid C strings and a writable out pointer.
    let got = unsafe { ffi::hl_bash_guard(ACTIVE.as_ptr(), command.as_ptr(), &mut reason) };
    assert_eq!(got, expected);
    assert_eq!(reason.is_null(), got == 0);
    // SAFETY: a string returned by the library (or NULL), released once.
    unsafe { ffi::hl_free(reason) };
    let mut reason: *mut c_char = std::ptr::null_mut();
    // SAFETY: as above.
    let dormant = unsafe { ffi::hl_bash_guard(DORMANT.as_ptr(), command.as_ptr(), &mut reason) };
    assert_eq!(dormant, 0);
    assert!(reason.is_null());
});
