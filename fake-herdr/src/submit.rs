//! Herdr's prompt path, simulated without a server process: a pane's input line.
//!
//! **0.8.0 and 0.8.2** (`agent.prompt`): the prompt's text is written into the pane at once, an
//! Enter is scheduled 300 ms later (`AGENT_PROMPT_SUBMIT_DELAY`), and the CLI answers
//! immediately. The program in the pane submits whatever its input holds when an Enter
//! arrives, so a second prompt typed inside the window joins the first one's submission.
//!
//! **0.9.0** (`queue_agent_prompt` and the pane's input actor, `src/pty/actor/unix.rs`): a
//! prompt becomes one submission on the pane's input queue. The actor writes the text, waits
//! 300 ms from the end of the flush, writes Enter, and only then answers the CLI; while a
//! submission is in flight it takes nothing else from the queue, so the next one's text comes
//! after this one's Enter. A caller that gives up does not withdraw its submission: it is still
//! typed in its turn. The queue holds 1024 commands (then `pty input queue is full`).
//!
//! This module is the input line alone: what is typed, which Enters are still to come, which
//! 0.9 submissions wait in the queue, and what each Enter submits. It knows nothing of panes or
//! state files; `state.rs` presses the due Enters of every pane when a command loads the world.

use serde::{Deserialize, Serialize};

/// Real Herdr's `AGENT_PROMPT_SUBMIT_DELAY`, in microseconds.
pub const SUBMIT_DELAY_US: u64 = 300_000;

/// Herdr 0.9.0's `ACTOR_COMMAND_BUFFER`: submissions that can wait in a pane's input queue.
pub const QUEUE_CAP: usize = 1024;

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
    /// 0.9.0: the submission it belongs to (see [`Queued::id`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// A 0.9.0 submission waiting in the pane's input queue: its text is typed when the one before
/// it has had its Enter, and its own Enter one submit delay later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Queued {
    /// Identifies the submission to the CLI call waiting for it.
    pub id: String,
    /// The text, and the target as the caller gave it.
    pub typed: Typed,
    /// When the actor writes the text (µs since the epoch).
    pub type_at_us: u64,
    /// When it writes the Enter, and the CLI answers.
    pub enter_at_us: u64,
}

/// What one Enter submitted.
#[derive(Debug, Clone, PartialEq)]
pub struct Submitted {
    /// When the Enter came (µs since the epoch).
    pub at_us: u64,
    /// The texts it submitted together, in typing order (more than one: glued prompts).
    pub parts: Vec<Typed>,
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
    /// 0.9.0: submissions still waiting for their text to be typed, in queue order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queued: Vec<Queued>,
}

impl Input {
    /// Nothing typed, queued or pending (such an input is left out of the state file).
    pub fn is_empty(&self) -> bool {
        self.typed.is_empty() && self.enters_due_us.is_empty() && self.queued.is_empty()
    }

    /// 0.8: type the text now and schedule its Enter one submit delay later.
    pub fn type_prompt(&mut self, target: &str, text: &str, now_us: u64) {
        self.typed.push(Typed {
            target: target.to_string(),
            text: text.to_string(),
            id: None,
        });
        self.enters_due_us.push(now_us + SUBMIT_DELAY_US);
    }

    /// 0.9: queue a submission behind every one already in flight or queued; returns when its
    /// Enter comes, or `None` when the queue is full.
    pub fn queue_submission(
        &mut self,
        id: String,
        target: &str,
        text: &str,
        now_us: u64,
    ) -> Option<u64> {
        if self.queued.len() >= QUEUE_CAP {
            return None;
        }
        let type_at_us = self.last_enter_due().map_or(now_us, |t| t.max(now_us));
        let enter_at_us = type_at_us + SUBMIT_DELAY_US;
        self.queued.push(Queued {
            typed: Typed {
                target: target.to_string(),
                text: text.to_string(),
                id: Some(id.clone()),
            },
            id,
            type_at_us,
            enter_at_us,
        });
        Some(enter_at_us)
    }

    /// The latest Enter still to come (µs since the epoch), if any.
    pub fn last_enter_due(&self) -> Option<u64> {
        self.enters_due_us
            .iter()
            .copied()
            .chain(self.queued.iter().map(|q| q.enter_at_us))
            .max()
    }

