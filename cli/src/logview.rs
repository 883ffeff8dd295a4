//! `herdr-link log`: the operator log (docs/operator-log.md) as a readable timeline, and the
//! reading of it that `herdr-link watch` shares: the files in order (`<path>.1`, then `<path>`),
//! complete lines only (a line still being written waits for its newline), rotation followed.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use herdr_link::error::REASONS;
use herdr_link::follow;
use herdr_link::oplog;
use serde_json::Value;

/// `herdr-link log --help`.
pub const USAGE: &str =
    "usage: herdr-link log [--agent NAME] [--workspace ID] [--code CODE[,CODE…]] [--failures]
                      [--since WHEN] [--until WHEN] [--calls] [--follow] [--json] [--file PATH]

The operator log as a timeline: time, sender → receiver, a preview of the message, and the
outcome in words (sent, refused and why, waited N ms for the receiver's turn, taken up, delivered
but not taken up). Reads the log Link writes (HERDR_LINK_LOG, else
$XDG_STATE_HOME/herdr-link/log.jsonl), its rotated part first.

  --agent NAME      lines whose sender or receiver is NAME (or whose session is NAME)
  --workspace ID    lines of sends in that Herdr workspace
  --code CODE       lines with one of these codes (ok, SEND_FAILED, not_taken_up, …)
  --failures        lines that are neither ok nor taken up
  --since WHEN      from WHEN on: 30s, 10m, 2h, 1d ago; HH:MM[:SS] today; or epoch seconds
  --until WHEN      up to WHEN (same forms)
  --calls           show the Herdr calls behind each failure
  --follow, -f      keep printing lines as they are written (Ctrl-C ends)
  --json            print the selected lines as they are in the file, for scripts
  --file PATH       read PATH instead of the log Link writes

Colours only on a terminal and never with NO_COLOR set; lines are cut to the terminal's width.";

/// One Herdr call of a line.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The argv after the executable.
    pub argv: Vec<String>,
    /// `exit=N`, `timeout`, …
    pub outcome: String,
    /// Its wall time.
    pub ms: f64,
}

/// What a send (or its follow-up) was about.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Message {
    /// The sender (may be empty).
    pub from: String,
    /// The receiver.
    pub to: String,
    /// The message id (empty when nothing was sent).
    pub id: String,
    /// The sender's workspace id.
    pub workspace: String,
    /// The text's preview, when the log kept text.
    pub preview: Option<String>,
    /// The text's length in characters.
    pub chars: u64,
}

/// One line of the log, as the views need it.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Unix time in seconds.
    pub ts: f64,
    /// The host session key (empty for a note).
    pub session: String,
    /// The tool (or `follow`, `guard`, `bootstrap`, `settings`, …).
    pub tool: String,
    /// The gateway action.
    pub action: Option<String>,
    /// `ok`, a Link code, or a note's code.
    pub code: String,
    /// The internal detail.
    pub detail: String,
    /// Wall time of the operation.
    pub ms: f64,
    /// The Herdr calls made.
    pub calls: Vec<Call>,
    /// How long a send or close waited for the delivery turn, and whether it got it.
    pub turn: Option<(f64, bool)>,
    /// What a send was about.
    pub message: Option<Message>,
    /// The line as it is in the file (without its newline).
    pub raw: String,
}

fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_string()
}

