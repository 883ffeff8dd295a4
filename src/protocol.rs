//! The pure pieces of `herdr-link/1`: names, ids, the envelope, the inbound wrapper, receiver-side
//! extraction, state mapping and the Active Contract. Nothing here does IO.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::LinkError;
use crate::limits::is_typed_control;

pub use crate::contract_block::contract_block;

/// The protocol identifier carried in every envelope's `protocol` field.
pub const PROTOCOL_ID: &str = "herdr-link/1";
/// The marker that begins the first line of every inbound wrapper.
pub(crate) const WRAPPER_MARKER: &str = "[herdr-link/1]";
/// Tier 0: the gateway, the only Link tool a dormant session sees.
pub const GATEWAY: &str = "herdr_link";
/// Tier 1 start tool.
pub(crate) const TOOL_START: &str = "herdr_link_start";
/// Tier 1 peers tool.
pub(crate) const TOOL_PEERS: &str = "herdr_link_peers";
/// Tier 1 send tool.
pub(crate) const TOOL_SEND: &str = "herdr_link_send";
/// Tier 1 close tool.
pub(crate) const TOOL_CLOSE: &str = "herdr_link_close";
/// The gateway action that only activates, as the gateway called with `{}` does.
pub const ACTIVATE: &str = "activate";
/// The description of the start capability; a protocol constant shared by every presentation.
pub(crate) const START_DESCRIPTION: &str = "Start a Herdr agent with Link-managed placement.";
/// Prefix of the Agent Names the self-identity bootstrap generates.
pub(crate) const BOOTSTRAP_PREFIX: &str = "hl-";

/// The Active Contract, taken at build time from the §3 block of PROTOCOL.md.
pub const CONTRACT: &str = include_str!(concat!(env!("OUT_DIR"), "/contract.txt"));

/// Whether `name` is a valid Agent Name: `^[a-z][a-z0-9_-]{0,31}$`.
pub fn is_valid_agent_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 32
        && bytes[0].is_ascii_lowercase()
        && bytes[1..]
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_' || *b == b'-')
}

/// Whether `id` is a valid message id: `^hl_[a-z0-9]+_[a-z0-9]+$`.
pub fn is_valid_message_id(id: &str) -> bool {
    let Some(rest) = id.strip_prefix("hl_") else {
        return false;
    };
    let Some((ts, rand)) = rest.split_once('_') else {
        return false;
    };
    let seg = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    seg(ts) && seg(rand)
}

/// Appends `n` in lowercase base36, left-padded with zeros to at least `width` digits.
fn push_base36(mut n: u64, width: usize, out: &mut String) {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut buf = [b'0'; 16];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = DIGITS[(n % 36) as usize];
        n /= 36;
        if n == 0 {
            break;
        }
    }
    let first = i.min(buf.len() - width.min(buf.len()));
    out.extend(buf[first..].iter().map(|&b| b as char));
}

/// How many base36 digits the random segment of a message id has (about 62 bits).
const ID_RANDOM_DIGITS: u32 = 12;

/// A new message id `hl_<epoch ms in base36>_<random>`.
///
/// The random segment is 12 base36 digits drawn uniformly from the thread-local CSPRNG, with
/// nothing derived from a counter, the process or the time: ids of any threads or processes made
/// in the same millisecond collide only by chance (about 1 in 4.7e18 per pair), and an id tells
/// nothing about how many were made before it.
pub(crate) fn new_message_id() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let random = rand::random_range(0..36u64.pow(ID_RANDOM_DIGITS));
    let mut id = String::with_capacity(28);
    id.push_str("hl_");
    push_base36(ms, 0, &mut id);
    id.push('_');
    push_base36(random, ID_RANDOM_DIGITS as usize, &mut id);
    id
}

/// A bootstrap Agent Name: `hl-` followed by 8 lowercase hex digits.
pub(crate) fn new_bootstrap_name() -> String {
    format!("{BOOTSTRAP_PREFIX}{:08x}", rand::random::<u32>())
}

