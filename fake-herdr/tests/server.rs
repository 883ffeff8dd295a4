//! The server the CLI meets: `herdr fake server stop|start|protocol N` put the fake where real
//! Herdr is with no server at its socket (`server_not_running`) or with a server of another
//! protocol (`protocol_mismatch`), for every socket command; usage errors and `--version` come
//! first, as in Herdr (the CLI pings the server only after the command line parsed).

mod common;
use common::Fake;
use serde_json::Value;

const WORLD: &str = r#"{"workspaces":[{"cwd":"/r","tabs":[{"panes":[{"agent":"pi","name":"brain"},{"agent":"pi","name":"worker"},{}]}]}]}"#;

/// Every socket command herdr-link runs, in Link's argv forms.
const COMMANDS: &[&[&str]] = &[
    &["agent", "get", "brain"],
    &["agent", "list"],
    &["agent", "prompt", "worker", "hello"],
    &["agent", "rename", "w1:p3", "nova"],
    &[
        "agent", "start", "nova", "--kind", "pi", "--pane", "w1:p3", "--",
    ],
    &["pane", "get", "w1:p1"],
    &["pane", "list", "--workspace", "w1"],
    &[
        "pane",
        "split",
        "w1:p1",
        "--direction",
        "right",
        "--cwd",
        "/r",
        "--no-focus",
    ],
    &["pane", "close", "w1:p2"],
    &[
        "tab",
        "create",
        "--workspace",
        "w1",
        "--cwd",
        "/r",
        "--label",
        "x",
        "--no-focus",
    ],
    &["tab", "close", "w1:t1"],
];

/// Exit 1, nothing on stdout, and exactly Herdr's typed line on stderr: `id` first.
fn typed_error(f: &Fake, args: &[&str], envs: &[(&str, &str)]) -> (String, String) {
    let o = f.run_env(args, envs);
    assert_eq!(o.code, Some(1), "{args:?}: {}", o.stderr);
    assert_eq!(o.stdout, "", "{args:?}");
    let id = format!("cli:{}:{}", args[0], args[1]);
    let prefix = format!("{{\"id\":\"{id}\",\"error\":{{\"code\":\"");
    assert!(o.stderr.starts_with(&prefix), "{args:?}: {}", o.stderr);
    assert!(o.stderr.ends_with("}}\n") && o.stderr.lines().count() == 1);
    let v: Value = serde_json::from_str(&o.stderr).unwrap();
    (
        v["error"]["code"].as_str().unwrap().to_string(),
        v["error"]["message"].as_str().unwrap().to_string(),
    )
}

#[test]
fn a_stopped_server_answers_server_not_running_and_keeps_the_world() {
    let (f, _) = Fake::with_world("srv-stop", WORLD);
    let before = f.ok_admin(&["fake", "dump"]);
    let v = f.ok_admin(&["fake", "server", "stop"]);
    assert_eq!(v["running"], false);
    let sock = f.dir.join("h.sock").display().to_string();
    for args in COMMANDS {
        let (code, message) = typed_error(&f, args, &[("HERDR_SOCKET_PATH", &sock)]);
        assert_eq!(code, "server_not_running", "{args:?}");
        assert_eq!(
            message,
            format!("no herdr server is running at {sock}; run `herdr` to start or attach it")
        );
    }
    // The default socket and a named session, as Herdr resolves them.
    let (_, m) = typed_error(&f, &["agent", "list"], &[]);
    assert!(m.contains(&format!(
        "{}/.config/herdr/herdr.sock; run `herdr`",
        f.dir.display()
    )));
    let (_, m) = typed_error(&f, &["agent", "list"], &[("HERDR_SESSION", "work")]);
    assert!(
        m.ends_with(
            "sessions/work/herdr.sock; run `herdr session attach work` to start or attach it"
        ),
        "{m}"
    );
    // The command line is parsed first; --version needs no server.
    assert_eq!(
        f.usage(&["agent", "start", "nova", "--kind", "nosuch", "--pane", "w1:p3", "--"]),
        "unsupported interactive agent kind: nosuch"
    );
    assert_eq!(
        f.usage(&["agent", "get"]),
        "usage: herdr agent get <target>"
    );
    assert_eq!(f.run(&["--version"]).code, Some(0));
    // Nothing happened to the world, nothing was typed; starting the server brings it back.
    assert!(f
        .ok_admin(&["fake", "prompts", "--now"])
        .as_array()
        .unwrap()
        .is_empty());
    f.ok_admin(&["fake", "server", "start"]);
    let mut after = f.ok_admin(&["fake", "dump"]);
    after["faults"] = before["faults"].clone();
    assert_eq!(after, before);
    assert_eq!(
        f.ok(&["agent", "get", "brain"])["result"]["agent"]["name"],
        "brain"
    );
    // Every refused call is in the argv log, with its exit status.
    let refused = f.log().iter().filter(|l| l["exit"] == 1).count();
    assert_eq!(refused, COMMANDS.len() + 2);
}

#[test]
fn a_server_of_another_protocol_answers_protocol_mismatch() {
    let (f, _) = Fake::with_world("srv-proto", WORLD);
    let sock = "/run/user/1000/h.sock";
    // Herdr 0.8.0's CLI speaks protocol 19; a 0.8.2 server speaks 20 (an older client).
    let v = f.ok_admin(&["fake", "server", "protocol", "20"]);
    assert_eq!(
        (v["client_protocol"].as_u64(), v["protocol"].as_u64()),
        (Some(19), Some(20))
    );
    for args in COMMANDS {
        let (code, message) = typed_error(&f, args, &[("HERDR_SOCKET_PATH", sock)]);
        assert_eq!(code, "protocol_mismatch", "{args:?}");
        assert_eq!(
            message,
            "client protocol 19 is older than server protocol 20; upgrade the Herdr client before using this command"
        );
    }
    // Herdr 0.8.2's CLI against a 0.8.0 server: a newer client, told to restart the server.
    let envs = [("HERDR_SOCKET_PATH", sock), ("HERDR_FAKE_VERSION", "0.8.2")];
    f.ok_admin(&["fake", "server", "protocol", "19"]);
    let (code, message) = typed_error(&f, &["agent", "list"], &envs);
    assert_eq!(code, "protocol_mismatch");
    assert_eq!(
        message,
        format!("client protocol 20 is newer than server protocol 19; restart the Herdr server before using this command. Stop the old server to use the new version.\nStopping exits pane processes.\nRun `HERDR_SOCKET_PATH={sock} herdr server stop`, then restart Herdr with the same socket override.")
    );
    // A stopped server is not running, whatever its protocol.
    f.ok_admin(&["fake", "server", "stop"]);
    assert_eq!(
        typed_error(&f, &["agent", "list"], &envs).0,
        "server_not_running"
    );
    f.ok_admin(&["fake", "server", "start"]);
    f.ok_admin(&["fake", "server", "protocol", "--unset"]);
    assert_eq!(f.ok(&["agent", "list"])["result"]["type"], "agent_list");
    assert_eq!(f.run(&["fake", "server", "protocol", "x"]).code, Some(2));
}

#[test]
fn a_fresh_world_has_a_running_server() {
    let (f, _) = Fake::with_world("srv-fresh", WORLD);
    f.ok_admin(&["fake", "server", "stop"]);
    f.world(WORLD);
    assert_eq!(f.ok_admin(&["fake", "server"])["running"], true);
    assert_eq!(f.ok(&["agent", "list"])["result"]["type"], "agent_list");
}