impl Event {
    /// Reads one line; `None` when it is not a log line (not JSON, not an object).
    pub fn parse(line: &str) -> Option<Event> {
        let v: Value = serde_json::from_str(line).ok()?;
        v.as_object()?;
        let calls = v["calls"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|c| Call {
                        argv: c["argv"]
                            .as_array()
                            .map(|a| {
                                a.iter()
                                    .map(|s| s.as_str().unwrap_or_default().to_string())
                                    .collect()
                            })
                            .unwrap_or_default(),
                        outcome: text(c, "outcome"),
                        ms: c["ms"].as_f64().unwrap_or_default(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let turn = v["turn"].as_object().map(|t| {
            (
                t.get("wait_ms").and_then(Value::as_f64).unwrap_or_default(),
                t.get("got").and_then(Value::as_bool).unwrap_or(true),
            )
        });
        let message = v["message"].is_object().then(|| {
            let m = &v["message"];
            Message {
                from: text(m, "from"),
                to: text(m, "to"),
                id: text(m, "id"),
                workspace: text(m, "workspace"),
                preview: m["preview"].as_str().map(str::to_string),
                chars: m["chars"].as_u64().unwrap_or_default(),
            }
        });
        Some(Event {
            ts: v["ts"].as_f64().unwrap_or_default(),
            session: text(&v, "session"),
            tool: text(&v, "tool"),
            action: v["action"].as_str().map(str::to_string),
            code: text(&v, "code"),
            detail: text(&v, "detail"),
            ms: v["ms"].as_f64().unwrap_or_default(),
            calls,
            turn,
            message,
            raw: line.to_string(),
        })
    }

    /// Whether this is a send (the tool, or the gateway's `send` action).
    pub fn is_send(&self) -> bool {
        self.tool == "herdr_link_send" || self.action.as_deref() == Some("send")
    }

    /// Whether it went wrong: anything but `ok`, `taken_up` and a guard's `allow`.
    pub fn failed(&self) -> bool {
        !matches!(self.code.as_str(), oplog::OK | follow::TAKEN_UP | "allow")
    }

    /// What the operation was, in a word: `send`, `peers`, `close`, `start`, `follow`, …
    pub fn what(&self) -> String {
        if let Some(a) = &self.action {
            return a.clone();
        }
        self.tool
            .strip_prefix("herdr_link_")
            .unwrap_or(match self.tool.as_str() {
                "herdr_link" => "activate",
                t => t,
            })
            .to_string()
    }

    /// Who: `sender → receiver` for a send or follow-up, else the session.
    /// The message as a timeline shows it: ` "preview"` on one line, ` (N chars)` when the log
    /// keeps no text, nothing for a follow-up line or an event without a message.
    pub fn preview(&self) -> String {
        self.message
            .as_ref()
            .filter(|_| self.tool != follow::TOOL)
            .map(|m| match &m.preview {
                Some(p) => format!(" \"{}\"", p.replace(['\n', '\r', '\t'], " ")),
                None => format!(" ({} chars)", m.chars),
            })
            .unwrap_or_default()
    }

    pub fn who(&self) -> String {
        match &self.message {
            Some(m) => {
                let from = if m.from.is_empty() { "?" } else { &m.from };
                format!("{from} → {}", m.to)
            }
            None if self.session.is_empty() => self.tool.clone(),
            None => self.session.clone(),
        }
    }

    /// The outcome in words.
    pub fn outcome(&self) -> String {
        let reason = || {
            REASONS
                .iter()
                .find(|r| r.code == self.code)
                .map(|r| r.text.to_string())
        };
        let detail = if self.detail.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.detail)
        };
        match (self.code.as_str(), self.tool.as_str()) {
            (follow::TAKEN_UP, _) => format!("taken up after {}", millis(self.ms)),
            (follow::NOT_TAKEN_UP, _) => format!("delivered, not taken up{detail}"),
            (oplog::OK, _) if self.is_send() => match self.turn {
                Some((w, _)) if w >= 1.0 => format!(
                    "sent, waited {} for {}'s turn",
                    millis(w),
                    self.message.as_ref().map_or("the receiver", |m| &m.to)
                ),
                _ => "sent".to_string(),
            },
            (oplog::OK, _) => "ok".to_string(),
            (_, _) if self.turn.is_some_and(|(_, got)| !got) => format!(
                "{}: gave up after waiting {} for the receiver's turn; nothing was sent",
                self.code,
                millis(self.turn.map_or(0.0, |t| t.0))
            ),
            (code, _) => match reason() {
                Some(r) => format!("refused, {code}: {r}{detail}"),
                None => format!("{code}{detail}"),
            },
        }
    }
}

/// `452 ms`, `1.2 s`.
fn millis(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{} ms", ms.round() as u64)
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

/// `HH:MM:SS.mmm` in local time.
pub fn clock(ts: f64) -> String {
    let secs = ts.floor() as libc::time_t;
    // SAFETY: an all-zero tm is a valid out-parameter; localtime_r fills it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers for the duration of the call.
    if unsafe { libc::localtime_r(&secs, &mut tm) }.is_null() {
        return format!("{ts:.3}");
    }
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        ((ts - ts.floor()) * 1000.0) as u32
    )
}

/// Which lines to show.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Sender, receiver or session.
    pub agent: Option<String>,
    /// The sender's workspace.
    pub workspace: Option<String>,
    /// Codes (any of them).
    pub codes: Vec<String>,
    /// Only what went wrong.
    pub failures: bool,
    /// From this time on (epoch seconds).
    pub since: Option<f64>,
    /// Up to this time.
    pub until: Option<f64>,
}

