//! Agent kind labels known to Herdr 0.8.0 (`detect::parse_agent_label`).

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
    "maki",
];

const ALIASES: &[(&str, &str)] = &[
    ("claude-code", "claude"),
    ("cursor-agent", "cursor"),
    ("devin-cli", "devin"),
    ("antigravity", "agy"),
    ("antigravity-cli", "agy"),
    ("mastra-code", "mastracode"),
    ("opencode2", "opencode"),
    ("open-code", "opencode"),
    ("github-copilot", "copilot"),
    ("ghcs", "copilot"),
    ("kimi-code", "kimi"),
    ("kiro-cli", "kiro"),
    ("amp-local", "amp"),
    ("grok-build", "grok"),
    ("hermes-agent", "hermes"),
    ("kilo-code", "kilo"),
    ("qoder", "qodercli"),
    ("qodercn", "qodercli"),
    ("qoderclicn", "qodercli"),
];

/// Parse a kind label or alias (case-insensitive, `.exe/.cmd/.bat/.ps1/.js` stripped)
/// to its canonical label.
pub fn parse(raw: &str) -> Option<&'static str> {
    let lower = raw.trim().to_ascii_lowercase();
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
pub fn normalize(raw: &str) -> String {
    parse(raw)
        .map(str::to_string)
        .unwrap_or_else(|| raw.trim().to_string())
}

/// Whether `label` is a canonical known kind.
pub fn is_known(label: &str) -> bool {
    CANONICAL.contains(&label)
}

/// The executable `agent start` types for a canonical kind.
pub fn executable(kind: &str) -> &str {
    match kind {
        "cursor" => "cursor-agent",
        "kiro" => "kiro-cli",
        other => other,
    }
}
