//! The C ABI: a thin layer of C strings over [`crate::tools`], [`crate::session`] and
//! [`crate::guard`]. No protocol logic lives here. Every exported function checks NULL and UTF-8
//! first and runs inside [`boundary`], so a panic never unwinds into the host.

use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use serde_json::Value;

use crate::error::{INTERNAL_ERROR, INVALID_REQUEST};
use crate::guard::SendForm;
use crate::presentation::Style;
use crate::{guard, identity, session, tools};

/// Runs `f`, turning a panic into `fallback()`.
fn boundary<T>(fallback: impl FnOnce() -> T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| fallback())
}

/// Reads a C string argument: `Err` names the problem for NULL or invalid UTF-8.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that stays valid for `'a`.
unsafe fn text<'a>(p: *const c_char, what: &str) -> Result<&'a str, String> {
    if p.is_null() {
        return Err(format!("{what} is NULL"));
    }
    // SAFETY: the caller promises a NUL-terminated string.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| format!("{what} is not valid UTF-8"))
}

/// Hands a JSON document to the host as a string it must release with `hl_free`.
fn give(v: &Value) -> *mut c_char {
    // serde_json escapes every control character, so the text holds no NUL.
    CString::new(v.to_string())
        .unwrap_or_else(|_| c"{\"ok\":false}".to_owned())
        .into_raw()
}

fn internal_error() -> *mut c_char {
    give(&tools::failure_json(
        INTERNAL_ERROR.code,
        INTERNAL_ERROR.text,
    ))
}

/// Registers `session` (or resets it) as dormant and starts the self-identity bootstrap in the
/// background. Never blocks. NULL, invalid UTF-8, an empty key or one longer than 1024 bytes is
/// ignored (never stored).
///
/// # Safety
/// `session` is NULL or a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hl_session_start(session: *const c_char) {
    boundary(
        || (),
        || {
            // SAFETY: forwarded from the caller's contract.
            let Ok(key) = (unsafe { text(session, "session") }) else {
                return;
            };
            if !crate::limits::session_key_ok(key) {
                return;
            }
            session::start(key);
            let _ = identity::bootstrap_in_background(key);
        },
    )
}

/// Forgets `session`. NULL or invalid UTF-8 is ignored.
///
/// # Safety
/// `session` is NULL or a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hl_session_end(session: *const c_char) {
    boundary(
        || (),
        || {
            // SAFETY: forwarded from the caller's contract.
            if let Ok(key) = unsafe { text(session, "session") } {
                session::end(key);
            }
        },
    )
}

/// Runs one tool call. `request_json` is
/// `{"session":S,"tool":T,"input":{...},"context_dir":"/abs/dir","style":Y}`; the answer is always
/// a JSON document (`{"ok":true,"result",...}` or `{"ok":false,"error":{"code","message"},...}`)
/// that the caller releases with `hl_free`.
///
/// `style` (optional) is the presentation style the host shows its model, as in
/// `hl_presentation`: `"deferred"`, `"gateway"` or `"mcp"`. It decides what the gateway
/// (`"tool":"herdr_link"`) does with an `action`: in `"gateway"` and `"mcp"` it dispatches
/// `{"action":"start|peers|send|close","arguments":{...}}` to that capability; in `"deferred"`
/// it only activates and ignores its input (the host registers the Tier 1 tools itself). A host
/// that omits `style` gets dispatch; a deferred-style host must send `"style":"deferred"`.
///
/// The response of the call that activated the session (success or Link error) and of every
/// later activation call also holds `"contract"`: the Contract of `style` (the bare Contract
/// without a style). Show it to the model together with that result, so its next step sees the
/// rules; no other response holds it.
///
/// # Safety
/// `request_json` is NULL or a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hl_tool_call(request_json: *const c_char) -> *mut c_char {
    boundary(internal_error, || {
        // SAFETY: forwarded from the caller's contract.
        match unsafe { text(request_json, "request") } {
            Ok(request) => give(&tools::call_json(request)),
            Err(m) => give(&tools::failure_json(INVALID_REQUEST, &m)),
        }
    })
}

/// 1 when `session` is active; 0 when dormant, unknown, NULL or not UTF-8.
///
/// # Safety
/// `session` is NULL or a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hl_is_active(session: *const c_char) -> i32 {
    boundary(
        || 0,
        || {
            // SAFETY: forwarded from the caller's contract.
            match unsafe { text(session, "session") } {
                Ok(key) => i32::from(session::is_active(key)),
                Err(_) => 0,
            }
        },
    )
}

/// Judges a Bash command of `session`: 0 allow, 1 block, 2 block and end the turn. Dormant,
/// unknown or unreadable sessions always get 0. When `reason_out` is not NULL it receives the
/// reason string on 1/2 (release it with `hl_free`) and NULL on 0. An invalid-UTF-8 command is
/// judged on its lossy text. The reason's words hold in every presentation style; a host that
/// knows its style gets the reason in its own terms from `hl_bash_guard_in_style`. Once this
/// process's host has asked `hl_command_env` inside Herdr with the herdr shim installed (its
/// commands then run `herdr` through the shim, which judges the real argv at exec), a `herdr`
/// whose arguments the command text cannot know is allowed here and left to the shim, while the
/// shim is there; otherwise it is judged cautiously.
///
/// # Safety
/// `session` and `command` are NULL or valid NUL-terminated strings; `reason_out` is NULL or
/// points to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn hl_bash_guard(
    session: *const c_char,
    command: *const c_char,
    reason_out: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded from the caller's contract.
    unsafe { bash_guard(session, command, SendForm::Either, reason_out) }
}