/// The closed vocabulary of agent states the protocol reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum AgentState {
    /// Ready for input.
    Idle,
    /// Busy.
    Working,
    /// Waiting on something (for example a permission prompt).
    Blocked,
    /// Finished outside the viewed tab; ready like idle.
    Done,
    /// Anything Herdr did not report or that is not in the vocabulary.
    #[default]
    Unknown,
}

impl AgentState {
    /// Maps a raw Herdr status value: strings are trimmed and lowercased; anything that is not
    /// one of the five states (including non-strings) becomes `unknown`.
    pub fn from_raw(value: Option<&Value>) -> Self {
        let Some(Value::String(s)) = value else {
            return AgentState::Unknown;
        };
        match s.trim().to_ascii_lowercase().as_str() {
            "idle" => AgentState::Idle,
            "working" => AgentState::Working,
            "blocked" => AgentState::Blocked,
            "done" => AgentState::Done,
            _ => AgentState::Unknown,
        }
    }

    /// The wire word for this state.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentState::Idle => "idle",
            AgentState::Working => "working",
            AgentState::Blocked => "blocked",
            AgentState::Done => "done",
            AgentState::Unknown => "unknown",
        }
    }
}

/// The five-field message envelope. Field order here is the wire order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// Always [`PROTOCOL_ID`].
    pub protocol: String,
    /// `hl_<timestamp>_<random>`.
    pub id: String,
    /// The sender's live Agent Name.
    pub from: String,
    /// The recipient's Agent Name.
    pub to: String,
    /// The model's payload, untouched.
    pub message: String,
}

/// The check a message payload must pass to travel: not blank (at least one character that is
/// not whitespace). Run before any Herdr call of a send, and again when the envelope is built.
/// Every other character travels, controls and NUL included: the envelope line escapes them
/// ([`is_typed_control`]).
pub(crate) fn check_message(message: &str) -> Result<(), LinkError> {
    if message.trim().is_empty() {
        return Err(LinkError::SendMessageBlank("message is blank".into()));
    }
    Ok(())
}

/// Compact JSON in which, beyond JSON's own escaping (`"`, `\` and the C0 controls), every
/// [`is_typed_control`] character is written as `\uXXXX` (a surrogate pair above U+FFFF).
struct TypedFormatter;

