//! Activation presence is started in one place: a process that loads the library (the C ABI)
//! starts its presence on the call that activates a session, once however many sessions
//! activate; the core's call path that the MCP server uses (`tools::call_in_style`) starts
//! none, so the server runs only the one it starts for its host (`cli/tests/guard_hook.rs`).
//! Presence is per process, so this has its own test binary.
#![cfg(target_os = "linux")]

use test_support::world as common;

use std::collections::BTreeSet;

use common::{abi, serial, World};
use herdr_link::presentation::Style;
use serde_json::{json, Map};

/// The presence sockets this process holds: its own socket descriptors bound (as
/// `/proc/net/unix` shows) to a path in the presence directory.
fn own_presence_sockets() -> Vec<String> {
    let inodes: BTreeSet<String> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().to_string();
            Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
        })
        .collect();
    let prefix = format!("{}/", herdr_link::presence::dir().display());
    let mut names: Vec<String> = std::fs::read_to_string("/proc/net/unix")
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (inode, name) = (f.get(6)?, f.get(7)?);
            (inodes.contains(*inode) && name.starts_with(&prefix)).then(|| name.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn presence_starts_once_and_only_on_the_c_abi_path() {
    let _g = serial();
    let _w = World::standard();
    assert_eq!(own_presence_sockets(), Vec::<String>::new(), "nothing yet");

    // The MCP server's way into the core: the session activates, no presence starts (the
    // server answers for its host itself).
    let out =
        herdr_link::tools::call_in_style(Some(Style::Mcp), "mcp", "herdr_link", Map::new(), None);
    assert!(out.tools_changed && out.active);
    assert_eq!(own_presence_sockets(), Vec::<String>::new());

    // A process that loads the library: the activating call starts its presence before it
    // answers.
    let a = abi();
    a.start("one");
    let r = a.tool("one", "herdr_link", json!({}));
    assert_eq!(r["tools_changed"], true, "{r}");
    let first = own_presence_sockets();
    assert_eq!(first.len(), 1, "{first:?}");

    // More calls and more sessions: still that one.
    assert_eq!(a.tool("one", "herdr_link", json!({}))["ok"], true);
    a.start("two");
    let r = a.tool("two", "herdr_link_peers", json!({}));
    assert_eq!(r["tools_changed"], true, "{r}");
    assert_eq!(own_presence_sockets(), first);
    a.end("one");
    a.end("two");
}