impl Filter {
    /// Whether `e` is shown.
    pub fn keeps(&self, e: &Event) -> bool {
        let m = e.message.as_ref();
        if let Some(a) = &self.agent {
            let hit = e.session == *a || m.is_some_and(|m| m.from == *a || m.to == *a);
            if !hit {
                return false;
            }
        }
        if let Some(w) = &self.workspace {
            if !m.is_some_and(|m| m.workspace == *w) {
                return false;
            }
        }
        if !self.codes.is_empty() && !self.codes.iter().any(|c| c.eq_ignore_ascii_case(&e.code)) {
            return false;
        }
        if self.failures && !e.failed() {
            return false;
        }
        !self.since.is_some_and(|s| e.ts < s) && !self.until.is_some_and(|u| e.ts > u)
    }
}

/// A time as `--since`/`--until` take it, relative to `now` (epoch seconds): `30s`, `10m`,
/// `2h`, `1d` ago; `HH:MM[:SS]` today (local time); or epoch seconds.
pub fn parse_when(s: &str, now: f64) -> Option<f64> {
    let s = s.trim();
    if let Some((n, unit)) = s
        .char_indices()
        .last()
        .filter(|(_, c)| "smhd".contains(*c))
        .map(|(i, c)| (&s[..i], c))
    {
        let n: f64 = n.parse().ok().filter(|n: &f64| *n >= 0.0)?;
        let k = match unit {
            's' => 1.0,
            'm' => 60.0,
            'h' => 3600.0,
            _ => 86400.0,
        };
        return Some(now - n * k);
    }
    if s.contains(':') {
        let parts: Vec<u32> = s
            .split(':')
            .map(|p| p.parse().ok())
            .collect::<Option<_>>()?;
        let (h, m, sec) = match parts[..] {
            [h, m] => (h, m, 0),
            [h, m, sec] => (h, m, sec),
            _ => return None,
        };
        if h > 23 || m > 59 || sec > 60 {
            return None;
        }
        let secs = now.floor() as libc::time_t;
        // SAFETY: as in `clock`; mktime normalizes the fields it is given.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        if unsafe { libc::localtime_r(&secs, &mut tm) }.is_null() {
            return None;
        }
        tm.tm_hour = h as i32;
        tm.tm_min = m as i32;
        tm.tm_sec = sec as i32;
        // SAFETY: a valid tm.
        let t = unsafe { libc::mktime(&mut tm) };
        return (t != -1).then_some(t as f64);
    }
    s.parse().ok()
}

/// How lines look on this output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    /// ANSI colours.
    pub colour: bool,
    /// Cut each line to this many columns.
    pub width: Option<usize>,
}

