//! An in-process host's Bash guard knows when its commands run `herdr` through the shim: once
//! the host asked `hl_command_env` inside Herdr with the shim installed (as the Pi extension and
//! the OpenCode plugin do for every command), `hl_bash_guard` leaves a `herdr` whose arguments
//! the text cannot know to the shim, which judges the real argv at exec; what the text shows
//! surely waits stays blocked; without the wiring, or with the shim gone, the cautious verdict
//! stays. The wiring is per process, so this has its own test binary.

use serde_json::json;
use test_support::world::{abi, serial, World};

/// Not fixed by the text: the shim's to judge where it is in place.
const UNKNOWN: &str = "herdr \"$@\"";
/// A wait the text shows.
const WAIT: &str = "herdr agent wait reviewer";

#[test]
fn the_guard_leaves_unknown_arguments_to_the_shim_once_the_host_wired_it() {
    let _g = serial();
    let _w = World::standard();
    let data = std::env::temp_dir().join(format!("herdr-link-exec-layer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let shim = data.join("herdr-link/shim");
    std::fs::create_dir_all(&shim).unwrap();
    std::env::set_var("XDG_DATA_HOME", &data);
    let a = abi();
    a.start("s");
    assert_eq!(a.tool("s", "herdr_link", json!({}))["ok"], true);
    let env = |path: &str| a.take(call(a, &json!({ "PATH": path }).to_string()));

    // The host asked before the shim was installed: nothing wired, cautious.
    assert_eq!(env("/usr/bin"), json!({}));
    assert_ne!(a.guard("s", UNKNOWN).0, 0);

    // Installed and asked: the unknown is the shim's, the wait still blocked here.
    std::fs::write(shim.join("herdr"), "").unwrap();
    assert_ne!(a.guard("s", UNKNOWN).0, 0, "not yet asked since");
    assert!(env("/usr/bin")["PATH"].is_string());
    assert_eq!(a.guard("s", UNKNOWN), (0, None));
    assert_eq!(a.guard("s", WAIT).0, 2);
    assert_eq!(a.guard("s", "ls").0, 0);

    // The shim removed: cautious again.
    std::fs::remove_file(shim.join("herdr")).unwrap();
    assert_ne!(a.guard("s", UNKNOWN).0, 0);
    a.end("s");
    std::env::remove_var("XDG_DATA_HOME");
    let _ = std::fs::remove_dir_all(&data);
}

/// `hl_command_env(request)`, the result not yet released.
fn call(a: &test_support::world::Abi, request: &str) -> *mut std::ffi::c_char {
    let f = a.command_env.expect("the library has hl_command_env");
    let c = std::ffi::CString::new(request).unwrap();
    // SAFETY: a valid C string; the caller releases the result.
    unsafe { f(c.as_ptr()) }
}