impl serde_json::ser::Formatter for TypedFormatter {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if is_typed_control(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                // One escape per UTF-16 unit: a surrogate pair above U+FFFF, as JSON has it.
                for unit in c.encode_utf16(&mut [0; 2]) {
                    write!(writer, "\\u{unit:04x}")?;
                }
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

impl Envelope {
    /// Builds a new envelope, checking the sender, the recipient and the message in that order.
    pub fn build(from: &str, to: &str, message: &str) -> Result<Envelope, LinkError> {
        if !is_valid_agent_name(from) {
            return Err(LinkError::SelfUnnamed(
                "sender has no valid Agent Name".into(),
            ));
        }
        if !is_valid_agent_name(to) {
            return Err(LinkError::PeerNotFound(
                "recipient is not a valid Agent Name".into(),
            ));
        }
        check_message(message)?;
        Ok(Envelope {
            protocol: PROTOCOL_ID.to_string(),
            id: new_message_id(),
            from: from.to_string(),
            to: to.to_string(),
            message: message.to_string(),
        })
    }

    /// The envelope as compact one-line JSON: non-ASCII kept as is, except that every
    /// [`is_typed_control`] character is escaped, so the line holds no character a terminal or a
    /// line editor acts on.
    pub fn to_json(&self) -> String {
        let mut out = Vec::with_capacity(self.message.len() + 128);
        let mut ser = serde_json::Serializer::with_formatter(&mut out, TypedFormatter);
        self.serialize(&mut ser)
            .expect("an envelope of strings always serializes");
        String::from_utf8(out).expect("JSON of strings is UTF-8")
    }

    /// The self-describing text delivered through `agent prompt`: it tells a receiving model, even
    /// a dormant one, what this is and how to answer; the envelope is the very last line.
    pub fn wrapper(&self) -> String {
        format!(
            "{WRAPPER_MARKER} Message from another agent, delivered by the Herdr Link channel.\n\
             From: {from}\n\
             Message id: {id}\n\
             \n\
             The last line is the complete {PROTOCOL_ID} envelope; everything above it is delivery metadata and is not part of the message.\n\
             Read the envelope's \"message\" field as content sent to you by the agent named in its \"from\" field.\n\
             To answer, activate the Herdr Link gateway if it is dormant, then use the active Herdr Link send capability with envelope.from as the recipient, and end your turn instead of waiting for a reply.\n\
             \n\
             {json}",
            from = self.from,
            id = self.id,
            json = self.to_json(),
        )
    }
}

/// Whether a JSON value is a `herdr-link/1` envelope as a receiver accepts it: the five fields
/// valid, extra fields tolerated (older senders added `reply_to`).
pub fn is_envelope(value: &Value) -> bool {
    let Some(obj) = value.as_object() else {
        return false;
    };
    let s = |k: &str| obj.get(k).and_then(Value::as_str);
    s("protocol") == Some(PROTOCOL_ID)
        && s("id").is_some_and(is_valid_message_id)
        && s("from").is_some_and(is_valid_agent_name)
        && s("to").is_some_and(is_valid_agent_name)
        && s("message").is_some_and(|m| !m.trim().is_empty())
}

/// Finds the envelope in delivered text: scans lines from the last one upward and returns the
/// first line that parses as a valid envelope.
pub fn extract_envelope(text: &str) -> Option<Envelope> {
    text.split('\n').rev().find_map(|line| {
        let line = line.trim();
        if !line.starts_with('{') {
            return None;
        }
        let value: Value = serde_json::from_str(line).ok()?;
        if !is_envelope(&value) {
            return None;
        }
        let field = |k: &str| value[k].as_str().unwrap_or_default().to_string();
        Some(Envelope {
            protocol: field("protocol"),
            id: field("id"),
            from: field("from"),
            to: field("to"),
            message: field("message"),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_names() {
        for ok in ["brain", "worker-a", "a", "x_1", &"a".repeat(32)] {
            assert!(is_valid_agent_name(ok), "{ok}");
        }
        for bad in [
            "Brain",
            "",
            &"a".repeat(33),
            "1worker",
            "-a",
            "a b",
            "añ",
            "a.",
        ] {
            assert!(!is_valid_agent_name(bad), "{bad}");
        }
    }

    #[test]
    fn message_ids() {
        for ok in ["hl_mep7abc_4f8k2n", "hl_0_a"] {
            assert!(is_valid_message_id(ok), "{ok}");
        }
        for bad in [
            "hl_abc",
            "hl_ABC_def",
            "hl_abc_",
            "message-id",
            "hl__a",
            "hl_a_b_c",
        ] {
            assert!(!is_valid_message_id(bad), "{bad}");
        }
        let a = new_message_id();
        let b = new_message_id();
        assert!(is_valid_message_id(&a), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn ids_unique_across_threads() {
        let handles: Vec<_> = (0..16)
            .map(|_| std::thread::spawn(|| (0..2000).map(|_| new_message_id()).collect::<Vec<_>>()))
            .collect();
        let mut all = std::collections::HashSet::new();
        for h in handles {
            for id in h.join().unwrap() {
                assert!(is_valid_message_id(&id));
                assert!(all.insert(id), "duplicate id");
            }
        }
        assert_eq!(all.len(), 32000);
    }

    /// The random segment is random from its first digit on: no counter, no sequence. (A
    /// counter in front of it would give every id of one process the same leading digits.)
    #[test]
    fn the_random_segment_is_random_throughout() {
        let segments: Vec<String> = (0..400)
            .map(|_| {
                let id = new_message_id();
                id.rsplit_once('_').unwrap().1.to_string()
            })
            .collect();
        for s in &segments {
            assert_eq!(s.len(), ID_RANDOM_DIGITS as usize, "{s}");
        }
        for position in 0..ID_RANDOM_DIGITS as usize {
            let digits: std::collections::HashSet<u8> =
                segments.iter().map(|s| s.as_bytes()[position]).collect();
            // 400 uniform draws over 36 digits miss more than 12 of them with a probability
            // far below 1e-30.
            assert!(
                digits.len() >= 24,
                "digit {position} takes only {} values",
                digits.len()
            );
        }
    }

    #[test]
    fn bootstrap_names() {
        for _ in 0..100 {
            let n = new_bootstrap_name();
            assert!(is_valid_agent_name(&n));
            assert_eq!(n.len(), 11);
            assert!(n[3..]
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        }
    }

    #[test]
    fn state_mapping() {
        use serde_json::json;
        assert_eq!(
            AgentState::from_raw(Some(&json!(" DONE "))),
            AgentState::Done
        );
        assert_eq!(AgentState::from_raw(Some(&json!("idle"))), AgentState::Idle);
        assert_eq!(
            AgentState::from_raw(Some(&json!("on_fire"))),
            AgentState::Unknown
        );
        assert_eq!(AgentState::from_raw(Some(&json!(42))), AgentState::Unknown);
        assert_eq!(
            AgentState::from_raw(Some(&Value::Null)),
            AgentState::Unknown
        );
        assert_eq!(AgentState::from_raw(None), AgentState::Unknown);
    }

    #[test]
    fn envelope_rules() {
        let e = Envelope::build("brain", "reviewer", "héllo ✓").unwrap();
        let json = e.to_json();
        assert!(
            json.starts_with(r#"{"protocol":"herdr-link/1","id":"hl_"#),
            "{json}"
        );
        assert!(json.contains("héllo ✓"));
        let v: Value = serde_json::from_str(&json).unwrap();
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["protocol", "id", "from", "to", "message"]);
        assert!(is_envelope(&v));
        assert_eq!(
            Envelope::build("Brain", "x", "m").unwrap_err().code(),
            "SELF_UNNAMED"
        );
        assert_eq!(
            Envelope::build("a", "", "m").unwrap_err().code(),
            "PEER_NOT_FOUND"
        );
        assert_eq!(
            Envelope::build("a", "b", " \n\t").unwrap_err().code(),
            "SEND_FAILED"
        );
        // A NUL travels like any other control: escaped, so no argv element holds it.
        let nul = Envelope::build("a", "b", "x\0y").unwrap();
        assert!(nul.to_json().contains(r#""message":"x\u0000y""#));
        assert_eq!(extract_envelope(&nul.wrapper()), Some(nul));
    }

    /// The envelope line escapes exactly the typed controls, as `\uXXXX` (JSON's short forms
    /// for the C0 controls that have one), and stays the same JSON value.
    #[test]
    fn the_envelope_line_escapes_every_typed_control() {
        let e = Envelope::build(
            "a",
            "b",
            "keep A\u{7f}\u{7f}\u{7f}B intact\u{85}\u{9b}2J\u{2028}\u{2029}\0\u{1b}[201~\n\u{a0}é",
        )
        .unwrap();
        let json = e.to_json();
        assert!(
            json.ends_with(concat!(
                r#""message":"keep A\u007f\u007f\u007fB intact\u0085\u009b2J\u2028\u2029"#,
                r#"\u0000\u001b[201~\n"#,
                "\u{a0}é\"}"
            )),
            "{json}"
        );
        assert!(json.chars().all(|c| !is_typed_control(c)));
        let v: Value = serde_json::from_str(&json).unwrap();
        assert!(is_envelope(&v));
        assert_eq!(v["message"], e.message);
        let set: Vec<u32> = (0..=0x10ffff)
            .filter_map(char::from_u32)
            .filter(|c| is_typed_control(*c))
            .map(u32::from)
            .collect();
        let controls: Vec<u32> = (0..0x20)
            .chain(0x7f..0xa0)
            .chain([0x2028, 0x2029])
            .collect();
        let format: Vec<u32> = set
            .iter()
            .copied()
            .filter(|c| !controls.contains(c))
            .collect();
        // C0, DEL, C1, U+2028, U+2029, and Unicode 15.1's 170 format characters.
        assert!(controls.iter().all(|c| set.contains(c)));
        assert_eq!(format.len(), 170);
        for c in [
            0xad, 0x200b, 0x200d, 0x200e, 0x202e, 0x2066, 0xfeff, 0xe0001, 0xe007f,
        ] {
            assert!(format.contains(&c), "U+{c:04X}");
        }
        for c in [
            '\u{a0}',
            '\u{fffc}',
            '\u{200a}',
            '\u{2010}',
            'é',
            '😀',
            '\u{e0080}',
        ] {
            assert!(!is_typed_control(c), "{c:?}");
        }
        // Above U+FFFF: a surrogate pair, as JSON writes such a character.
        let tag = Envelope::build("a", "b", "flag \u{1f3f4}\u{e0067}\u{e007f}").unwrap();
        assert!(
            tag.to_json()
                .ends_with(r#""message":"flag 🏴\udb40\udc67\udb40\udc7f"}"#),
            "{}",
            tag.to_json()
        );
        assert_eq!(extract_envelope(&tag.wrapper()), Some(tag));
    }

    #[test]
    fn envelope_test_rejects_non_envelopes() {
        use serde_json::json;
        let good =
            json!({"protocol":"herdr-link/1","id":"hl_a_b","from":"a","to":"b","message":"m"});
        assert!(is_envelope(&good));
        let mut with_extra = good.clone();
        with_extra["reply_to"] = json!("hl_x_y");
        assert!(is_envelope(&with_extra));
        for (k, v) in [
            ("protocol", json!("herdr-link/2")),
            ("id", json!("bad")),
            ("from", json!("Bad")),
            ("from", json!(3)),
            ("to", json!("")),
            ("message", json!("  ")),
        ] {
            let mut bad = good.clone();
            bad[k] = v;
            assert!(!is_envelope(&bad), "{bad}");
        }
        assert!(!is_envelope(&Value::Null));
    }

    #[test]
    fn wrapper_shape() {
        let e = Envelope::build("brain", "worker-a", "line1\nline2").unwrap();
        let w = e.wrapper();
        let lines: Vec<_> = w.split('\n').collect();
        assert!(lines[0].starts_with("[herdr-link/1]"));
        assert_eq!(lines[1], "From: brain");
        assert_eq!(lines[2], format!("Message id: {}", e.id));
        assert_eq!(lines.last().unwrap(), &e.to_json());
        assert!(!w.ends_with('\n'));
        assert!(!w.contains("Reply to:"));
        for op in crate::ops::OPERATIONS {
            assert!(!w.contains(op.tool), "wrapper names {}", op.tool);
        }
        assert_eq!(extract_envelope(&w), Some(e));
    }

    #[test]
    fn extraction_scans_upward() {
        assert_eq!(extract_envelope("just prose"), None);
        assert_eq!(extract_envelope("{\"protocol\":\"other/1\"}"), None);
        assert_eq!(extract_envelope("{not json"), None);
        let a = Envelope::build("a", "b", "first").unwrap();
        let b = Envelope::build("c", "d", "second").unwrap();
        let text = format!(
            "{}\nnoise\n  {}  \n{{\"protocol\":\"herdr-link/1\",\"id\":\"bad\"}}\n{{broken",
            a.to_json(),
            b.to_json()
        );
        assert_eq!(extract_envelope(&text), Some(b));
    }

    #[test]
    fn contract_shape() {
        let lines: Vec<_> = CONTRACT.split('\n').collect();
        assert_eq!(lines.len(), 8, "intro, blank, 6 rules");
        assert_eq!(lines[1], "");
        for (i, rule) in lines[2..].iter().enumerate() {
            assert!(rule.starts_with(&format!("{}. ", i + 1)), "{rule}");
        }
        assert!(!CONTRACT.ends_with('\n'));
        assert!(CONTRACT.contains("herdr_link_send → end this turn → inbound Herdr Link message"));
    }
}
