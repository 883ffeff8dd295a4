//! Tests of activation presence.

use super::asker::{ask, ask_exec_in, decide_over};
use super::holder::announce_in;
use super::names::{list, parse_name, socket_name, Holder, Listing};
use super::proc::{ancestors_from, from_bsd_info, host_from, parse_stat, MAX_ANCESTORS};
use super::question::{holder_trusted, peer_may_ask, Reply, MAX_FIELD, MAX_QUESTION};
use super::*;
use crate::rundir;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

#[test]
fn parses_stat_with_odd_comm() {
    let text = "4242 (we ird) (x)) S 17 4242 17 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 100 5 18446744073709551615";
    let s = parse_stat(4242, text).unwrap();
    assert_eq!(s.comm, "we ird) (x)");
    assert_eq!(s.ppid, 17);
    assert_eq!(s.start, 987654);
    assert_eq!(parse_stat(1, "garbage"), None);
    assert_eq!(parse_stat(1, "1 (x) S 0"), None);
}

/// The macOS reader's conversion, checked on every platform: the walk gets the same
/// fields from a `proc_bsdinfo` record as from `/proc/<pid>/stat`.
#[test]
fn converts_bsd_info() {
    let mut comm = [0u8; 16];
    comm[..4].copy_from_slice(b"bash");
    comm[5] = b'x'; // after the NUL: ignored
    let s = from_bsd_info(300, 200, &comm, 1_700_000_000, 123_456);
    assert_eq!(s.pid, 300);
    assert_eq!(s.comm, "bash");
    assert_eq!(s.ppid, 200);
    assert_eq!(s.start, 1_700_000_000_123_456);
    let full = from_bsd_info(7, 1, b"0123456789abcdef", 1, 0);
    assert_eq!(full.comm, "0123456789abcdef");
    assert_eq!(from_bsd_info(7, u32::MAX, b"x", 0, 0).ppid, 0);
    // Fed to the walk, the records find the host past the shell.
    let node = |pid, ppid, name: &[u8], sec| {
        let mut c = [0u8; 16];
        c[..name.len()].copy_from_slice(name);
        from_bsd_info(pid, ppid, &c, sec, 0)
    };
    let table = [node(30, 20, b"sh", 3), node(20, 1, b"claude", 2)];
    let host = host_from(30, |pid| table.iter().find(|p| p.pid == pid).cloned());
    assert_eq!(
        host,
        Some(HostKey {
            pid: 20,
            start: 2_000_000
        })
    );
}

fn fake_tree(procs: &[(i32, &str, i32, u64)]) -> impl Fn(i32) -> Option<ProcStat> {
    let map: HashMap<i32, ProcStat> = procs
        .iter()
        .map(|&(pid, comm, ppid, start)| {
            (
                pid,
                ProcStat {
                    pid,
                    comm: comm.into(),
                    ppid,
                    start,
                },
            )
        })
        .collect();
    move |pid| map.get(&pid).cloned()
}

#[test]
fn host_walk_skips_shells_and_ancestors_keep_every_process() {
    let tree = fake_tree(&[
        (1, "init", 0, 1),
        (10, "node", 1, 100),
        (11, "bash", 10, 110),
        (12, "python3", 11, 120),
        (13, "make", 12, 130),
        (14, "sh", 13, 140),
    ]);
    assert_eq!(
        host_from(11, &tree),
        Some(HostKey {
            pid: 10,
            start: 100
        })
    );
    let chain: Vec<i32> = ancestors_from(14, &tree).iter().map(|h| h.pid).collect();
    assert_eq!(chain, vec![14, 13, 12, 11, 10]);
    assert_eq!(ancestors_from(99, &tree), vec![]);
    // A loop in a corrupt table ends at the bound.
    let looped = fake_tree(&[(5, "a", 6, 1), (6, "b", 5, 2)]);
    assert_eq!(ancestors_from(5, &looped).len(), MAX_ANCESTORS);
}

