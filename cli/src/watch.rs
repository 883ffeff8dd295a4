//! `herdr-link watch`: a live full-screen view of a workspace's Link traffic for an operator's
//! pane. The agents with their Herdr state and delivery queue (deliveries waiting for or holding
//! each receiver's turn), and the messages as the operator log records them, failures and
//! deliveries not taken up highlighted with their cause. Reads the log like `herdr-link log`
//! ([`crate::logview::Tail`]) and asks Herdr only `agent list` (and `pane get` once, for the
//! workspace of its own pane). Built on ratatui and crossterm, in the binary only.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use herdr_link::env::HerdrEnv;
use herdr_link::follow;
use herdr_link::herdr::records::{agent_list, PaneRecord};
use herdr_link::herdr::Herdr;
use ratatui::layout::{Constraint, Direction, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, List, ListItem, Paragraph, Row, Table};
use ratatui::Frame;

use crate::logview::{clock, walk_flags, Event, Tail};

/// `herdr-link watch --help`.
pub const USAGE: &str = "usage: herdr-link watch [--workspace ID] [--file PATH]

A live full-screen view of Herdr Link in a workspace: its agents with their Herdr state and their
delivery queue (deliveries waiting for, or holding, each receiver's turn), and the messages as
they flow (sent, refused and why, waited for a turn, taken up, delivered but not taken up).
Failures are shown in red with their cause. q or Esc ends it.

  --workspace ID   the workspace to show (default: the one of this pane, $HERDR_PANE_ID)
  --file PATH      read PATH instead of the operator log Link writes

Run from Herdr: the plugin action \"Herdr Link: watch\" opens it in a new pane.";

/// Messages kept on screen, at most.
const KEPT: usize = 500;
/// How often the agents are asked for.
const AGENTS_EVERY: Duration = Duration::from_secs(1);
/// How often the log is read and the screen drawn.
const TICK: Duration = Duration::from_millis(200);

/// One agent of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// Its Agent Name.
    pub name: String,
    /// Herdr's state (`idle`, `working`, …).
    pub state: String,
    /// Deliveries to it waiting for its turn or holding it now.
    pub queue: usize,
}

/// What the screen shows.
#[derive(Debug, Default)]
pub struct View {
    /// The workspace shown (`None`: every workspace).
    pub workspace: Option<String>,
    /// Its agents, as last asked.
    pub agents: Vec<Agent>,
    /// Why the agents are not shown (no Herdr here, a failed call).
    pub agents_note: Option<String>,
    /// The messages and other lines, oldest first.
    pub events: VecDeque<Event>,
    /// The log file read.
    pub source: String,
}

impl View {
    /// Takes in one log line: kept when it is about the shown workspace (a send or follow-up
    /// with that workspace, or any line when no workspace is chosen or it names none).
    pub fn push(&mut self, e: Event) {
        let shown = match (&self.workspace, &e.message) {
            (Some(w), Some(m)) => m.workspace.is_empty() || m.workspace == *w,
            _ => true,
        };
        if !shown {
            return;
        }
        self.events.push_back(e);
        while self.events.len() > KEPT {
            self.events.pop_front();
        }
    }

    /// Deliveries not taken up among the kept lines.
    fn not_taken_up(&self) -> usize {
        self.events
            .iter()
            .filter(|e| e.code == follow::NOT_TAKEN_UP)
            .count()
    }

    /// Failures (not counting "not taken up") among the kept lines.
    fn failures(&self) -> usize {
        self.events
            .iter()
            .filter(|e| e.failed() && e.code != follow::NOT_TAKEN_UP)
            .count()
    }
}

/// The style of a line: red for a failure, yellow for a delivery not taken up, green when it
/// was taken up.
fn style_of(e: &Event) -> Style {
    if e.code == follow::NOT_TAKEN_UP {
        Style::default()
            .fg(Color::Yellow)
            .add_modifier(Modifier::BOLD)
    } else if e.failed() {
        Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
    } else if e.code == follow::TAKEN_UP {
        Style::default().fg(Color::Green)
    } else {
        Style::default()
    }
}

