//! `hl_command_path`: the PATH a host gives its shell commands, with the herdr shim first inside
//! Herdr when it is installed, once. Each case runs this test binary again as a child with the
//! environment it needs (the library reads its own process's environment), so nothing here sets
//! a variable in the test process.

use std::ffi::{c_char, CStr, CString};
use std::process::Command;

use test_support::world::abi;

/// The child's side: prints `hl_command_path($CASE_PATH)` and its second application.
#[test]
fn child() {
    let Ok(path) = std::env::var("CASE_PATH") else {
        return; // run directly: nothing to do
    };
    let a = abi();
    let f = a.command_path.expect("the library has hl_command_path");
    let call = |p: &str| {
        let c = CString::new(p).unwrap();
        // SAFETY: a valid C string; the result is released with hl_free.
        let out = unsafe { f(c.as_ptr()) };
        assert!(!out.is_null());
        let text = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_string();
        unsafe { (a.free)(out) };
        text
    };
    let once = call(&path);
    println!("ONCE={once}");
    println!("TWICE={}", call(&once));
    // SAFETY: NULL and invalid UTF-8 are ordinary bad input.
    assert!(unsafe { f(std::ptr::null()) }.is_null());
    let bad = [0xffu8, b'/', 0];
    assert!(unsafe { f(bad.as_ptr() as *const c_char) }.is_null());
}

/// Runs [`child`] with `env` (and nothing else) and returns (once, twice).
fn run(env: &[(&str, &str)]) -> (String, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env_clear()
        .envs(
            std::env::var("HERDR_LINK_LIB")
                .ok()
                .map(|l| ("HERDR_LINK_LIB", l)),
        )
        .envs(env.iter().copied())
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
            .find_map(|l| l.split_once(k).map(|(_, v)| v))
            .unwrap_or_else(|| panic!("no {k} in {text}"))
            .to_string()
    };
    (field("ONCE="), field("TWICE="))
}

#[test]
fn the_shim_goes_first_inside_herdr_once_and_only_when_installed() {
    let data = std::env::temp_dir().join(format!("herdr-link-cmdpath-{}", std::process::id()));
    let shim = data.join("herdr-link/shim");
    let _ = std::fs::remove_dir_all(&data);
    let data_s = data.display().to_string();
    let inside = [
        ("HERDR_ENV", "1"),
        ("XDG_DATA_HOME", data_s.as_str()),
        ("CASE_PATH", "/usr/bin:/bin"),
    ];
    // Not installed: unchanged.
    assert_eq!(
        run(&inside),
        ("/usr/bin:/bin".into(), "/usr/bin:/bin".into())
    );
    std::fs::create_dir_all(&shim).unwrap();
    std::fs::write(shim.join("herdr"), "").unwrap();
    let first = format!("{}:/usr/bin:/bin", shim.display());
    assert_eq!(run(&inside), (first.clone(), first.clone()), "first, once");
    // Outside Herdr: unchanged.
    let outside = [
        ("XDG_DATA_HOME", data_s.as_str()),
        ("CASE_PATH", "/usr/bin:/bin"),
    ];
    assert_eq!(
        run(&outside),
        ("/usr/bin:/bin".into(), "/usr/bin:/bin".into())
    );
    // Already on PATH (anywhere): unchanged; an empty PATH gets the shim alone.
    let later = format!("/usr/bin:{}", shim.display());
    let with = [
        ("HERDR_ENV", "1"),
        ("XDG_DATA_HOME", data_s.as_str()),
        ("CASE_PATH", later.as_str()),
    ];
    assert_eq!(run(&with).0, later);
    let empty = [
        ("HERDR_ENV", "1"),
        ("XDG_DATA_HOME", data_s.as_str()),
        ("CASE_PATH", ""),
    ];
    assert_eq!(run(&empty).0, shim.display().to_string());
    // HOME's default data directory when XDG_DATA_HOME is unset.
    let home = data.join("home");
    let home_shim = home.join(".local/share/herdr-link/shim");
    std::fs::create_dir_all(&home_shim).unwrap();
    std::fs::write(home_shim.join("herdr"), "").unwrap();
    let home_s = home.display().to_string();
    let by_home = [
        ("HERDR_ENV", "1"),
        ("HOME", home_s.as_str()),
        ("CASE_PATH", "/bin"),
    ];
    assert_eq!(run(&by_home).0, format!("{}:/bin", home_shim.display()));
    let _ = std::fs::remove_dir_all(&data);
}