#[test]
fn host_keys_and_names_round_trip_and_foreign_names_are_ignored() {
    let host = HostKey {
        pid: 4242,
        start: 987,
    };
    assert_eq!(host.to_string(), "4242-987");
    assert_eq!(HostKey::parse("4242-987"), Some(host));
    for bad in [
        "",
        "4242",
        "-987",
        "4242-",
        "1-5",
        "0-5",
        "x-1",
        "4242-98a",
        "4242-987-1",
    ] {
        assert_eq!(HostKey::parse(bad), None, "{bad:?}");
    }
    let name = socket_name(host, 77, 0xdead_beef);
    assert_eq!(name, "4242-987.77.00000000deadbeef");
    assert_eq!(parse_name(&name), Some((host, 77)));
    for bad in [
        "4242-987.77",
        "4242-987.77.00000000deadbee",
        "4242-987.77.00000000deadbeefx",
        "4242-987.x.00000000deadbeef",
        "4242-987..00000000deadbeef",
        "4242.77.00000000deadbeef",
        "4242-987.77.00000000deadbeef.sock",
        ".herdr.tmp",
    ] {
        assert_eq!(parse_name(bad), None, "{bad}");
    }
}

#[test]
fn peer_credentials_rules() {
    assert!(peer_may_ask(1000, 1000));
    assert!(!peer_may_ask(1000, 0));
    assert!(!peer_may_ask(0, 1000));
    let h = Holder {
        host: HostKey { pid: 2, start: 2 },
        pid: 50,
        path: PathBuf::from("/x"),
    };
    assert!(holder_trusted(1000, &h, 50, 1000));
    assert!(
        holder_trusted(1000, &h, 0, 1000),
        "outside the asker's pid namespace"
    );
    assert!(!holder_trusted(1000, &h, 51, 1000), "another process");
    assert!(!holder_trusted(1000, &h, 50, 0), "another user");
}

