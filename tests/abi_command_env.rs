//! `hl_command_env`: what a host sets in its shell commands' environment so that every `herdr`
//! they start meets the herdr shim — PATH with the shim first, `HERDR_BIN_PATH` naming the shim
//! with the real Herdr kept in `HERDR_LINK_HERDR` — inside Herdr, when the shim is installed, and
//! nothing twice. Each case runs this test binary again as a child with the environment it needs
//! (the library reads its own process's environment), so nothing here sets a variable in the test
//! process.

use std::ffi::{c_char, CStr, CString};
use std::process::Command;

use serde_json::{json, Map, Value};
use test_support::world::abi;

/// The child's side: prints `hl_command_env($CASE_REQUEST)`, and the answer to the request with
/// that answer applied (which must be `{}`).
#[test]
fn child() {
    let Ok(request) = std::env::var("CASE_REQUEST") else {
        return; // run directly: nothing to do
    };
    let a = abi();
    let f = a.command_env.expect("the library has hl_command_env");
    let call = |req: &str| -> Option<String> {
        let c = CString::new(req).unwrap();
        // SAFETY: a valid C string; the result is released with hl_free.
        let out = unsafe { f(c.as_ptr()) };
        if out.is_null() {
            return None;
        }
        let text = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_string();
        unsafe { (a.free)(out) };
        Some(text)
    };
    let Some(once) = call(&request) else {
        println!("ONCE=NULL");
        return;
    };
    let mut applied: Map<String, Value> = serde_json::from_str(&request).unwrap();
    let set: Map<String, Value> = serde_json::from_str(&once).unwrap();
    applied.extend(set);
    println!("ONCE={once}");
    println!(
        "TWICE={}",
        call(&Value::Object(applied).to_string()).unwrap()
    );
    // SAFETY: NULL and invalid UTF-8 are ordinary bad input.
    assert!(unsafe { f(std::ptr::null()) }.is_null());
    let bad = [b'{', 0xffu8, b'}', 0];
    assert!(unsafe { f(bad.as_ptr() as *const c_char) }.is_null());
}

/// Runs [`child`] with `env` and `request` (and nothing else); returns (once, twice) as JSON,
/// `twice` `Null` when the library answered NULL.
fn run(env: &[(&str, &str)], request: &str) -> (Value, Value) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env_clear()
        .envs(
            std::env::var("HERDR_LINK_LIB")
                .ok()
                .map(|l| ("HERDR_LINK_LIB", l)),
        )
        .envs(env.iter().copied())
        .env("CASE_REQUEST", request)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.split_once(k).map(|(_, v)| v.to_string()))
    };
    let once = field("ONCE=").unwrap_or_else(|| panic!("no ONCE in {text}"));
    if once == "NULL" {
        return (Value::Null, Value::Null);
    }
    let twice = field("TWICE=").unwrap_or_else(|| panic!("no TWICE in {text}"));
    (
        serde_json::from_str(&once).unwrap(),
        serde_json::from_str(&twice).unwrap(),
    )
}

#[test]
fn the_shim_goes_first_inside_herdr_once_and_only_when_installed() {
    let data = std::env::temp_dir().join(format!("herdr-link-cmdenv-{}", std::process::id()));
    let shim = data.join("herdr-link/shim");
    let shim_bin = shim.join("herdr").display().to_string();
    let _ = std::fs::remove_dir_all(&data);
    let data_s = data.display().to_string();
    let inside = [("HERDR_ENV", "1"), ("XDG_DATA_HOME", data_s.as_str())];
    let outside = [("XDG_DATA_HOME", data_s.as_str())];
    let plain = json!({"PATH": "/usr/bin:/bin"}).to_string();
    let with_bin = json!({"PATH": "/usr/bin:/bin", "HERDR_BIN_PATH": "/opt/herdr"}).to_string();

    // Not installed: nothing to change.
    assert_eq!(run(&inside, &with_bin), (json!({}), json!({})));

    std::fs::create_dir_all(&shim).unwrap();
    std::fs::write(shim.join("herdr"), "").unwrap();
    let first = format!("{}:/usr/bin:/bin", shim.display());
    assert_eq!(
        run(&inside, &plain),
        (json!({ "PATH": first }), json!({})),
        "first, once; Herdr before 0.8.2 sets no HERDR_BIN_PATH and none is made up"
    );
    assert_eq!(
        run(&inside, &with_bin),
        (
            json!({"PATH": first, "HERDR_BIN_PATH": shim_bin, "HERDR_LINK_HERDR": "/opt/herdr"}),
            json!({})
        ),
        "HERDR_BIN_PATH names the shim, the real Herdr is kept"
    );
    // Outside Herdr: nothing to change.
    assert_eq!(run(&outside, &with_bin), (json!({}), json!({})));

    // A command that put a directory before the shim: first again. An empty or missing PATH gets
    // the shim alone.
    let later = format!("/usr/bin:{}", shim.display());
    assert_eq!(
        run(&inside, &json!({ "PATH": later }).to_string()).0,
        json!({ "PATH": format!("{}:{later}", shim.display()) })
    );
    let alone = json!({ "PATH": shim.display().to_string() });
    assert_eq!(run(&inside, &json!({"PATH": ""}).to_string()).0, alone);
    assert_eq!(run(&inside, "{}").0, alone);
    assert_eq!(run(&inside, r#"{"PATH": null}"#).0, alone);

    // HOME's default data directory when XDG_DATA_HOME is unset.
    let home = data.join("home");
    let home_shim = home.join(".local/share/herdr-link/shim");
    std::fs::create_dir_all(&home_shim).unwrap();
    std::fs::write(home_shim.join("herdr"), "").unwrap();
    let home_s = home.display().to_string();
    let by_home = [("HERDR_ENV", "1"), ("HOME", home_s.as_str())];
    assert_eq!(
        run(&by_home, &json!({"PATH": "/bin"}).to_string()).0,
        json!({ "PATH": format!("{}:/bin", home_shim.display()) })
    );

    // Bad requests are NULL, never a guess.
    for bad in [
        "",
        "[]",
        "\"PATH\"",
        r#"{"PATH": 3}"#,
        r#"{"HERDR_BIN_PATH": ["x"]}"#,
    ] {
        assert_eq!(run(&inside, bad).0, Value::Null, "{bad:?}");
    }
    let _ = std::fs::remove_dir_all(&data);
}
