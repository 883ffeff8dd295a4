//! Herdr's submit delay, simulated without a server process.
//!
//! Real Herdr (0.8.0 and 0.8.2, `agent.prompt`) writes the prompt's text into the pane at once,
//! schedules an Enter 300 ms later (`AGENT_PROMPT_SUBMIT_DELAY`) and answers immediately. The
//! program in the pane submits whatever its input holds when an Enter arrives, so a second
//! prompt typed inside the window joins the first one's submission.
//!
//! The fake keeps, per pane, the text typed since the last Enter and the due time of every
//! Enter not pressed yet. Whenever a command loads the state, the Enters that are due by now
//! are pressed in time order: each one submits everything typed so far (an Enter with nothing
//! typed submits nothing). Submissions reach the prompt log only when the state that no longer
//! holds them is saved, so a command that loads without saving loses nothing and a later one
//! logs them exactly once.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::state::{Loc, State};

/// Real Herdr's `AGENT_PROMPT_SUBMIT_DELAY`, in microseconds.
pub const SUBMIT_DELAY_US: u64 = 300_000;

/// Microseconds since the Unix epoch (the fake's clock for Enters).
pub fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// One `agent prompt`'s text, typed and not yet submitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Typed {
    /// The target as the caller gave it.
    pub target: String,
    /// The text typed.
    pub text: String,
}

/// A pane's input line: what is typed and which Enters are still to come.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Input {
    /// Text typed since the last Enter, one part per `agent prompt`, in typing order.
    #[serde(default)]
    pub typed: Vec<Typed>,
    /// When each scheduled Enter is due (µs since the epoch), one per `agent prompt`.
    #[serde(default)]
    pub enters_due_us: Vec<u64>,
}

impl Input {
    /// Nothing typed and no Enter pending (such an input is left out of the state file).
    pub fn is_empty(&self) -> bool {
        self.typed.is_empty() && self.enters_due_us.is_empty()
    }

    /// `agent prompt`: type the text now and schedule its Enter one submit delay later.
    pub fn type_prompt(&mut self, target: &str, text: &str, now_us: u64) {
        self.typed.push(Typed {
            target: target.to_string(),
            text: text.to_string(),
        });
        self.enters_due_us.push(now_us + SUBMIT_DELAY_US);
    }
}

impl State {
    /// Press every Enter due by `now_us`, across all panes in time order. Each submission is
    /// queued in [`State::submitted`] and written to the prompt log when this state is saved.
    pub fn press_due_enters(&mut self, now_us: u64) {
        let mut due: Vec<(u64, Loc)> = Vec::new();
        for l in self.locs() {
            for &t in &self.pane(l).input.enters_due_us {
                if t <= now_us {
                    due.push((t, l));
                }
            }
        }
        due.sort();
        for (t, l) in due {
            let p = self.pane_mut(l);
            if let Some(i) = p.input.enters_due_us.iter().position(|x| *x == t) {
                p.input.enters_due_us.remove(i);
            }
            if p.input.typed.is_empty() {
                continue;
            }
            let parts = std::mem::take(&mut p.input.typed);
            let text: String = parts.iter().map(|x| x.text.as_str()).collect();
            let record = json!({
                "target": parts[0].target,
                "pane_id": p.id,
                "name": p.name,
                "text": text,
                "parts": parts.len(),
            });
            self.submitted.borrow_mut().push(record);
        }
    }

    /// The latest Enter still to come on any pane (µs since the epoch), if any.
    pub fn last_enter_due(&self) -> Option<u64> {
        self.locs()
            .into_iter()
            .flat_map(|l| self.pane(l).input.enters_due_us.iter().copied())
            .max()
    }

    /// Whether pressed Enters produced submissions this state has not logged yet.
    pub fn has_unlogged_submissions(&self) -> bool {
        !self.submitted.borrow().is_empty()
    }

    /// Takes the submissions to log (the caller is saving this state).
    pub fn take_submissions(&self) -> Vec<Value> {
        std::mem::take(&mut *self.submitted.borrow_mut())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Pane, Tab, Workspace};

    fn world(panes: usize) -> State {
        let mut st = State::new();
        st.workspaces.push(Workspace {
            id: "w1".into(),
            label: None,
            cwd: None,
            next_tab: 2,
            next_pane: panes as u64 + 1,
            active_tab: None,
            tabs: vec![Tab {
                id: "w1:t1".into(),
                number: 1,
                label: None,
                focused_pane: None,
                panes: (1..=panes)
                    .map(|i| Pane::shell(format!("w1:p{i}"), format!("term_{i}"), None))
                    .collect(),
            }],
        });
        st
    }

    fn typed(st: &mut State, pane: usize, text: &str, at_ms: u64) {
        st.press_due_enters(at_ms * 1000);
        st.pane_mut((0, 0, pane))
            .input
            .type_prompt("t", text, at_ms * 1000);
    }

    fn texts(st: &State) -> Vec<(String, u64)> {
        st.take_submissions()
            .iter()
            .map(|v| {
                (
                    v["text"].as_str().unwrap().to_string(),
                    v["parts"].as_u64().unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn each_enter_submits_everything_typed_before_it() {
        // A at 0 (Enter 300), B at 200 (Enter 500), C at 400 (Enter 700): the Enter of A
        // submits A+B, the Enter of B submits C (typed after the first Enter), C's is empty.
        let mut st = world(1);
        typed(&mut st, 0, "A", 0);
        typed(&mut st, 0, "B", 200);
        st.press_due_enters(299_999);
        assert!(texts(&st).is_empty());
        typed(&mut st, 0, "C", 400);
        assert_eq!(texts(&st), [("AB".to_string(), 2)]);
        st.press_due_enters(499_999);
        assert!(texts(&st).is_empty());
        st.press_due_enters(500_000);
        assert_eq!(texts(&st), [("C".to_string(), 1)]);
        assert_eq!(st.last_enter_due(), Some(700_000));
        st.press_due_enters(1_000_000);
        assert!(texts(&st).is_empty());
        assert!(st.pane((0, 0, 0)).input.is_empty());
    }

    #[test]
    fn submissions_come_out_in_time_order_across_panes() {
        let mut st = world(2);
        typed(&mut st, 1, "late-pane-first", 0);
        typed(&mut st, 0, "x", 100);
        typed(&mut st, 1, "y", 500);
        st.press_due_enters(10_000_000);
        assert_eq!(
            texts(&st),
            [
                ("late-pane-first".to_string(), 1),
                ("x".to_string(), 1),
                ("y".to_string(), 1)
            ]
        );
        assert_eq!(st.last_enter_due(), None);
    }

    #[test]
    fn last_enter_due_is_the_latest_pending_one() {
        let mut st = world(2);
        typed(&mut st, 0, "a", 1000);
        typed(&mut st, 1, "b", 1100);
        assert_eq!(st.last_enter_due(), Some(1_100_000 + SUBMIT_DELAY_US));
    }
}