#[test]
fn questions_travel_as_one_json_line() {
    let q = Question::new(Some("c1"), Some("opencode:1.2:ses_x"));
    assert_eq!(
        q.line(),
        "{\"claude\":\"c1\",\"session\":\"opencode:1.2:ses_x\"}\n"
    );
    assert_eq!(Question::parse(q.line().trim_end().as_bytes()), Some(q));
    assert_eq!(Question::new(None, None).line(), "{}\n");
    let exact = Question {
        exact: true,
        ..Question::new(None, Some("s"))
    };
    assert_eq!(
        Question::parse(br#"{"session":"s","exact":true}"#),
        Some(exact)
    );
    assert_eq!(Question::parse(b"not json"), None);
    // Ids that cannot be real are dropped, never sent cut.
    let long = "x".repeat(MAX_FIELD + 1);
    assert_eq!(
        Question::new(Some(&long), Some("a\nb")),
        Question::default()
    );
    assert!(
        Question::new(Some(&"y".repeat(MAX_FIELD)), Some(&"z".repeat(MAX_FIELD)))
            .line()
            .len()
            <= MAX_QUESTION
    );
}

#[test]
fn mcp_holders_compare_claude_session_ids_only_when_both_are_known() {
    let q = |c: Option<&str>| Question::new(c, None);
    assert!(answer_for(true, None, &q(None)));
    assert!(answer_for(true, Some("s1"), &q(None)));
    assert!(answer_for(true, None, &q(Some("s1"))));
    assert!(answer_for(true, Some("s1"), &q(Some("s1"))));
    assert!(!answer_for(true, Some("s1"), &q(Some("s2"))));
    assert!(answer_for(true, Some(""), &q(Some("s2"))));
    assert!(!answer_for(false, None, &q(None)));
    let exact = Question {
        exact: true,
        ..Question::new(None, Some("m"))
    };
    assert!(
        !answer_for(true, None, &exact),
        "an MCP server holds no marked session"
    );
}

/// A private temp runtime dir and its presence dir, removed on drop.
struct TempDirs {
    base: PathBuf,
    dir: PathBuf,
}

impl TempDirs {
    fn new(tag: &str) -> TempDirs {
        let base = std::env::temp_dir().join(format!("hlp-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let dir = base.join("presence");
        TempDirs { base, dir }
    }
}

impl Drop for TempDirs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn holder(host: HostKey, pid: i32) -> Holder {
    Holder {
        host,
        pid,
        path: PathBuf::from(format!("/p/{host}.{pid}")),
    }
}

#[test]
fn the_asker_asks_its_key_and_ancestors_then_marked_sessions_and_fails_closed() {
    let d = TempDirs::new("logic");
    let a = Asker {
        key: Some(HostKey { pid: 10, start: 1 }),
        ancestors: vec![HostKey { pid: 20, start: 2 }, HostKey { pid: 30, start: 3 }],
        question: Question::new(Some("c"), None),
    };
    // No directory: nobody ever announced.
    assert_eq!(
        ask_exec_in(&d.base, &d.dir, &a, |_, _| panic!("asked")),
        Found::Dormant
    );
    rundir::ensure_private_dir(&d.base).unwrap();
    rundir::ensure_private_dir(&d.dir).unwrap();
    assert_eq!(
        ask_exec_in(&d.base, &d.dir, &a, |_, _| panic!("asked")),
        Found::Dormant
    );
    // The logic over a listing: ask_hosts with a fixed set of holders.
    let hs = [
        holder(HostKey { pid: 99, start: 9 }, 1),
        holder(HostKey { pid: 30, start: 3 }, 2),
        holder(HostKey { pid: 10, start: 1 }, 3),
    ];
    let run = |a: &Asker, reply: &dyn Fn(&Holder, &Question) -> Reply| {
        let seen = std::cell::RefCell::new(Vec::new());
        let found = decide_over(&hs, a, |h, q| {
            seen.borrow_mut().push((h.pid, q.exact));
            reply(h, q)
        });
        (found, seen.into_inner())
    };
    // Key first, then ancestors; a foreign host is never asked without a marker.
    let (f, seen) = run(&a, &|_, _| Reply::No);
    assert_eq!((f, seen), (Found::Dormant, vec![(3, false), (2, false)]));
    let (f, seen) = run(&a, &|h, _| if h.pid == 2 { Reply::Yes } else { Reply::No });
    assert_eq!((f, seen), (Found::Active, vec![(3, false), (2, false)]));
    // A holder of ours that cannot be asked: unknown, never dormant.
    let (f, _) = run(&a, &|h, _| {
        if h.pid == 3 {
            Reply::Blocked("EPERM".into())
        } else {
            Reply::No
        }
    });
    assert_eq!(f, Found::Unknown("EPERM".into()));
    // ...but a yes elsewhere still decides.
    let (f, _) = run(&a, &|h, _| match h.pid {
        3 => Reply::Blocked("EPERM".into()),
        _ => Reply::Yes,
    });
    assert_eq!(f, Found::Active);
    // With a session marker, every other holder is asked for that session only.
    let marked = Asker {
        question: Question::new(Some("c"), Some("m")),
        ..a.clone()
    };
    let (f, seen) = run(&marked, &|_, _| Reply::No);
    assert_eq!(
        (f, seen),
        (Found::Dormant, vec![(3, false), (2, false), (1, true)])
    );
    let (f, _) = run(&marked, &|h, q| {
        assert!(
            q.claude.is_none() || !q.exact,
            "the exact question carries no Claude id"
        );
        if h.pid == 1 && q.exact {
            Reply::Yes
        } else {
            Reply::No
        }
    });
    assert_eq!(f, Found::Active);
    // Without key or ancestors, nothing is asked.
    let lost = Asker::default();
    assert_eq!(run(&lost, &|_, _| Reply::Yes), (Found::Dormant, vec![]));
}

#[test]
fn a_presence_directory_that_is_not_private_is_never_trusted() {
    use std::os::unix::fs::PermissionsExt;
    let d = TempDirs::new("unsafe");
    let a = Asker {
        key: Some(HostKey { pid: 10, start: 1 }),
        ..Asker::default()
    };
    rundir::ensure_private_dir(&d.base).unwrap();
    rundir::ensure_private_dir(&d.dir).unwrap();
    // Opened to others (or owned by another user, which the root test below checks): the
    // asker cannot know, the holder cannot announce.
    // Announcing into an untrusted directory is refused.
    let refused = |d: &TempDirs| {
        announce_in(
            &d.base,
            &d.dir,
            HostKey { pid: 10, start: 1 },
            Arc::new(|_| true),
        )
        .is_err()
    };
    for open in [&d.base, &d.dir] {
        std::fs::set_permissions(open, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(
            matches!(ask_exec_in(&d.base, &d.dir, &a, |_, _| Reply::No), Found::Unknown(ref w) if w.contains("closed to others")),
            "{open:?}"
        );
        assert!(refused(&d));
        std::fs::set_permissions(open, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    // A symlink in place of the directory.
    std::fs::remove_dir_all(&d.dir).unwrap();
    std::os::unix::fs::symlink(&d.base, &d.dir).unwrap();
    assert!(matches!(
        ask_exec_in(&d.base, &d.dir, &a, |_, _| Reply::No),
        Found::Unknown(_)
    ));
    assert!(refused(&d));
}

#[cfg(target_os = "linux")]
#[test]
fn a_live_holder_answers_and_a_closed_or_dead_one_does_not() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let d = TempDirs::new("live");
    let host = HostKey {
        pid: 1234,
        start: 5,
    };
    let on = Arc::new(AtomicBool::new(true));
    let flag = on.clone();
    let beacon = announce_in(
        &d.base,
        &d.dir,
        host,
        Arc::new(move |q| answer_for(flag.load(Ordering::SeqCst), Some("mine"), q)),
    )
    .unwrap();
    let me = std::process::id() as i32;
    let Listing::Holders(listed) = list(&d.base, &d.dir) else {
        panic!("not listed")
    };
    assert_eq!(listed.len(), 1);
    let h = listed[0].clone();
    assert_eq!((h.host, h.pid, h.path.as_path()), (host, me, beacon.path()));
    let q = |c: Option<&str>| Question::new(c, None);
    assert_eq!(ask(&h, &q(None)), Reply::Yes);
    assert_eq!(ask(&h, &q(Some("mine"))), Reply::Yes);
    assert_eq!(
        ask(&h, &q(Some("other"))),
        Reply::No,
        "another Claude Code session"
    );
    let asker = Asker {
        key: Some(host),
        ..Asker::default()
    };
    assert_eq!(ask_exec_in(&d.base, &d.dir, &asker, ask), Found::Active);
    let reused = Asker {
        key: Some(HostKey {
            pid: 1234,
            start: 6,
        }),
        ..Asker::default()
    };
    assert_eq!(
        ask_exec_in(&d.base, &d.dir, &reused, ask),
        Found::Dormant,
        "reused pid"
    );
    // A socket whose listener is not the process its name announces is not trusted.
    let liar = Holder {
        pid: me + 1,
        ..h.clone()
    };
    assert_eq!(ask(&liar, &q(None)), Reply::No);
    on.store(false, Ordering::SeqCst);
    assert_eq!(ask(&h, &q(None)), Reply::No, "answers live state");
    on.store(true, Ordering::SeqCst);
    // A second holder for the same host gets its own, different name.
    let second = announce_in(&d.base, &d.dir, host, Arc::new(|_| false)).unwrap();
    assert_ne!(second.path(), beacon.path());
    assert_eq!(ask_exec_in(&d.base, &d.dir, &asker, ask), Found::Active);
    drop(second);
    drop(beacon);
    assert!(!h.path.exists(), "closing removes the socket");
    assert_eq!(ask(&h, &q(None)), Reply::No, "closed: nobody answers");
    assert_eq!(ask_exec_in(&d.base, &d.dir, &asker, ask), Found::Dormant);
}

/// Squatting: another user can neither take a holder's name (64 random bits, in a
/// directory only we can write) nor plant a socket of its own, nor pre-create the
/// directories; each attempt leaves the asker knowing it cannot know, never "dormant".
/// Needs root to act as another user; the mode-based checks above run everywhere.
#[cfg(target_os = "linux")]
#[test]
fn another_user_cannot_squat_a_holder_or_the_directory() {
    use std::os::unix::process::CommandExt;
    if rundir::uid() != 0 {
        eprintln!("another_user_cannot_squat: not root, the other-user part is not run");
        return;
    }
    let d = TempDirs::new("squat");
    let host = HostKey {
        pid: 4242,
        start: 9,
    };
    let beacon = announce_in(&d.base, &d.dir, host, Arc::new(|_| true)).unwrap();
    // The squatter (uid 65534) tries to bind next to the holder and to take its very name.
    let other_name = d.dir.join(socket_name(host, 4242, 7));
    for target in [other_name.as_path(), beacon.path()] {
        let out = std::process::Command::new("python3")
            .args([
                "-c",
                "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])",
            ])
            .arg(target)
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap();
        assert!(!out.status.success(), "bound {}", target.display());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("PermissionError: [Errno 13]"), "{err}");
    }
    // A socket of another user inside the directory (only root could put it there) is
    // not a holder.
    let planted = d.dir.join(socket_name(host, 4242, 8));
    let _l = std::os::unix::net::UnixListener::bind(&planted).unwrap();
    std::os::unix::fs::chown(&planted, Some(65534), Some(65534)).unwrap();
    let Listing::Holders(hs) = list(&d.base, &d.dir) else {
        panic!("unlisted")
    };
    assert_eq!(
        hs.iter().map(|h| h.path.as_path()).collect::<Vec<_>>(),
        [beacon.path()]
    );
    let asker = Asker {
        key: Some(host),
        ..Asker::default()
    };
    assert_eq!(ask_exec_in(&d.base, &d.dir, &asker, ask), Found::Active);
    drop(beacon);
    // Directories pre-created (or taken over) by another user: never trusted.
    for squatted in [&d.dir, &d.base] {
        std::os::unix::fs::chown(squatted, Some(65534), Some(65534)).unwrap();
        assert!(
            matches!(ask_exec_in(&d.base, &d.dir, &asker, ask), Found::Unknown(_)),
            "{squatted:?}"
        );
        assert!(announce_in(&d.base, &d.dir, host, Arc::new(|_| true)).is_err());
        std::os::unix::fs::chown(squatted, Some(0), Some(0)).unwrap();
    }
}

/// A socket left by a holder that died: nobody listens, the asker removes it.
#[cfg(target_os = "linux")]
#[test]
fn a_dead_holders_socket_is_dormant_and_removed() {
    let d = TempDirs::new("dead");
    rundir::ensure_private_dir(&d.base).unwrap();
    rundir::ensure_private_dir(&d.dir).unwrap();
    let host = HostKey {
        pid: 4321,
        start: 7,
    };
    let path = d.dir.join(socket_name(host, std::process::id() as i32, 1));
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    drop(listener); // the file stays, nobody listens
    assert!(path.exists());
    let asker = Asker {
        key: Some(host),
        ..Asker::default()
    };
    assert_eq!(ask_exec_in(&d.base, &d.dir, &asker, ask), Found::Dormant);
    assert!(!path.exists(), "removed by the asker");
}