impl Look {
    /// For standard output: colours on a terminal unless `NO_COLOR` is set (or `TERM=dumb`);
    /// the terminal's width (else `COLUMNS`) on a terminal, no cut otherwise.
    pub fn of_stdout() -> Look {
        // SAFETY: isatty on a descriptor number is always safe to call.
        let tty = unsafe { libc::isatty(1) } == 1;
        Look::decide(
            tty,
            std::env::var_os("NO_COLOR").as_deref(),
            std::env::var("TERM").ok().as_deref(),
            terminal_width(),
        )
    }

    /// The rule of [`Look::of_stdout`]: colours only on a terminal (`tty`) with `NO_COLOR`
    /// unset or empty and `TERM` not `dumb`; cut to `width` (100 when unknown) only on a
    /// terminal.
    pub fn decide(
        tty: bool,
        no_color: Option<&std::ffi::OsStr>,
        term: Option<&str>,
        width: Option<usize>,
    ) -> Look {
        let no_colour = no_color.is_some_and(|v| !v.is_empty()) || term == Some("dumb");
        Look {
            colour: tty && !no_colour,
            width: tty.then(|| width.unwrap_or(100)),
        }
    }
}

fn terminal_width() -> Option<usize> {
    // SAFETY: a zeroed winsize is a valid out-parameter for TIOCGWINSZ on stdout.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    if unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) } == 0 && ws.ws_col > 0 {
        return Some(ws.ws_col as usize);
    }
    std::env::var("COLUMNS").ok()?.parse().ok()
}

