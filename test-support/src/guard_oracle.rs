//! The oracle: real bash decides what a command runs.
//!
//! Each candidate runs in `/bin/bash` inside a sandbox: a fresh temporary
//! directory, `PATH` holding only logging stubs and a few harmless real tools,
//! no network (`unshare -n` when the test runs as root; otherwise without),
//! stdin from `/dev/null`, a timeout, and a kill of the whole process group.
//! The `herdr` stub appends its argv to a log and exits 0; the oracle then
//! reads which Herdr invocations really happened and judges their argv the
//! way the Herdr CLI parses it.
//!
//! Many candidates run in one bash process (a batch), each in its own
//! subshell with its own working directory and its own id in the stub's log,
//! so one candidate cannot affect another. A batch that times out is re-run
//! one candidate per process to find the one that hangs.

#![allow(dead_code)]

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Real tools linked into the sandbox's `PATH` (all harmless; the wrappers
/// and shells are there so that the candidates can really use them).
const REAL_TOOLS: &[&str] = &[
    "env", "timeout", "nice", "nohup", "setsid", "stdbuf", "xargs", "find", "dash", "bash",
    "rbash", "cat", "grep", "sed", "tr", "head", "tail", "base64", "true", "false", "ls", "tee",
    "printf", "echo", "test", "wc", "cut", "sort", "rev", "which", "time",
];

/// Files every candidate finds in its working directory (besides a `herdr`
/// link): inputs that the corpus reads, so that `xargs ... < peers.txt`,
/// `[ -f x ]` or `find . -name peers` really reach Herdr.
const FIXTURES: &str =
    "printf 'peer\\n' > peers.txt; printf 'peer\\n' > peers; : > x; : > a.peer; : > msg.txt";

/// What bash ran for one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// 2 when `herdr agent wait` ran, 1 when `herdr agent prompt` with a
    /// waiting option ran (and no wait), 0 otherwise.
    pub verdict: i32,
    /// The candidate did not finish in time (what it ran so far counts).
    pub timed_out: bool,
}

/// A sandbox in which candidates run.
pub struct Oracle {
    root: PathBuf,
    net_isolated: bool,
    next: AtomicUsize,
}

fn write_exec(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Which tool path to link for `name`, if installed.
fn find_tool(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.exists())
}

impl Oracle {
    /// Builds the sandbox under the system temporary directory. Each
    /// candidate gets a fresh working directory.
    pub fn new() -> Oracle {
        Oracle::build(false, "/bin/dash")
    }

    /// Like [`Oracle::new`], but all candidates share one working directory
    /// (prepared once): for generated candidates that write no files.
    pub fn shared_cwd() -> Oracle {
        Oracle::build(true, "/bin/dash")
    }

    /// Like [`Oracle::shared_cwd`], but `sh` is bash (which then runs in
    /// POSIX mode), as on systems where `/bin/sh` is bash rather than dash.
    /// The guard reads `sh` scripts as bash, so this is the oracle its
    /// false positives are measured against; dash (the default) is the one
    /// its bypasses must also hold against.
    pub fn shared_cwd_bash_sh() -> Oracle {
        Oracle::build(true, "/bin/bash")
    }