/// One message line: time, what, who, preview, outcome.
fn line_of(e: &Event) -> Line<'static> {
    let preview = e.preview();
    Line::from(vec![
        Span::styled(clock(e.ts), Style::default().fg(Color::DarkGray)),
        Span::raw(format!("  {:<8} {}", e.what(), e.who())),
        Span::styled(preview, Style::default().fg(Color::DarkGray)),
        Span::raw("  "),
        Span::styled(e.outcome(), style_of(e)),
    ])
}

fn state_style(state: &str) -> Style {
    match state {
        "working" => Style::default().fg(Color::Green),
        "blocked" => Style::default().fg(Color::Red),
        "idle" | "done" => Style::default(),
        _ => Style::default().fg(Color::DarkGray),
    }
}

/// Draws the whole view.
pub fn draw(f: &mut Frame, v: &View) {
    let area = f.area();
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Length(1), Constraint::Min(3)])
        .split(area);
    let title = format!(
        " Herdr Link watch — {} — {} failed, {} not taken up — q quits ",
        v.workspace
            .as_deref()
            .map_or("every workspace".to_string(), |w| format!("workspace {w}")),
        v.failures(),
        v.not_taken_up()
    );
    f.render_widget(
        Paragraph::new(title).style(Style::default().add_modifier(Modifier::REVERSED)),
        rows[0],
    );
    let cols = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Length(34), Constraint::Min(20)])
        .split(rows[1]);
    let agents: Vec<Row> = v
        .agents
        .iter()
        .map(|a| {
            let queue = match a.queue {
                0 => String::new(),
                n => format!("{n} in turn"),
            };
            Row::new(vec![
                Cell::from(a.name.clone()),
                Cell::from(a.state.clone()).style(state_style(&a.state)),
                Cell::from(queue).style(Style::default().fg(Color::Cyan)),
            ])
        })
        .collect();
    let mut agents_block = Block::default().borders(Borders::ALL).title(" agents ");
    if let Some(note) = &v.agents_note {
        agents_block = agents_block.title_bottom(note.clone());
    }
    f.render_widget(
        Table::new(
            agents,
            [
                Constraint::Min(10),
                Constraint::Length(8),
                Constraint::Length(10),
            ],
        )
        .header(
            Row::new(vec!["agent", "state", "queue"])
                .style(Style::default().add_modifier(Modifier::BOLD)),
        )
        .block(agents_block),
        cols[0],
    );
    let height = cols[1].height.saturating_sub(2) as usize;
    let items: Vec<ListItem> = v
        .events
        .iter()
        .skip(v.events.len().saturating_sub(height))
        .map(|e| ListItem::new(line_of(e)))
        .collect();
    f.render_widget(
        List::new(items).block(
            Block::default()
                .borders(Borders::ALL)
                .title(format!(" messages ({}) ", v.source)),
        ),
        cols[1],
    );
}

