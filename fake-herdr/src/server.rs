//! The Herdr server as the CLI meets it: whether one is running at the socket, and which socket
//! protocol it speaks. Real Herdr's CLI pings the server before every socket command (after the
//! command line parsed) and answers `server_not_running` when nothing listens at the socket and
//! `protocol_mismatch` when the server's protocol is not its own (`src/cli.rs`,
//! `src/cli/server_not_running.rs`, `src/cli/protocol_guard.rs`, `src/session.rs`; the same in
//! 0.8.0, 0.8.2 and 0.9). Tests put the fake in these states with `herdr fake server ...`.

use serde_json::{json, Value};

use crate::cli::{no_server_message, server_not_running, typed_error, Env, Outcome};
use crate::settings::Version;
use crate::sorted;
pub use crate::state::Server;

/// The socket protocol of a Herdr version's CLI (`PROTOCOL_VERSION` in `src/protocol/wire.rs`:
/// 19 in 0.8.0, 20 in 0.8.1 and 0.8.2, 22 in 0.9).
pub fn client_protocol(version: Version) -> u32 {
    version.protocol()
}

/// `server_not_running` as `agent start` prints it when the server goes away while it waits for
/// the new agent: through a JSON value, so with its keys sorted (`error` first), exit 1.
pub fn server_not_running_sorted(id: &str, env: &Env) -> Outcome {
    let v = json!({"error": {"code": "server_not_running", "message": no_server_message(env)}, "id": id});
    Outcome {
        stderr: sorted::line(&v),
        code: 1,
        ..Outcome::default()
    }
}

/// The id of a command's first request to the server, which a refusal carries: 0.8.2's
/// `agent start` first reads the pane (`pane_terminal_id`: `cli:agent:start:pane`).
pub fn first_request_id(id: &str, version: Version) -> &str {
    if id == "cli:agent:start" && version.at_least_082() {
        "cli:agent:start:pane"
    } else {
        id
    }
}

/// What a socket command gets instead of its answer when the server is not usable: stopped, or
/// of another protocol than the CLI of `version`.
pub fn refusal(id: &str, server: &Server, version: Version, env: &Env) -> Option<Outcome> {
    let id = first_request_id(id, version);
    if server.stopped {
        return Some(server_not_running(id, env));
    }
    let client = client_protocol(version);
    match server.protocol {
        Some(p) if p != client => Some(protocol_mismatch(id, client, p, env)),
        _ => None,
    }
}

/// The `protocol_mismatch` line (`protocol_guard::mismatch_response`, printed with `id` first),
/// exit 1.
pub fn protocol_mismatch(id: &str, client: u32, server: u32, env: &Env) -> Outcome {
    let message = if client > server {
        format!(
            "client protocol {client} is newer than server protocol {server}; restart the Herdr server before using this command. {}",
            restart_guidance(env)
        )
    } else {
        format!(
            "client protocol {client} is older than server protocol {server}; upgrade the Herdr client before using this command"
        )
    };
    typed_error(id, "protocol_mismatch", &message)
}

/// `session::active_restart_after_update_guidance`: a socket override (without `--session`)
/// names itself; otherwise the session's stop and attach commands.
fn restart_guidance(env: &Env) -> String {
    let head = "Stop the old server to use the new version.\nStopping exits pane processes.\n";
    if env.session_arg.is_none() {
        if let Some(p) = &env.socket_path {
            return format!(
                "{head}Run `HERDR_SOCKET_PATH={p} herdr server stop`, then restart Herdr with the same socket override."
            );
        }
    }
    let name = env
        .session_arg
        .as_ref()
        .or(env.session_env.as_ref())
        .filter(|n| n.as_str() != "default");
    let (stop, attach) = match name {
        Some(n) => (
            format!("herdr session stop {n}"),
            format!("herdr session attach {n}"),
        ),
        None => ("herdr server stop".to_string(), "herdr".to_string()),
    };
    format!("{head}Run `{stop}`, then run `{attach}` again.")
}