    fn build(shared: bool, sh: &str) -> Oracle {
        static SEQ: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "hl-guard-oracle-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&root);
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(root.join("cases")).unwrap();
        std::fs::create_dir_all(root.join("w")).unwrap();
        std::fs::create_dir_all(root.join("home/bin")).unwrap();
        // The herdr stub (dash: fast to start). One record per call, written
        // with a single append: case id, then each argument.
        let log = root.join("log");
        let stub = format!(
            "#!/bin/dash\nr=\"${{HL_CASE:-?}}\"\nfor a in \"$@\"; do r=\"$r\x1f$a\"; done\nprintf '%s\\036' \"$r\" >> '{}'\nexit 0\n",
            log.display()
        );
        write_exec(&bin.join("herdr"), &stub);
        let _ = std::os::unix::fs::symlink(bin.join("herdr"), root.join("home/bin/herdr"));
        write_exec(&bin.join("sleep"), "#!/bin/dash\nexit 0\n");
        // `watch` runs its command once (its real self would loop forever).
        write_exec(
            &bin.join("watch"),
            "#!/bin/dash\nx=0\nwhile [ $# -gt 0 ]; do case \"$1\" in\n -x|--exec) x=1; shift;;\n -n|--interval) shift 2;;\n --) shift; break;;\n -*) shift;;\n *) break;;\n esac; done\nif [ $x = 1 ]; then exec \"$@\"; else exec /bin/sh -c \"$*\"; fi\n",
        );
        for tool in REAL_TOOLS {
            if let Some(p) = find_tool(tool) {
                let _ = std::os::unix::fs::symlink(p, bin.join(tool));
            }
        }
        let _ = std::os::unix::fs::symlink(sh, bin.join("sh"));
        // Unknown commands succeed silently, in the driver and in child bashes
        // (through BASH_ENV), so that `a && herdr ...` reaches Herdr.
        std::fs::write(
            root.join("env.sh"),
            "command_not_found_handle() { return 0; }\n",
        )
        .unwrap();
        // The batch driver: candidates FIRST..LAST-1.
        let driver = format!(
            "command_not_found_handle() {{ return 0; }}\n\
             C='{cases}'; W='{w}'\n\
             for ((i=$1; i<$2; i++)); do\n\
               printf 'M%d\\036' \"$i\" >> '{log}'\n\
               (export HL_CASE=$i; {prepare}; . \"$C/$i\") </dev/null >/dev/null 2>&1\n\
             done\n",
            cases = root.join("cases").display(),
            w = root.join("w").display(),
            log = log.display(),
            prepare = if shared {
                "cd \"$W/shared\"".to_string()
            } else {
                format!(
                    "/bin/mkdir -p \"$W/$i\" && cd \"$W/$i\" && /bin/ln -s '{}/herdr' herdr && {FIXTURES}",
                    bin.display()
                )
            },
        );
        if shared {
            let dir = root.join("w").join("shared");
            std::fs::create_dir_all(&dir).unwrap();
            let _ = std::os::unix::fs::symlink(bin.join("herdr"), dir.join("herdr"));
            for (name, text) in [
                ("peers.txt", "peer\n"),
                ("peers", "peer\n"),
                ("x", ""),
                ("a.peer", ""),
                ("msg.txt", ""),
            ] {
                std::fs::write(dir.join(name), text).unwrap();
            }
        }
        std::fs::write(root.join("driver.sh"), driver).unwrap();
        std::fs::write(&log, "").unwrap();
        let net_isolated = Command::new("unshare")
            .args(["-n", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        Oracle {
            root,
            net_isolated,
            next: AtomicUsize::new(0),
        }
    }

    /// Whether the candidates run without network access.
    pub fn net_isolated(&self) -> bool {
        self.net_isolated
    }

    /// Runs `cases` in batches of `batch` and returns what each ran.
    pub fn run(&self, cases: &[String], batch: usize) -> Vec<Outcome> {
        let mut out = Vec::with_capacity(cases.len());
        for chunk in cases.chunks(batch.max(1)) {
            out.extend(self.run_batch(chunk));
        }
        out
    }

    fn run_batch(&self, cases: &[String]) -> Vec<Outcome> {
        let first = self.next.fetch_add(cases.len(), Ordering::SeqCst);
        for (k, c) in cases.iter().enumerate() {
            let mut text = c.clone();
            text.push('\n');
            std::fs::write(self.root.join("cases").join((first + k).to_string()), text).unwrap();
        }
        let limit = Duration::from_millis(4000 + 60 * cases.len() as u64);
        let finished = self.spawn(first, first + cases.len(), limit);
        let (verdicts, last) = self.read_log();
        if finished {
            return (first..first + cases.len())
                .map(|i| Outcome {
                    verdict: verdicts.get(&i).copied().unwrap_or(0),
                    timed_out: false,
                })
                .collect();
        }
        if cases.len() == 1 {
            return vec![Outcome {
                verdict: verdicts.get(&first).copied().unwrap_or(0),
                timed_out: true,
            }];
        }
        // The last candidate the driver started is the one that hung (or the
        // machine is slow): keep what ran before it, run it alone, then run
        // the ones after it again.
        let hung = last
            .filter(|&l| l >= first && l < first + cases.len())
            .unwrap_or(first);
        let mut outs: Vec<Outcome> = (first..hung)
            .map(|i| Outcome {
                verdict: verdicts.get(&i).copied().unwrap_or(0),
                timed_out: false,
            })
            .collect();
        outs.extend(self.run_batch(&cases[hung - first..hung - first + 1]));
        if hung + 1 < first + cases.len() {
            outs.extend(self.run_batch(&cases[hung + 1 - first..]));
        }
        outs
    }

    /// Runs the driver over ids `a..b` in its own process group; returns
    /// whether it finished (and every process it started ended) in time.
    fn spawn(&self, a: usize, b: usize, limit: Duration) -> bool {
        let bin = self.root.join("bin");
        let mut cmd = if self.net_isolated {
            let mut c = Command::new("/usr/bin/unshare");
            c.args(["-n", "/bin/bash"]);
            c
        } else {
            Command::new("/bin/bash")
        };
        cmd.arg(self.root.join("driver.sh"))
            .arg(a.to_string())
            .arg(b.to_string())
            .env_clear()
            .env("PATH", &bin)
            .env("HOME", self.root.join("home"))
            .env("HERDR_BIN_PATH", bin.join("herdr"))
            .env("BASH_ENV", self.root.join("env.sh"))
            .env("LC_ALL", "C")
            .current_dir(self.root.join("w"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let mut child = cmd.spawn().expect("spawn bash");
        let pgid = child.id() as i32;
        let start = Instant::now();
        let mut done = false;
        while start.elapsed() < limit {
            if !done {
                if let Ok(Some(_)) = child.try_wait() {
                    done = true;
                }
            }
            // SAFETY: signal 0 only checks whether the group still exists.
            let alive = unsafe { libc::kill(-pgid, 0) } == 0;
            if done && !alive {
                let _ = child.wait();
                return true;
            }
            std::thread::sleep(Duration::from_millis(if done { 1 } else { 3 }));
        }
        // SAFETY: kills the process group this function created.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let _ = child.wait();
        false
    }

    /// The verdict of every candidate that ran Herdr, from the stub's log,
    /// and the last candidate the driver started.
    fn read_log(&self) -> (std::collections::HashMap<usize, i32>, Option<usize>) {
        let bytes = std::fs::read(self.root.join("log")).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        let mut map = std::collections::HashMap::new();
        let mut current: Option<usize> = None;
        let mut last: Option<usize> = None;
        for rec in text.split('\x1e') {
            if let Some(m) = rec.strip_prefix('M') {
                current = m.parse().ok();
                last = current;
                continue;
            }
            let mut fields = rec.split('\x1f');
            let Some(id) = fields.next() else { continue };
            let args: Vec<&str> = fields.collect();
            let id = id.parse().ok().or(current);
            if let Some(id) = id {
                let v = classify(&args);
                let e = map.entry(id).or_insert(0);
                *e = (*e).max(v);
            }
        }
        (map, last)
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Judges one real Herdr argv the way the Herdr CLI reads it (written here
/// apart from the library, from Herdr's own parser): `--session NAME` and
/// `--session=NAME` removed up to the first `--`, then `--remote X`,
/// `--remote=X`, `--remote-keybindings X|=X` and `--handoff` removed up to
/// the first `--` of what is left; `agent wait` is 2; `agent prompt TARGET
/// TEXT OPTS...` is 1 when a waiting option (`--wait`, `--until`,
/// `--timeout`, also `=VALUE`) is among the OPTS before a `--`, or is the
/// TARGET (the guard's deliberate choices: Herdr itself rejects `=VALUE`
/// and takes such a TARGET literally).
pub fn classify(args: &[&str]) -> i32 {
    fn pass<'a>(args: &[&'a str], with_value: &[&str], alone: &[&str]) -> Vec<&'a str> {
        // `alone`: exact words, or prefixes when they end in `=`.
        let mut out = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = args[i];
            if a == "--" {
                out.extend_from_slice(&args[i..]);
                break;
            }
            if with_value.contains(&a) {
                i += 2;
                continue;
            }
            if alone
                .iter()
                .any(|p| a == *p || (p.ends_with('=') && a.starts_with(p)))
            {
                i += 1;
                continue;
            }
            out.push(a);
            i += 1;
        }
        out
    }
    let rest = pass(args, &["--session"], &["--session="]);
    let rest = pass(
        &rest,
        &["--remote", "--remote-keybindings"],
        &["--remote=", "--remote-keybindings=", "--handoff"],
    );
    let waiting = |o: &str| {
        ["--wait", "--until", "--timeout"]
            .iter()
            .any(|w| o == *w || o.starts_with(&format!("{w}=")))
    };
    match rest.as_slice() {
        ["agent", "wait", ..] => 2,
        ["agent", "prompt", target, _text, opts @ ..] => i32::from(
            waiting(target) || opts.iter().take_while(|o| **o != "--").any(|o| waiting(o)),
        ),
        ["agent", "prompt", target] => i32::from(waiting(target)),
        _ => 0,
    }
}

/// Writes `text` to stderr (test diagnostics).
pub fn note(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}
