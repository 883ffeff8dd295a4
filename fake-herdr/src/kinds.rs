//! Agent kind labels known to Herdr 0.8.0, 0.8.2 and 0.9.0 (`detect::parse_agent_label`): 0.8.2
//! adds `qwen`, 0.9.0 adds `muse`.

use crate::settings::Version;

/// Canonical agent labels.
pub const CANONICAL: &[&str] = &[
    "pi",
    "claude",
    "codex",
    "gemini",
    "cursor",
    "devin",
    "agy",
    "cline",
    "omp",
    "mastracode",
    "opencode",
    "copilot",
    "kimi",
    "kiro",
    "droid",
    "amp",
    "grok",
    "hermes",
    "kilo",
    "qodercli",
    "qwen",
    "maki",
    "muse",
];

/// Whether `version` knows the canonical `kind` (0.8.2 added `qwen`, 0.9.0 `muse`).
fn known_in(kind: &str, version: Version) -> bool {
    match kind {
        "qwen" => version.at_least_082(),
        "muse" => version.at_least_090(),
        _ => true,
    }
}

const ALIASES: &[(&str, &str)] = &[
    ("claude-code", "claude"),
    ("cursor-agent", "cursor"),
    ("devin-cli", "devin"),
    ("devin cli", "devin"),
    ("antigravity", "agy"),
    ("antigravity-cli", "agy"),
    ("mastra-code", "mastracode"),
    ("mastra code", "mastracode"),
    ("opencode2", "opencode"),
    ("open-code", "opencode"),
    ("github-copilot", "copilot"),
    ("ghcs", "copilot"),
    ("kimi-code", "kimi"),
    ("kimi code", "kimi"),
    ("kiro-cli", "kiro"),
    ("amp-local", "amp"),
    ("grok-build", "grok"),
    ("hermes-agent", "hermes"),
    ("kilo-code", "kilo"),
    ("kilo code", "kilo"),
    ("qoder", "qodercli"),
    ("qodercn", "qodercli"),
    ("qoderclicn", "qodercli"),
    ("qwen-code", "qwen"),
    ("qwen code", "qwen"),
    ("muse-code", "muse"),
    ("muse-cli", "muse"),
];

/// Parse a kind label or alias as `version` does (trimmed, lowercased, one of
/// `.exe/.cmd/.bat/.ps1/.js` stripped; multi-word aliases such as `kimi code` included) to its
/// canonical label.
pub fn parse(raw: &str, version: Version) -> Option<&'static str> {
    parse_any(raw).filter(|c| known_in(c, version))
}

fn parse_any(raw: &str) -> Option<&'static str> {
    let lower = raw.trim().to_lowercase();
    let mut s = lower.as_str();
    for suffix in [".exe", ".cmd", ".bat", ".ps1", ".js"] {
        if let Some(stripped) = s.strip_suffix(suffix) {
            s = stripped;
            break;
        }
    }
    if let Some(c) = CANONICAL.iter().find(|c| **c == s) {
        return Some(c);
    }
    ALIASES.iter().find(|(a, _)| *a == s).map(|(_, c)| *c)
}

/// Normalize a label the way hook reports are normalized: known kinds and aliases
/// become canonical, anything else is kept trimmed.
pub fn normalize(raw: &str, version: Version) -> String {
    parse(raw, version)
        .map(str::to_string)
        .unwrap_or_else(|| raw.trim().to_string())
}

/// Whether `label` is a canonical kind `version` knows.
pub fn is_known(label: &str, version: Version) -> bool {
    CANONICAL.contains(&label) && known_in(label, version)
}

/// The executable `agent start` types for a canonical kind.
pub fn executable(kind: &str) -> &str {
    match kind {
        "cursor" => "cursor-agent",
        "kiro" => "kiro-cli",
        other => other,
    }
}