/// `hl_bash_guard` for a host that presents Link in `style` (`"deferred"`, `"gateway"` or
/// `"mcp"`, the value it gives `hl_presentation`): the same verdict, and a block reason that
/// names the way to send the model has there (`deferred`: the `herdr_link_send` tool;
/// `gateway`: the `herdr_link` tool's `send` action; `mcp`: both). NULL, an unknown style or
/// invalid UTF-8 gives the words of `hl_bash_guard`; the verdict never depends on `style`.
///
/// # Safety
/// `session`, `command` and `style` are NULL or valid NUL-terminated strings; `reason_out` is
/// NULL or points to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn hl_bash_guard_in_style(
    session: *const c_char,
    command: *const c_char,
    style: *const c_char,
    reason_out: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded from the caller's contract.
    let form = unsafe { text(style, "style") }
        .ok()
        .and_then(Style::parse)
        .map_or(SendForm::Either, Style::send_form);
    // SAFETY: forwarded from the caller's contract.
    unsafe { bash_guard(session, command, form, reason_out) }
}

/// The body of both guard functions; `form` picks the reason's words.
///
/// # Safety
/// As `hl_bash_guard`.
unsafe fn bash_guard(
    session: *const c_char,
    command: *const c_char,
    form: SendForm,
    reason_out: *mut *mut c_char,
) -> i32 {
    boundary(
        || 0,
        || {
            if !reason_out.is_null() {
                // SAFETY: the caller provides writable storage when not NULL.
                unsafe { *reason_out = std::ptr::null_mut() };
            }
            // SAFETY: forwarded from the caller's contract.
            let active =
                matches!(unsafe { text(session, "session") }, Ok(k) if session::is_active(k));
            if !active || command.is_null() {
                return 0;
            }
            // SAFETY: non-NULL and NUL-terminated per the caller's contract.
            let bytes = unsafe { CStr::from_ptr(command) }.to_bytes();
            let (_, verdict) = guard::judge_layered(
                &String::from_utf8_lossy(bytes),
                crate::paths::commands_run_through_shim,
            );
            if let (Some(reason), false) = (verdict.reason_for(form), reason_out.is_null()) {
                if let Ok(r) = CString::new(reason) {
                    // SAFETY: checked non-NULL above.
                    unsafe { *reason_out = r.into_raw() };
                }
            }
            verdict.code()
        },
    )
}

/// The model-visible surface now: `{"session":S,"style":"deferred"|"gateway"|"mcp","view":
/// "catalog"?}` → `{"tools":[{"name","description","input_schema"}],"contract":string|null}`.
/// In the `deferred` style every tool also carries host hints: `label` (a short UI name, e.g.
/// "Herdr Link Close"), `sequential` (true for `herdr_link_close`: a batch of tool calls that
/// holds it must run one call at a time) and, on the gateway only, `prompt_snippet` (one line a
/// host may list in its system prompt). A malformed request gives
/// `{"tools":[],"contract":null,"error":{"code":"INVALID_REQUEST","message":"INVALID_REQUEST: ..."}}`.
/// Release the result with `hl_free`.
///
/// # Safety
/// `request_json` is NULL or a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hl_presentation(request_json: *const c_char) -> *mut c_char {
    boundary(internal_error, || {
        // SAFETY: forwarded from the caller's contract.
        match unsafe { text(request_json, "request") } {
            Ok(request) => give(&tools::presentation_json(request)),
            Err(m) => give(&tools::presentation_refused(&m)),
        }
    })
}

/// Releases a string returned by this library. NULL is ignored.
///
/// # Safety
/// `s` is NULL or a pointer returned by this library and not yet released.
#[no_mangle]
pub unsafe extern "C" fn hl_free(s: *mut c_char) {
    boundary(
        || (),
        || {
            if !s.is_null() {
                // SAFETY: `s` came from CString::into_raw in this library.
                drop(unsafe { CString::from_raw(s) });
            }
        },
    )
}

/// What a host sets in its shell commands' environment so that every `herdr` they start meets
/// the herdr shim. `request_json`: `{"PATH": "...", "HERDR_BIN_PATH": "..."}`, the commands' current
/// values (each may be missing or null). Returns a JSON object of the variables to set, inside
/// Herdr (`HERDR_ENV=1`) with the shim installed (`herdr-link setup` links it under
/// `$XDG_DATA_HOME/herdr-link/shim`): `PATH` with the shim directory first, and
/// `HERDR_BIN_PATH` naming the shim with `HERDR_LINK_HERDR` keeping the real Herdr; `{}` when
/// there is nothing to change (applied to its own result it changes nothing). Release it with
/// `hl_free`. NULL for NULL, invalid UTF-8, or a request that is not such an object.
///
/// # Safety
/// `request_json` is NULL or a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn hl_command_env(request_json: *const c_char) -> *mut c_char {
    boundary(std::ptr::null_mut, || {
        // SAFETY: forwarded from the caller's contract.
        match unsafe { text(request_json, "request_json") }
            .ok()
            .and_then(tools::command_env_json)
        {
            Some(answer) => give(&answer),
            None => std::ptr::null_mut(),
        }
    })
}

/// The library version (equal to the crate version); static, never release it.
#[no_mangle]
pub extern "C" fn hl_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}
