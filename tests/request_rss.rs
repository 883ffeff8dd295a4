//! Peak memory of single oversized requests through the C ABI (the review's inputs): the
//! process's peak RSS (`VmHWM`, reset through `/proc/self/clear_refs` before each call) may
//! grow by less than 64 MiB while each is answered. A test
//! binary of its own, with one test, so no other test's allocations move the peak.

use test_support::world as common;

use std::ffi::{c_char, CString};

use common::abi;
use herdr_link::limits::{MAX_REQUEST_BYTES, MAX_SESSION_KEY_BYTES};
use serde_json::Value;

const BOUND_KIB: u64 = 64 * 1024;

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}

/// A C string built in place at its final size (no doubling, no copy on conversion), so building
/// the input itself does not raise the peak beyond its own size.
fn c_text(parts: &[&str], repeat: &str, times: usize, tail: &[&str]) -> CString {
    let len = parts.iter().chain(tail).map(|p| p.len()).sum::<usize>() + repeat.len() * times;
    let mut bytes = Vec::with_capacity(len + 1);
    for p in parts {
        bytes.extend_from_slice(p.as_bytes());
    }
    let block = repeat.repeat(times.min(64 * 1024));
    let mut left = times;
    while left > 0 {
        let n = left.min(64 * 1024);
        bytes.extend_from_slice(&block.as_bytes()[..n * repeat.len()]);
        left -= n;
    }
    for p in tail {
        bytes.extend_from_slice(p.as_bytes());
    }
    CString::new(bytes).unwrap()
}

/// Runs `f` on the input and returns (answer, peak RSS growth in KiB).
fn peak_growth(
    input: &CString,
    f: unsafe extern "C" fn(*const c_char) -> *mut c_char,
) -> (Value, u64) {
    // Reset the peak to the current RSS (Linux ≥ 4.0), so only this call can raise it.
    std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM");
    let before = status_kib("VmHWM:");
    // SAFETY: a valid C string; the answer is released by `take`.
    let answer = abi().take(unsafe { f(input.as_ptr()) });
    let after = status_kib("VmHWM:");
    (answer, after.saturating_sub(before))
}

#[test]
fn the_reviews_inputs_stay_within_the_memory_bound() {
    let a = abi();
    // Warm up: load the library, touch its lazies.
    a.call_text(r#"{"session":"warm","tool":"nope"}"#);
    a.present("warm", "mcp");

    let mut report = Vec::new();
    let mut check = |what: &str, answer: &Value, kib: u64, code: &str| {
        let text = answer.to_string();
        assert_eq!(
            answer["error"]["code"],
            code,
            "{what}: {}",
            &text[..text.len().min(300)]
        );
        assert!(text.len() < 400, "{what}: {} bytes answered", text.len());
        assert!(kib < BOUND_KIB, "{what}: peak RSS grew by {kib} KiB");
        report.push(format!("{what}: +{kib} KiB"));
    };

    // 50 MB holding 25 million integers.
    let ints = c_text(
        &[r#"{"session":"rss","tool":"herdr_link_start","input":{"name":"x","kind":"pi","args":["#],
        "0,",
        25_000_000,
        &["0]}}"],
    );
    let (r, kib) = peak_growth(&ints, a.tool_call);
    check("50 MB of integers", &r, kib, "INVALID_REQUEST");
    drop(ints);

    // Just under the byte limit, integers in a field the request uses (value budget) and in
    // an unknown field (skipped).
    let n = (MAX_REQUEST_BYTES - 200) / 2;
    let used = c_text(
        &[r#"{"session":"rss","tool":"herdr_link_start","input":{"name":"x","kind":"pi","args":["#],
        "0,",
        n,
        &["0]}}"],
    );
    let (r, kib) = peak_growth(&used, a.tool_call);
    check("1 MiB of integers in args", &r, kib, "INVALID_REQUEST");
    let unknown = c_text(
        &[
            r#"{"session":"rss","tool":"herdr_link_start","input":{"name":"x","kind":"pi","args":[],"junk":["#,
        ],
        "0,",
        n,
        &["0]}}"],
    );
    let (r, kib) = peak_growth(&unknown, a.tool_call);
    // Outside Herdr here, so the gate answers first; the point is the memory.
    check(
        "1 MiB of integers in an unknown field",
        &r,
        kib,
        "NOT_IN_HERDR",
    );

    // A 50 MB action string is not echoed.
    let action = c_text(
        &[r#"{"session":"rss","tool":"herdr_link","input":{"action":""#],
        "a",
        50_000_000,
        &[r#""}}"#],
    );
    let (r, kib) = peak_growth(&action, a.tool_call);
    check("50 MB action", &r, kib, "INVALID_REQUEST");
    drop(action);

    // A 50 MB session key is refused (tool call, presentation, session start) and not kept.
    let key = c_text(
        &[r#"{"session":""#],
        "k",
        50_000_000,
        &[r#"","tool":"herdr_link"}"#],
    );
    let (r, kib) = peak_growth(&key, a.tool_call);
    check("50 MB session key (tool call)", &r, kib, "INVALID_REQUEST");
    let pkey = c_text(
        &[r#"{"session":""#],
        "k",
        50_000_000,
        &[r#"","style":"mcp"}"#],
    );
    let (r, kib) = peak_growth(&pkey, a.presentation);
    check(
        "50 MB session key (presentation)",
        &r,
        kib,
        "INVALID_REQUEST",
    );
    drop(pkey);
    let raw_key = c_text(&[], "k", 50_000_000, &[]);
    let rss_before = status_kib("VmRSS:");
    // SAFETY: valid C strings.
    unsafe {
        (a.session_start)(raw_key.as_ptr());
        assert_eq!((a.is_active)(raw_key.as_ptr()), 0);
    }
    drop(raw_key);
    drop(key);
    let rss_after = status_kib("VmRSS:");
    // Our two 50 MB strings are gone; a copy kept by the library would hold ~48 MiB back.
    assert!(
        rss_after + 80 * 1024 < rss_before + MAX_SESSION_KEY_BYTES as u64,
        "the key was kept: RSS {rss_before} KiB before release, {rss_after} KiB after"
    );
    eprintln!("{}", report.join("\n"));
}
