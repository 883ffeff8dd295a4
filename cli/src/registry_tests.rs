//! The host registry is wired everywhere: every descriptor of [`crate::host::HOSTS`] is taken by
//! `setup` (whose plan writes its server and guard hook), by `guard --host` (which reads a shell
//! call in the descriptor's input shape and denies it its way), by doctor (whose registrations
//! see what setup wrote), by the plugin manifest and actions, by the library's MCP naming, and
//! is named by every usage text that lists hosts. A host missing from any of them fails here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use herdr_link::presentation::{McpHost, MCP_HOSTS};
use serde_json::json;

use crate::activation::Lookup;
use crate::host::{Descriptor, HOSTS};
use crate::{hook, plugin_action, setup};

/// The words of `text` (runs of letters, digits, `_` and `-`).
fn words(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// The `|`-separated names in the first `open`…`close` span of the line of `text` holding
/// `marker`.
fn listed<'a>(text: &'a str, marker: &str, open: &str, close: &str) -> BTreeSet<&'a str> {
    let line = text.lines().find(|l| l.contains(marker)).expect(marker);
    let rest = &line[line.find(marker).unwrap() + marker.len()..];
    let rest = &rest[rest.find(open).unwrap() + open.len()..];
    rest[..rest.find(close).unwrap_or(rest.len())]
        .split('|')
        .collect()
}

fn names(keep: impl Fn(&Descriptor) -> bool) -> BTreeSet<&'static str> {
    HOSTS.iter().filter(|d| keep(d)).map(|d| d.name).collect()
}

/// A private config root for one host's setup run.
fn places(root: &Path) -> setup::Places {
    let p = |rel: &str| root.join(rel);
    setup::Places {
        home: p("home"),
        codex_home: p("home/.codex"),
        opencode: p("home/.config/opencode"),
        gemini: p("home/.gemini"),
        qwen: p("home/.qwen"),
        copilot: p("home/.copilot"),
        factory: p("home/.factory"),
        cline: p("home/.cline"),
        cline_data: p("home/.cline/data"),
        kimi: p("home/.kimi-code"),
        data: p("home/.local/share"),
        shell: Some("/bin/bash".into()),
    }
}

/// Runs `setup <host>`'s plan on a private root and writes what it changes.
fn set_up(d: &Descriptor, root: &Path) -> setup::Plan {
    std::fs::create_dir_all(root).unwrap();
    let mut args = vec![d.name.to_string()];
    if d.name == "pi" {
        args.extend(["--package".into(), root.display().to_string()]);
        args.extend(["--pi".into(), "/bin/true".into()]);
    }
    let o = setup::parse(&args).unwrap().unwrap();
    assert_eq!(o.host, d.host, "setup {}", d.name);
    let places = places(root);
    let plan = setup::plan(
        &o,
        &setup::Ctx {
            places: &places,
            project: None,
            bin: Path::new("/opt/x/herdr-link"),
            pin: None,
        },
    )
    .unwrap_or_else(|e| panic!("setup {}: {e}", d.name));
    for c in &plan.changes {
        if let Some(text) = &c.after {
            std::fs::create_dir_all(c.path.parent().unwrap()).unwrap();
            std::fs::write(&c.path, text).unwrap();
        }
    }
    plan
}

/// A shell call of `d`'s hook running `command`, built from the descriptor's input shape.
fn hook_input(d: &Descriptor, command: &str) -> Vec<u8> {
    let h = &d.hook.unwrap().input;
    let command = if h.command_list {
        json!([command])
    } else {
        json!(command)
    };
    let mut call = json!({ h.tool: h.shell, h.args: { h.command: command } });
    if let Some(key) = h.call {
        call = json!({ key: call });
    }
    call[h.session] = json!("s1");
    serde_json::to_vec(&call).unwrap()
}