/// Asks Herdr for the workspace's agents, with each one's delivery queue.
fn agents(herdr: &Herdr, workspace: Option<&str>) -> Result<Vec<Agent>, String> {
    let v = herdr
        .agent_list()
        .map_err(|e| format!(" herdr agent list: {} ", e.detail()))?;
    let socket = herdr_link::env::socket_path();
    let turns = match herdr_link::turn::survey() {
        Ok((dir, _)) => std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    let mut out: Vec<Agent> = agent_list(&v)
        .into_iter()
        .filter(|a| workspace.is_none() || a.workspace_id.as_deref() == workspace)
        .filter_map(|a| {
            let name = a.name.clone()?;
            let key = a
                .pane_id
                .as_deref()
                .map(|p| format!("{:016x}.", herdr_link::turn::receiver_key(&socket, p)));
            let queue = key.map_or(0, |k| {
                turns
                    .iter()
                    .filter(|f| {
                        f.strip_prefix(&k)
                            .is_some_and(|t| t.len() == 20 && t.bytes().all(|b| b.is_ascii_digit()))
                    })
                    .count()
            });
            Some(Agent {
                name,
                state: a.state.as_str().to_string(),
                queue,
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// A parsed `herdr-link watch` command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// The workspace to show.
    pub workspace: Option<String>,
    /// The log file to read.
    pub file: Option<PathBuf>,
}

/// Parses `herdr-link watch`'s arguments.
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    walk_flags(args, |flag, value| {
        match flag {
            "--workspace" => o.workspace = Some(value()?),
            "--file" => o.file = Some(PathBuf::from(value()?)),
            other => return Err(format!("watch: unexpected argument {other:?}")),
        }
        Ok(())
    })?;
    Ok(o)
}

/// The Herdr this pane is in, when the gate's variables name one (else `HERDR_BIN_PATH` or the
/// `herdr` on PATH, for a pane of a plugin action).
fn herdr_here() -> Option<(Herdr, Option<String>)> {
    let bin = std::env::var("HERDR_BIN_PATH")
        .ok()
        .filter(|b| !b.is_empty())
        .or_else(|| herdr_link::env::herdr_on_path().map(|p| p.display().to_string()))?;
    let pane = std::env::var("HERDR_PANE_ID")
        .ok()
        .filter(|p| !p.is_empty());
    let herdr = Herdr::new(&HerdrEnv {
        bin,
        pane_id: pane.clone().unwrap_or_default(),
    });
    Some((herdr, pane))
}

/// Runs `herdr-link watch` until q, Esc or Ctrl-C.
pub fn run(o: Options) -> i32 {
    use crossterm::event::{self, Event as Key, KeyCode, KeyModifiers};
    let Some(path) = crate::logview::log_file(o.file.clone()) else {
        eprintln!(
            "herdr-link watch: no log file: neither HERDR_LINK_LOG, XDG_STATE_HOME nor HOME is set"
        );
        return 1;
    };
    // Watching writes nothing to the log itself.
    std::env::set_var("HERDR_LINK_LOG_OFF", "1");
    let herdr = herdr_here();
    let workspace = o.workspace.clone().or_else(|| {
        let (h, pane) = herdr.as_ref()?;
        PaneRecord::from_response(&h.pane_get(pane.as_deref()?).ok()?)?.workspace_id
    });
    let mut view = View {
        workspace,
        source: path.display().to_string(),
        ..View::default()
    };
    let mut tail = Tail::new(&path);
    for line in tail.backlog() {
        if let Some(e) = Event::parse(&line) {
            view.push(e);
        }
    }
    let mut terminal = ratatui::init();
    let mut asked: Option<Instant> = None;
    let code = loop {
        if asked.map_or(true, |t| t.elapsed() >= AGENTS_EVERY) {
            match &herdr {
                Some((h, _)) => match agents(h, view.workspace.as_deref()) {
                    Ok(a) => {
                        view.agents = a;
                        view.agents_note = None;
                    }
                    Err(e) => view.agents_note = Some(e),
                },
                None => view.agents_note = Some(" no herdr found ".into()),
            }
            asked = Some(Instant::now());
        }
        for line in tail.poll() {
            if let Some(e) = Event::parse(&line) {
                view.push(e);
            }
        }
        if terminal.draw(|f| draw(f, &view)).is_err() {
            break 1;
        }
        match event::poll(TICK) {
            Ok(true) => match event::read() {
                Ok(Key::Key(k))
                    if k.code == KeyCode::Char('q')
                        || k.code == KeyCode::Esc
                        || (k.code == KeyCode::Char('c')
                            && k.modifiers.contains(KeyModifiers::CONTROL)) =>
                {
                    break 0
                }
                Ok(_) => {}
                Err(_) => break 1,
            },
            Ok(false) => {}
            Err(_) => break 1,
        }
    };
    ratatui::restore();
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::buffer::Buffer;
    use ratatui::Terminal;

    const SAMPLE: &str = include_str!("testdata/oplog-sample.jsonl");

    fn view(workspace: Option<&str>) -> View {
        let mut v = View {
            workspace: workspace.map(str::to_string),
            source: "log.jsonl".into(),
            agents: vec![
                Agent {
                    name: "brain".into(),
                    state: "working".into(),
                    queue: 0,
                },
                Agent {
                    name: "worker-b".into(),
                    state: "idle".into(),
                    queue: 2,
                },
            ],
            ..View::default()
        };
        for e in SAMPLE.lines().filter_map(Event::parse) {
            v.push(e);
        }
        v
    }

    fn render(v: &View, w: u16, h: u16) -> Buffer {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| draw(f, v)).unwrap();
        t.backend().buffer().clone()
    }

    fn text(b: &Buffer) -> Vec<String> {
        (0..b.area.height)
            .map(|y| {
                (0..b.area.width)
                    .map(|x| b[(x, y)].symbol().to_string())
                    .collect::<String>()
            })
            .collect()
    }

    /// The row and column where `needle` starts.
    fn find(rows: &[String], needle: &str) -> Option<(u16, u16)> {
        rows.iter().enumerate().find_map(|(y, r)| {
            r.find(needle)
                .map(|i| (y as u16, r[..i].chars().count() as u16))
        })
    }

    #[test]
    fn agents_queues_and_messages_with_failures_highlighted() {
        let v = view(Some("w1"));
        let b = render(&v, 160, 24);
        let rows = text(&b);
        let all = rows.join("\n");
        assert!(
            rows[0].contains("workspace w1 — 7 failed, 1 not taken up"),
            "{all}"
        );
        // Agents with Herdr's state and the queue of deliveries in turn.
        assert!(all.contains("brain") && all.contains("working"), "{all}");
        assert!(find(&rows, "2 in turn").is_some(), "{all}");
        // Messages as they flow; another workspace's send is not shown.
        assert!(
            all.contains("brain → worker-b \"Please review PR 7. Then report back.\"  sent"),
            "{all}"
        );
        assert!(
            all.contains("sent, waited 452 ms for worker-b's turn"),
            "{all}"
        );
        assert!(!all.contains("other → far"), "{all}");
        // A failure is red and bold with its cause; not taken up is yellow; taken up green.
        let (y, x) = find(&rows, "refused, PEER_NOT_FOUND").unwrap();
        assert_eq!(b[(x, y)].fg, Color::Red);
        assert!(b[(x, y)].modifier.contains(Modifier::BOLD));
        assert!(
            rows[y as usize].contains("agent_not_found"),
            "the cause is shown"
        );
        let (y, x) = find(&rows, "delivered, not taken up").unwrap();
        assert_eq!(b[(x, y)].fg, Color::Yellow);
        let (y, x) = find(&rows, "taken up after 812 ms").unwrap();
        assert_eq!(b[(x, y)].fg, Color::Green);
        let (y, x) = find(&rows, "working").unwrap();
        assert_eq!(b[(x, y)].fg, Color::Green);
    }

    #[test]
    fn a_small_terminal_shows_the_newest_messages_and_every_workspace_without_one() {
        let v = view(None);
        let rows = text(&render(&v, 100, 8));
        let all = rows.join("\n");
        assert!(rows[0].contains("every workspace"), "{all}");
        // 8 rows: the title, two borders, five messages: the newest ones.
        assert!(all.contains("other → far"), "{all}");
        assert!(!all.contains("bootstrap"), "{all}");
        let mut noted = view(None);
        noted.agents.clear();
        noted.agents_note = Some(" no herdr found ".into());
        assert!(text(&render(&noted, 100, 8))
            .join("\n")
            .contains("no herdr found"));
    }

    #[test]
    fn options() {
        assert_eq!(parse(&[]), Ok(Options::default()));
        let o = parse(&["--workspace=w2".into(), "--file".into(), "/x".into()]).unwrap();
        assert_eq!(o.workspace.as_deref(), Some("w2"));
        assert_eq!(o.file, Some(PathBuf::from("/x")));
        assert!(parse(&["--bogus".into()]).is_err());
    }
}