/// `s` cut to `width` characters (with `…`).
pub fn cut(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// One event as timeline text (one line, or more with `calls` for a failure).
pub fn render(e: &Event, look: Look, calls: bool) -> String {
    let paint = |code: &str, s: &str| {
        if look.colour {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    let preview = e.preview();
    let head = format!("{}  {:<8} {}", clock(e.ts), e.what(), e.who());
    let outcome = e.outcome();
    // The outcome is never cut before the preview is: cut the preview to what is left.
    let (head, preview, outcome) = match look.width {
        Some(w) => {
            let used = head.chars().count() + outcome.chars().count() + 2;
            let room = w.saturating_sub(used);
            let preview = if room < 8 {
                String::new()
            } else {
                cut(&preview, room)
            };
            let left = w.saturating_sub(head.chars().count() + preview.chars().count() + 2);
            (head, preview, cut(&outcome, left.max(10)))
        }
        None => (head, preview, outcome),
    };
    let colour = if e.code == follow::NOT_TAKEN_UP {
        "33"
    } else if e.failed() {
        "31"
    } else if e.tool == follow::TOOL {
        "32"
    } else {
        "0"
    };
    let mut out = format!(
        "{}{}  {}",
        head,
        paint("2", &preview),
        paint(colour, &outcome)
    );
    if calls && e.failed() {
        for c in &e.calls {
            let line = format!(
                "    herdr {} → {} ({})",
                c.argv.join(" ").replace('\n', " "),
                c.outcome,
                millis(c.ms)
            );
            out.push('\n');
            out.push_str(&paint(
                "2",
                &look.width.map_or(line.clone(), |w| cut(&line, w)),
            ));
        }
    }
    out
}

/// Reads the log's files: `<path>.1` then `<path>`, complete lines only, and then what is
/// appended, following a rotation (the file at the path is a new one, or shorter).
pub struct Tail {
    path: PathBuf,
    file: Option<File>,
    ino: u64,
    pos: u64,
    partial: Vec<u8>,
}

impl Tail {
    /// A reader of the log at `path` that has read nothing yet.
    pub fn new(path: &Path) -> Tail {
        Tail {
            path: path.to_path_buf(),
            file: None,
            ino: 0,
            pos: 0,
            partial: Vec::new(),
        }
    }

    /// Every complete line of `<path>.1` and `<path>` (in that order), and positions the
    /// reader after them.
    pub fn backlog(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Ok(old) = std::fs::read(oplog::rotated(&self.path)) {
            let mut partial = Vec::new();
            split(&mut partial, &old, &mut lines);
        }
        lines.extend(self.poll());
        lines
    }

    /// The complete lines written since the last call. A last line without its newline is
    /// kept until the newline comes.
    pub fn poll(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        let now = std::fs::metadata(&self.path).ok();
        let rotated = match (&self.file, &now) {
            (Some(_), Some(m)) => m.ino() != self.ino || m.len() < self.pos,
            (None, Some(_)) => true,
            (_, None) => false,
        };
        if rotated {
            // What the old file got after our last read was renamed with it to `<path>.1`.
            if let Some(f) = &mut self.file {
                read_from(f, &mut self.pos, &mut self.partial, &mut lines);
            }
            self.partial.clear();
            self.file = File::open(&self.path).ok();
            self.pos = 0;
            self.ino = self
                .file
                .as_ref()
                .and_then(|f| f.metadata().ok())
                .map_or(0, |m| m.ino());
        }
        if let Some(f) = &mut self.file {
            read_from(f, &mut self.pos, &mut self.partial, &mut lines);
        }
        lines
    }
}

fn read_from(f: &mut File, pos: &mut u64, partial: &mut Vec<u8>, lines: &mut Vec<String>) {
    if f.seek(SeekFrom::Start(*pos)).is_err() {
        return;
    }
    let mut buf = Vec::new();
    if f.read_to_end(&mut buf).is_ok() {
        *pos += buf.len() as u64;
        split(partial, &buf, lines);
    }
}

fn split(partial: &mut Vec<u8>, buf: &[u8], lines: &mut Vec<String>) {
    partial.extend_from_slice(buf);
    while let Some(nl) = partial.iter().position(|&b| b == b'\n') {
        let line: Vec<u8> = partial.drain(..=nl).collect();
        let text = String::from_utf8_lossy(&line[..nl]).into_owned();
        if !text.trim().is_empty() {
            lines.push(text);
        }
    }
}

/// A parsed `herdr-link log` command line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    /// Which lines.
    pub filter: Filter,
    /// Show the Herdr calls behind failures.
    pub calls: bool,
    /// Keep reading.
    pub follow: bool,
    /// Pass lines through.
    pub json: bool,
    /// Read this file.
    pub file: Option<PathBuf>,
}

/// Parses `herdr-link log`'s arguments.
pub fn parse(args: &[String]) -> Result<Options, String> {
    let now = now();
    let mut o = Options::default();
    walk_flags(args, |flag, value| {
        match flag {
            "--agent" => o.filter.agent = Some(value()?),
            "--workspace" => o.filter.workspace = Some(value()?),
            "--code" => o
                .filter
                .codes
                .extend(value()?.split(',').map(|c| c.trim().to_string())),
            "--since" | "--until" => {
                let v = value()?;
                let t = parse_when(&v, now).ok_or(format!(
                    "{flag} {v:?}: use 30s, 10m, 2h, 1d, HH:MM[:SS] or epoch seconds"
                ))?;
                if flag == "--since" {
                    o.filter.since = Some(t);
                } else {
                    o.filter.until = Some(t);
                }
            }
            "--failures" => o.filter.failures = true,
            "--calls" => o.calls = true,
            "--follow" | "-f" => o.follow = true,
            "--json" => o.json = true,
            "--file" => o.file = Some(PathBuf::from(value()?)),
            other => return Err(format!("log: unexpected argument {other:?}")),
        }
        Ok(())
    })?;
    Ok(o)
}

/// Walks the operator views' arguments (`log`, `watch`): calls `on` with each flag and a way to
/// take its value, given as `--flag value` or `--flag=value`.
pub fn walk_flags(
    args: &[String],
    mut on: impl FnMut(&str, &mut dyn FnMut() -> Result<String, String>) -> Result<(), String>,
) -> Result<(), String> {
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = || match &inline {
            Some(v) => Ok(v.clone()),
            None => it.next().cloned().ok_or(format!("{flag} needs a value")),
        };
        on(flag, &mut value)?;
    }
    Ok(())
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// The file the views read: `--file`, else where Link writes (even while it is off, the file
/// from before is read), else `None`.
pub fn log_file(chosen: Option<PathBuf>) -> Option<PathBuf> {
    chosen
        .or_else(|| {
            std::env::var_os("HERDR_LINK_LOG")
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
        })
        .or_else(oplog::default_path)
}

/// Writes the selected lines of `lines` to `out`; `false` when the output is gone.
fn emit(out: &mut impl Write, lines: Vec<String>, o: &Options, look: Look) -> bool {
    for line in lines {
        let Some(e) = Event::parse(&line) else {
            continue;
        };
        if !o.filter.keeps(&e) {
            continue;
        }
        let text = if o.json {
            line
        } else {
            render(&e, look, o.calls)
        };
        if writeln!(out, "{text}").is_err() {
            return false;
        }
    }
    out.flush().is_ok()
}

/// Runs `herdr-link log`.
pub fn run(o: Options) -> i32 {
    let Some(path) = log_file(o.file.clone()) else {
        eprintln!(
            "herdr-link log: no log file: neither HERDR_LINK_LOG, XDG_STATE_HOME nor HOME is set"
        );
        return 1;
    };
    if !path.exists() && !oplog::rotated(&path).exists() && !o.follow {
        eprintln!(
            "herdr-link log: {} does not exist yet (nothing was logged)",
            path.display()
        );
        return 1;
    }
    let look = if o.json {
        Look {
            colour: false,
            width: None,
        }
    } else {
        Look::of_stdout()
    };
    let mut tail = Tail::new(&path);
    let mut out = std::io::stdout().lock();
    if !emit(&mut out, tail.backlog(), &o, look) {
        return 0;
    }
    if o.follow {
        loop {
            std::thread::sleep(Duration::from_millis(200));
            if !emit(&mut out, tail.poll(), &o, look) {
                return 0;
            }
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded lines: every kind of line the library writes, and a last line cut short.
    const SAMPLE: &str = include_str!("testdata/oplog-sample.jsonl");

    const PLAIN: Look = Look {
        colour: false,
        width: None,
    };

    fn events() -> Vec<Event> {
        SAMPLE.lines().filter_map(Event::parse).collect()
    }

    fn timeline(f: &Filter) -> Vec<String> {
        events()
            .iter()
            .filter(|e| f.keeps(e))
            .map(|e| render(e, PLAIN, false))
            .collect()
    }

    /// Strips the clock (local time) off a rendered line.
    fn body(line: &str) -> &str {
        &line[14..]
    }

    #[test]
    fn flags_take_values_spaced_or_after_an_equals_sign() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let o = parse(&args(&[
            "--agent",
            "worker",
            "--code=SEND_FAILED,PEER_NOT_FOUND",
            "-f",
        ]))
        .unwrap();
        assert_eq!(o.filter.agent.as_deref(), Some("worker"));
        assert_eq!(o.filter.codes, ["SEND_FAILED", "PEER_NOT_FOUND"]);
        assert!(o.follow);
        assert_eq!(
            parse(&args(&["--agent"])).unwrap_err(),
            "--agent needs a value"
        );
        assert!(parse(&args(&["--bogus"])).unwrap_err().contains("--bogus"));
        let w = crate::watch::parse(&args(&["--workspace=w2", "--file", "/x"])).unwrap();
        assert_eq!(
            (w.workspace.as_deref(), w.file),
            (Some("w2"), Some("/x".into()))
        );
    }

    #[test]
    fn the_timeline_says_who_what_and_how_it_ended() {
        let all = timeline(&Filter::default());
        // The cut-short last line is skipped; every other line shows.
        assert_eq!(all.len(), 15, "{all:#?}");
        let bodies: Vec<&str> = all.iter().map(|l| body(l)).collect();
        assert_eq!(bodies[0], "bootstrap pi-1  ok");
        assert_eq!(bodies[1], "peers    pi-1  ok");
        assert_eq!(
            bodies[2],
            "send     brain → worker-b \"Please review PR 7. Then report back.\"  sent"
        );
        assert_eq!(
            bodies[3],
            "send     tester → worker-b \"tests passed\"  sent, waited 452 ms for worker-b's turn"
        );
        assert_eq!(
            bodies[4],
            "send     brain → nobody \"hi\"  refused, PEER_NOT_FOUND: target agent is not a live peer (agent_not_found: agent target nobody not found)"
        );
        assert!(bodies[5].ends_with("refused, SEND_FAILED: Herdr did not accept message delivery (agent_blocked: agent w1:p2 refused (term_abc))"), "{}", bodies[5]);
        assert_eq!(
            bodies[6],
            "send     helper → worker-c (4 chars)  SEND_FAILED: gave up after waiting 300 ms for the receiver's turn; nothing was sent"
        );
        assert!(bodies[7].starts_with("peers    pi-1  refused, NOT_IN_HERDR: Herdr environment is unavailable (herdr agent list: timed out"));
        assert_eq!(bodies[8], "close    pi-1  ok");
        assert!(bodies[9].starts_with("start    pi-1  refused, START_CONFIG_NOT_FOUND: "));
        assert!(
            bodies[10].starts_with("settings settings  INVALID_SETTING (HERDR_LINK_TIMEOUT_MS=")
        );
        assert_eq!(
            bodies[11],
            "guard    codex:019a  block (herdr agent wait in an active session)"
        );
        assert_eq!(
            bodies[12],
            "follow   brain → worker-b  taken up after 812 ms"
        );
        assert_eq!(
            bodies[13],
            "follow   tester → worker-b  delivered, not taken up (worker-b was not seen working within 15000 ms of delivery (30 looks; last seen idle))"
        );
        assert!(all[0].len() > 14 && all[0].as_bytes()[2] == b':');
    }

    #[test]
    fn every_link_code_has_its_reason_in_words() {
        let base = events().remove(4);
        for r in REASONS {
            let e = Event {
                code: r.code.to_string(),
                ..base.clone()
            };
            assert!(e.failed());
            let o = e.outcome();
            assert!(o.starts_with(&format!("refused, {}: ", r.code)), "{o}");
        }
    }

    #[test]
    fn filters_by_agent_workspace_code_failure_and_time() {
        let only = |f: Filter| timeline(&f).len();
        let agent = |a: &str| Filter {
            agent: Some(a.into()),
            ..Filter::default()
        };
        // worker-b: two sends and their two follow-ups.
        assert_eq!(only(agent("worker-b")), 4);
        assert_eq!(only(agent("tester")), 2);
        assert_eq!(only(agent("pi-1")), 9);
        let ws = Filter {
            workspace: Some("w2".into()),
            ..Filter::default()
        };
        assert_eq!(only(ws), 1);
        let codes = Filter {
            codes: vec!["send_failed".into(), "not_taken_up".into()],
            ..Filter::default()
        };
        assert_eq!(only(codes), 3);
        let failures = Filter {
            failures: true,
            ..Filter::default()
        };
        // Refused and failed lines, the settings note, the guard block, not taken up.
        assert_eq!(only(failures), 8);
        let window = Filter {
            since: Some(1796278460.0),
            until: Some(1796278463.5),
            ..Filter::default()
        };
        assert_eq!(only(window), 4);
    }

    #[test]
    fn calls_behind_a_failure_on_request_and_widths_and_colours() {
        let e = &events()[7];
        let text = render(e, PLAIN, true);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[2], "    herdr agent list → timeout (301 ms)");
        // No calls under a success.
        assert_eq!(render(&events()[1], PLAIN, true).lines().count(), 1);
        let narrow = Look {
            colour: false,
            width: Some(60),
        };
        for e in events() {
            for l in render(&e, narrow, true).lines() {
                assert!(l.chars().count() <= 60, "{l}");
            }
        }
        let coloured = Look {
            colour: true,
            width: None,
        };
        assert!(render(&events()[4], coloured, false).contains("\x1b[31m"));
        assert!(render(&events()[13], coloured, false).contains("\x1b[33m"));
        assert!(!render(&events()[4], PLAIN, false).contains('\x1b'));
    }

    #[test]
    fn colours_only_on_a_terminal_without_no_color_and_widths_only_there() {
        use std::ffi::OsStr;
        let on = Look::decide(true, None, Some("xterm"), Some(80));
        assert_eq!((on.colour, on.width), (true, Some(80)));
        let no = Look::decide(true, Some(OsStr::new("1")), Some("xterm"), Some(80));
        assert_eq!((no.colour, no.width), (false, Some(80)));
        // An empty NO_COLOR does not count (no-color.org).
        assert!(Look::decide(true, Some(OsStr::new("")), None, None).colour);
        assert!(!Look::decide(true, None, Some("dumb"), None).colour);
        let piped = Look::decide(false, None, Some("xterm"), Some(80));
        assert_eq!((piped.colour, piped.width), (false, None));
        assert_eq!(Look::decide(true, None, None, None).width, Some(100));
    }

    #[test]
    fn when_takes_ages_clock_times_and_epochs() {
        let now = 1_796_278_466.0;
        assert_eq!(parse_when("30s", now), Some(now - 30.0));
        assert_eq!(parse_when("10m", now), Some(now - 600.0));
        assert_eq!(parse_when("2h", now), Some(now - 7200.0));
        assert_eq!(parse_when("1d", now), Some(now - 86400.0));
        assert_eq!(parse_when("1796278000", now), Some(1796278000.0));
        let t = parse_when("12:30", now).unwrap();
        assert!(clock(t).starts_with("12:30:00"), "{}", clock(t));
        assert_eq!(parse_when("25:00", now), None);
        assert_eq!(parse_when("soon", now), None);
        assert!(parse(&["--since".into(), "later".into()]).is_err());
        let o = parse(&[
            "--agent=brain".into(),
            "--code".into(),
            "ok,SEND_FAILED".into(),
            "-f".into(),
            "--json".into(),
        ])
        .unwrap();
        assert_eq!(o.filter.agent.as_deref(), Some("brain"));
        assert_eq!(o.filter.codes, ["ok", "SEND_FAILED"]);
        assert!(o.follow && o.json && !o.calls);
        assert!(parse(&["--bogus".into()]).is_err());
    }

    fn scratch(tag: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("herdr-link-logview-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d.join("log.jsonl")
    }

    fn append(path: &Path, s: &str) {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        f.write_all(s.as_bytes()).unwrap();
    }

    /// A file being written while read: a line without its newline waits for it; a rotation
    /// (by the library's own `append`) loses nothing and repeats nothing.
    #[test]
    fn the_tail_reads_whole_lines_across_writes_and_rotations() {
        let path = scratch("tail");
        append(&oplog::rotated(&path), "old-1\n");
        append(&path, "new-1\nnew-2\nhalf");
        let mut t = Tail::new(&path);
        assert_eq!(t.backlog(), ["old-1", "new-1", "new-2"]);
        assert!(t.poll().is_empty(), "a line without its newline waits");
        append(&path, "-done\n");
        assert_eq!(t.poll(), ["half-done"]);
        // Rotation: the next line would pass the bound, so the file is renamed first.
        append(&path, "before-rotation\n");
        oplog::append(&path, "after-rotation\n", 40).unwrap();
        assert!(std::fs::read_to_string(oplog::rotated(&path))
            .unwrap()
            .ends_with("before-rotation\n"));
        assert_eq!(t.poll(), ["before-rotation", "after-rotation"]);
        oplog::append(&path, "later\n", 1 << 20).unwrap();
        assert_eq!(t.poll(), ["later"]);
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
}