    /// The ids of 0.9 submissions not yet submitted, typed or still queued (lost if the pane
    /// goes now).
    pub fn unsubmitted(&self) -> impl Iterator<Item = &str> + '_ {
        self.typed
            .iter()
            .filter_map(|t| t.id.as_deref())
            .chain(self.queued.iter().map(|q| q.id.as_str()))
    }

    /// Types and presses everything due by `now_us`, in time order (an Enter before a text
    /// typed at the same moment): each Enter submits everything typed so far, and an Enter with
    /// nothing typed submits nothing. Returns the submissions.
    pub fn press(&mut self, now_us: u64) -> Vec<Submitted> {
        // (time, 0 = Enter / 1 = a queued text is typed)
        let mut events: Vec<(u64, u8)> = self
            .enters_due_us
            .iter()
            .filter(|t| **t <= now_us)
            .map(|t| (*t, 0))
            .chain(
                self.queued
                    .iter()
                    .filter(|q| q.type_at_us <= now_us)
                    .map(|q| (q.type_at_us, 1)),
            )
            .collect();
        events.sort_unstable();
        let mut out = Vec::new();
        for (t, kind) in events {
            if kind == 1 {
                let q = self.queued.remove(0);
                self.typed.push(q.typed);
                self.enters_due_us.push(q.enter_at_us);
                if q.enter_at_us <= now_us {
                    // Its Enter is due as well: pressed in its turn below.
                    self.press_enter_at(q.enter_at_us, &mut out);
                }
                continue;
            }
            if self.enters_due_us.contains(&t) {
                self.press_enter_at(t, &mut out);
            }
        }
        out
    }

    fn press_enter_at(&mut self, t: u64, out: &mut Vec<Submitted>) {
        if let Some(i) = self.enters_due_us.iter().position(|x| *x == t) {
            self.enters_due_us.remove(i);
        }
        if !self.typed.is_empty() {
            out.push(Submitted {
                at_us: t,
                parts: std::mem::take(&mut self.typed),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(subs: &[Submitted]) -> Vec<(String, usize)> {
        subs.iter()
            .map(|s| {
                (
                    s.parts.iter().map(|p| p.text.as_str()).collect(),
                    s.parts.len(),
                )
            })
            .collect()
    }

    fn typed(input: &mut Input, text: &str, at_ms: u64) -> Vec<Submitted> {
        let done = input.press(at_ms * 1000);
        input.type_prompt("t", text, at_ms * 1000);
        done
    }

    #[test]
    fn each_enter_submits_everything_typed_before_it() {
        // A at 0 (Enter 300), B at 200 (Enter 500), C at 400 (Enter 700): the Enter of A
        // submits A+B, the Enter of B submits C (typed after the first Enter), C's is empty.
        let mut i = Input::default();
        assert!(typed(&mut i, "A", 0).is_empty());
        assert!(typed(&mut i, "B", 200).is_empty());
        assert!(i.press(299_999).is_empty());
        assert_eq!(texts(&typed(&mut i, "C", 400)), [("AB".to_string(), 2)]);
        assert!(i.press(499_999).is_empty());
        assert_eq!(texts(&i.press(500_000)), [("C".to_string(), 1)]);
        assert_eq!(i.last_enter_due(), Some(700_000));
        assert!(i.press(1_000_000).is_empty());
        assert!(i.is_empty());
    }

    #[test]
    fn queued_submissions_are_typed_one_after_another_enter() {
        // Three 0.9 prompts at the same moment: one submission each, 300 ms apart, whatever
        // moment the input is looked at.
        let mut i = Input::default();
        let enters: Vec<u64> = ["A", "B", "C"]
            .iter()
            .enumerate()
            .map(|(k, t)| i.queue_submission(format!("s{k}"), "t", t, 0).unwrap())
            .collect();
        assert_eq!(enters, [300_000, 600_000, 900_000]);
        assert_eq!(i.unsubmitted().collect::<Vec<_>>(), ["s0", "s1", "s2"]);
        // A is typed at once, its Enter not yet pressed.
        assert!(i.press(100_000).is_empty());
        assert_eq!(i.typed.len(), 1);
        assert_eq!(i.unsubmitted().collect::<Vec<_>>(), ["s0", "s1", "s2"]);
        let mut all = i.press(600_000);
        assert_eq!(texts(&all), [("A".into(), 1), ("B".into(), 1)]);
        assert_eq!(i.last_enter_due(), Some(900_000));
        // One more, queued while C is in flight: after C's Enter.
        assert_eq!(
            i.queue_submission("s3".into(), "t", "D", 650_000),
            Some(1_200_000)
        );
        all.extend(i.press(5_000_000));
        assert_eq!(
            texts(&all),
            [
                ("A".into(), 1),
                ("B".into(), 1),
                ("C".into(), 1),
                ("D".into(), 1)
            ]
        );
        let at: Vec<u64> = all.iter().map(|s| s.at_us).collect();
        assert_eq!(at, [300_000, 600_000, 900_000, 1_200_000]);
        assert!(i.is_empty());
    }

    #[test]
    fn a_queued_submission_on_an_idle_pane_starts_now_and_the_queue_is_bounded() {
        let mut i = Input::default();
        assert_eq!(
            i.queue_submission("a".into(), "t", "x", 5_000_000),
            Some(5_300_000)
        );
        assert_eq!(texts(&i.press(5_300_000)), [("x".into(), 1)]);
        assert_eq!(
            i.queue_submission("b".into(), "t", "y", 9_000_000),
            Some(9_300_000)
        );
        for k in 1..QUEUE_CAP {
            assert!(i
                .queue_submission(format!("q{k}"), "t", "z", 9_000_000)
                .is_some());
        }
        assert_eq!(i.queue_submission("full".into(), "t", "z", 9_000_000), None);
    }
}