#[test]
fn every_host_descriptor_is_wired_everywhere() {
    let root = std::env::temp_dir().join(format!("herdr-link-registry-{}", std::process::id()));
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../herdr-plugin.toml"))
            .unwrap();
    let manifest: toml_edit::DocumentMut = manifest.parse().unwrap();
    let action_ids: BTreeSet<&str> = manifest["actions"]
        .as_array_of_tables()
        .unwrap()
        .iter()
        .filter_map(|t| t.get("id")?.as_str())
        .collect();
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    for d in HOSTS {
        assert_eq!(d.host.descriptor(), d, "one descriptor for {}", d.name);
        let dir = root.join(d.name);
        let _ = std::fs::remove_dir_all(&dir);

        // setup: its plan wires the guard hook (or Pi's installer) and the server.
        let plan = set_up(d, &dir);
        let written: String = plan
            .changes
            .iter()
            .filter_map(|c| c.after.clone())
            .collect();
        if d.hook.is_some() {
            // A command line, or the OpenCode plugin's argv.
            assert!(
                written.contains(&format!("guard --host {} --shim", d.name))
                    || written.contains(&format!("\"guard\", \"--host\", \"{}\"", d.name)),
                "setup {} writes no guard hook: {written}",
                d.name
            );
        } else {
            assert!(!plan.commands.is_empty(), "setup {} runs nothing", d.name);
        }
        if d.mcp.is_some() {
            assert!(
                written.contains("herdr_link"),
                "setup {}: {written}",
                d.name
            );
        }

        // guard: `--host` takes it, reads its input shape, and denies its way.
        let guard = super::parse(&args(&["guard", "--host", d.name]));
        if d.hook.is_some() {
            assert!(guard.is_ok(), "guard --host {}: {guard:?}", d.name);
            let wait = hook_input(d, "herdr agent wait w1-2 --status done");
            let decision = hook::decide(d.host, &wait, || false, |_| Ok(Lookup::Active));
            let reason = decision
                .block
                .unwrap_or_else(|| panic!("{} not blocked: {decision:?}", d.name));
            let (out, err, status) = hook::answer(d.host, Some(reason), false);
            assert!(
                status == hook::EXIT_BLOCK || out.contains(reason) || out.contains("exit 1"),
                "{}: {out} {err} {status}",
                d.name
            );
            let ls = hook_input(d, "ls");
            assert_eq!(
                hook::decide(d.host, &ls, || false, |_| Ok(Lookup::Active)).block,
                None
            );
        } else {
            assert!(guard.is_err(), "guard --host {} has no hook", d.name);
        }

        // doctor: a host it recognises has registrations, and they see what setup wrote.
        let regs = setup::registrations(d.host, &places(&dir), &dir.join("project"));
        if d.doctor_marker.is_some() {
            assert!(regs.is_some(), "doctor cannot check {}", d.name);
        }
        if let Some(regs) = regs {
            assert!(
                regs.iter().any(|r| r.server && r.guard),
                "doctor does not see {}'s setup: {regs:?}",
                d.name
            );
        }

        // The plugin manifest and its actions.
        for verb in ["setup", "uninstall"] {
            let id = format!("{verb}-{}", d.name);
            assert!(action_ids.contains(id.as_str()), "manifest lacks {id}");
            let action = plugin_action::Action::parse(&id).unwrap();
            assert_eq!((action.host, action.title), (d.name, d.title));
            assert!(words(plugin_action::USAGE).contains(id.as_str()), "{id}");
        }

        // The library's MCP naming.
        assert_eq!(McpHost::parse(d.name), d.mcp, "{}", d.name);
        if let Some(m) = d.mcp {
            assert_eq!(m.form().name, Some(d.name));
            let mcp = super::parse(&args(&["mcp", "--host", d.name]));
            assert!(mcp.is_ok(), "mcp --host {}: {mcp:?}", d.name);
        }
    }
    let _ = std::fs::remove_dir_all(&root);

    // No action, no MCP host name outside the registry (AGY is an MCP host without setup).
    for id in action_ids
        .iter()
        .filter(|w| w.starts_with("setup-") || w.starts_with("uninstall-"))
    {
        assert!(plugin_action::Action::parse(id).is_some(), "{id}");
    }
    for f in MCP_HOSTS {
        if let Some(name) = f.name.filter(|n| *n != "agy") {
            assert_eq!(
                crate::host::Host::parse(name).and_then(|h| h.descriptor().mcp),
                Some(f.host)
            );
        }
    }

    // The usage texts list exactly the registry's hosts.
    let all = names(|_| true);
    let hooked = names(|d| d.hook.is_some());
    let mcp: BTreeSet<&str> = MCP_HOSTS.iter().filter_map(|f| f.name).collect();
    assert_eq!(listed(setup::USAGE, "herdr-link setup", "<", ">"), all);
    assert_eq!(listed(super::USAGE, "herdr-link setup", "<", ">"), all);
    assert_eq!(listed(super::GUARD_HELP, "guard --host", " ", " "), hooked);
    for name in &all {
        assert!(
            setup::USAGE
                .lines()
                .any(|l| l.starts_with(&format!("  {name} "))),
            "setup --help does not describe {name}"
        );
    }
    let guard_line: String = super::USAGE
        .split("herdr-link guard")
        .nth(1)
        .unwrap()
        .split("herdr-link doctor")
        .next()
        .unwrap()
        .into();
    assert!(
        hooked.iter().all(|n| words(&guard_line).contains(n)),
        "{guard_line}"
    );
    let mcp_host = super::MCP_HELP
        .rsplit("--host HOST")
        .next()
        .unwrap()
        .split("--server-name")
        .next()
        .unwrap();
    assert_eq!(
        words(mcp_host)
            .intersection(&mcp.iter().copied().chain(all.iter().copied()).collect())
            .copied()
            .collect::<BTreeSet<_>>(),
        mcp,
        "{mcp_host}"
    );
}

/// Codex starts the MCP server with a clean environment: the server entry setup writes
/// forwards every `HERDR_LINK_*` setting the library's settings module reads, found in its
/// source (not a copied list), and the operator log's place.
#[test]
fn codex_forwards_every_setting_the_library_reads() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../src");
    let mut read = BTreeSet::new();
    for file in ["env.rs", "oplog.rs"] {
        let text = std::fs::read_to_string(src.join(file)).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        for piece in code.split('"').skip(1).step_by(2) {
            if piece.starts_with("HERDR_LINK_")
                && piece[11..]
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b == b'_')
            {
                read.insert(piece.to_string());
            }
        }
    }
    assert!(read.len() >= 9, "{read:?}");
    let codex = crate::host::Host::parse("codex").unwrap().descriptor();
    assert!(codex.forwards_variables);
    let root: PathBuf =
        std::env::temp_dir().join(format!("herdr-link-registry-codex-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    set_up(codex, &root);
    let config = std::fs::read_to_string(root.join("home/.codex/config.toml")).unwrap();
    let doc: toml_edit::DocumentMut = config.parse().unwrap();
    let forwarded: BTreeSet<String> = doc["mcp_servers"]["herdr_link"]["env_vars"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    let missing: Vec<_> = read.difference(&forwarded).collect();
    assert!(
        missing.is_empty(),
        "Codex does not forward {missing:?}: {config}"
    );
    let _ = std::fs::remove_dir_all(&root);
}