/// `herdr fake server [stop|start|protocol N|protocol --unset]`: changes the simulated server and
/// returns its state (`running`, `protocol`: the server's, `client_protocol`: the CLI's).
pub fn admin(server: &mut Server, version: Version, args: &[String]) -> Result<Value, Outcome> {
    let usage =
        || Outcome::usage("usage: herdr fake server [stop|start|protocol N|protocol --unset]");
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => {}
        ["stop"] => server.stopped = true,
        ["start"] => server.stopped = false,
        ["protocol", "--unset"] => server.protocol = None,
        ["protocol", n] => server.protocol = Some(n.parse().map_err(|_| usage())?),
        _ => return Err(usage()),
    }
    let client = client_protocol(version);
    Ok(json!({
        "ok": true,
        "running": !server.stopped,
        "protocol": server.protocol.unwrap_or(client),
        "client_protocol": client,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        Env {
            socket_path: Some("/run/h.sock".into()),
            ..Env::default()
        }
    }

    fn stderr(o: &Outcome) -> String {
        String::from_utf8(o.stderr.clone()).unwrap()
    }

    #[test]
    fn a_usable_server_refuses_nothing() {
        let s = Server::default();
        assert!(refusal("cli:agent:get", &s, Version::V080, &env()).is_none());
        let s = Server {
            protocol: Some(19),
            ..Server::default()
        };
        assert!(refusal("cli:agent:get", &s, Version::V080, &env()).is_none());
    }

    /// Herdr's words, with the guidance `session::active_restart_after_update_guidance` gives.
    #[test]
    fn protocol_mismatch_says_it_as_herdr_does() {
        let newer = Server {
            protocol: Some(19),
            ..Server::default()
        };
        let o = refusal("cli:agent:get", &newer, Version::V082, &env()).unwrap();
        assert_eq!(o.code, 1);
        assert!(o.stdout.is_empty());
        assert_eq!(
            stderr(&o),
            "{\"id\":\"cli:agent:get\",\"error\":{\"code\":\"protocol_mismatch\",\"message\":\"client protocol 20 is newer than server protocol 19; restart the Herdr server before using this command. Stop the old server to use the new version.\\nStopping exits pane processes.\\nRun `HERDR_SOCKET_PATH=/run/h.sock herdr server stop`, then restart Herdr with the same socket override.\"}}\n"
        );
        let mut e = Env::default();
        assert!(stderr(&protocol_mismatch("i", 20, 19, &e))
            .contains("Run `herdr server stop`, then run `herdr` again.\"}}"));
        e.session_env = Some("work".into());
        assert!(stderr(&protocol_mismatch("i", 20, 19, &e)).contains(
            "Run `herdr session stop work`, then run `herdr session attach work` again."
        ));
        let older = Server {
            protocol: Some(22),
            ..Server::default()
        };
        let o = refusal("cli:pane:close", &older, Version::V082, &env()).unwrap();
        assert_eq!(
            stderr(&o),
            "{\"id\":\"cli:pane:close\",\"error\":{\"code\":\"protocol_mismatch\",\"message\":\"client protocol 20 is older than server protocol 22; upgrade the Herdr client before using this command\"}}\n"
        );
    }

    #[test]
    fn a_stopped_server_is_not_running_whatever_its_protocol() {
        let s = Server {
            stopped: true,
            protocol: Some(22),
        };
        let o = refusal("cli:agent:list", &s, Version::V080, &env()).unwrap();
        assert_eq!(
            stderr(&o),
            "{\"id\":\"cli:agent:list\",\"error\":{\"code\":\"server_not_running\",\"message\":\"no herdr server is running at /run/h.sock; run `herdr` to start or attach it\"}}\n"
        );
        let sorted = server_not_running_sorted("cli:agent:start", &env());
        assert!(stderr(&sorted).starts_with("{\"error\":{\"code\":\"server_not_running\""));
        // 0.8.2's agent start meets the server first when it reads the pane.
        let o = refusal("cli:agent:start", &s, Version::V082, &env()).unwrap();
        assert!(stderr(&o).starts_with("{\"id\":\"cli:agent:start:pane\","));
        let o = refusal("cli:agent:start", &s, Version::V080, &env()).unwrap();
        assert!(stderr(&o).starts_with("{\"id\":\"cli:agent:start\","));
    }

    #[test]
    fn the_admin_verb_sets_and_reports() {
        let mut s = Server::default();
        let a = |s: &mut Server, args: &[&str]| {
            let args: Vec<String> = args.iter().map(|x| x.to_string()).collect();
            admin(s, Version::V080, &args)
        };
        assert_eq!(a(&mut s, &[]).unwrap()["running"], true);
        assert_eq!(a(&mut s, &["stop"]).unwrap()["running"], false);
        assert_eq!(a(&mut s, &["start"]).unwrap()["running"], true);
        let v = a(&mut s, &["protocol", "22"]).unwrap();
        assert_eq!(
            (v["protocol"].clone(), v["client_protocol"].clone()),
            (json!(22), json!(19))
        );
        assert_eq!(a(&mut s, &["protocol", "--unset"]).unwrap()["protocol"], 19);
        assert_eq!(s, Server::default());
        for bad in [
            &["bogus"][..],
            &["protocol"],
            &["protocol", "x"],
            &["stop", "now"],
        ] {
            assert_eq!(a(&mut s, bad).unwrap_err().code, 2, "{bad:?}");
        }
    }
}
