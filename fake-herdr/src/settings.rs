//! Which Herdr the fake plays and how long its simulated delays are.
//!
//! Every setting is read from the state's `config` map (`herdr fake config`, or `"config"` in a
//! world), else from its `HERDR_FAKE_*` environment variable, else from the version's default.
//! The defaults for 0.8.2 are short stand-ins for Herdr's real delays, so tests stay fast.

use std::collections::BTreeMap;

/// The Herdr versions the fake can play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// 0.8.0: panes get no `HERDR_BIN_PATH`; `agent start` is ready at once; a blocked agent
    /// can be prompted.
    V080,
    /// 0.8.2: panes get `HERDR_BIN_PATH`; `agent start` waits for `idle`; `agent_blocked`.
    V082,
    /// 0.9.0: 0.8.2's behaviour, and `agent prompt` answers only after its Enter, one
    /// submission at a time per pane (see submit.rs); protocol 22.
    V090,
}

impl Version {
    /// Every version string the fake accepts.
    pub const ALL: [&'static str; 3] = ["0.8.0", "0.8.2", "0.9.0"];

    /// Parses `0.8.0`, `0.8.2` or `0.9.0`.
    pub fn parse(s: &str) -> Option<Version> {
        match s {
            "0.8.0" => Some(Version::V080),
            "0.8.2" => Some(Version::V082),
            "0.9.0" => Some(Version::V090),
            _ => None,
        }
    }

    /// The version string (`herdr --version` prints `herdr <this>`).
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V080 => "0.8.0",
            Version::V082 => "0.8.2",
            Version::V090 => "0.9.0",
        }
    }

    /// 0.8.2 and later: readiness wait, `agent_blocked`, `HERDR_BIN_PATH` in panes.
    pub fn at_least_082(self) -> bool {
        self != Version::V080
    }

    /// 0.9.0 and later: `agent prompt` is one submission on the pane's input queue and answers
    /// after its Enter (`handle_deferred_agent_api_request`).
    pub fn at_least_090(self) -> bool {
        self == Version::V090
    }

    /// The socket protocol number of the played CLI and server (`PROTOCOL_VERSION`): 19 in
    /// 0.8.0 and 20 in 0.8.2 (both read off the real servers: each refuses the other's CLI with
    /// `protocol_mismatch`), 22 in 0.9.0 (its source).
    pub fn protocol(self) -> u32 {
        match self {
            Version::V080 => 19,
            Version::V082 => 20,
            Version::V090 => 22,
        }
    }
}

/// One setting: its `config` key, its environment variable, and what it means.
pub struct Key {
    /// Key in the state's `config` map.
    pub name: &'static str,
    /// Environment fallback.
    pub env: &'static str,
}

/// Every setting the fake reads.
pub const KEYS: [Key; 6] = [
    Key {
        name: "version",
        env: "HERDR_FAKE_VERSION",
    },
    Key {
        name: "settle_ms",
        env: "HERDR_FAKE_SETTLE_MS",
    },
    Key {
        name: "shell_start_ms",
        env: "HERDR_FAKE_SHELL_START_MS",
    },
    Key {
        name: "busy_retry_ms",
        env: "HERDR_FAKE_BUSY_RETRY_MS",
    },
    Key {
        name: "poll_ms",
        env: "HERDR_FAKE_POLL_MS",
    },
    Key {
        name: "start_status",
        env: "HERDR_FAKE_START_STATUS",
    },
];

/// The statuses a newly started agent can settle into.
pub const START_STATUSES: [&str; 3] = ["idle", "working", "blocked"];

/// The resolved settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Which Herdr to play.
    pub version: Version,
    /// 0.8.2: how long a new agent stays `unknown` before it settles.
    pub settle_ms: u64,
    /// How long a new pane's shell is still starting (`agent start` sees `agent_pane_busy`).
    pub shell_start_ms: u64,
    /// 0.8.2: how long `agent start` retries `agent_pane_busy`.
    pub busy_retry_ms: u64,
    /// 0.8.2: `agent start`'s polling interval.
    pub poll_ms: u64,
    /// 0.8.2: the status a newly started agent settles into (`idle`, `working`, `blocked`).
    pub start_status: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings::for_version(Version::V080)
    }
}

impl Settings {
    /// The defaults of one version.
    pub fn for_version(version: Version) -> Settings {
        let (settle_ms, shell_start_ms, busy_retry_ms) = match version {
            Version::V080 => (0, 0, 0),
            Version::V082 | Version::V090 => (150, 50, 400),
        };
        Settings {
            version,
            settle_ms,
            shell_start_ms,
            busy_retry_ms,
            poll_ms: 20,
            start_status: "idle".to_string(),
        }
    }

    /// Resolves every setting: `config` (from the state), else the environment, else defaults.
    pub fn resolve(config: Option<&BTreeMap<String, String>>) -> Result<Settings, String> {
        let get = |key: &Key| -> Option<(String, String)> {
            if let Some(v) = config.and_then(|c| c.get(key.name)) {
                return Some((format!("config {}", key.name), v.clone()));
            }
            std::env::var(key.env)
                .ok()
                .filter(|v| !v.is_empty())
                .map(|v| (key.env.to_string(), v))
        };
        let version = match get(&KEYS[0]) {
            None => Version::V080,
            Some((from, v)) => Version::parse(&v).ok_or_else(|| {
                format!(
                    "{from}={v} is not a version the fake plays ({})",
                    Version::ALL.join(", ")
                )
            })?,
        };
        let mut s = Settings::for_version(version);
        for (i, slot) in [
            &mut s.settle_ms,
            &mut s.shell_start_ms,
            &mut s.busy_retry_ms,
            &mut s.poll_ms,
        ]
        .into_iter()
        .enumerate()
        {
            if let Some((from, v)) = get(&KEYS[i + 1]) {
                *slot = v
                    .parse()
                    .map_err(|_| format!("{from}={v} is not a number of milliseconds"))?;
            }
        }
        if let Some((from, v)) = get(&KEYS[5]) {
            if !START_STATUSES.contains(&v.as_str()) {
                return Err(format!(
                    "{from}={v} is not one of {}",
                    START_STATUSES.join(", ")
                ));
            }
            s.start_status = v;
        }
        Ok(s)
    }

    /// Checks one `config` entry before it is stored.
    pub fn check(key: &str, value: &str) -> Result<(), String> {
        let ok = match key {
            "version" => Version::parse(value).is_some(),
            "start_status" => START_STATUSES.contains(&value),
            k if KEYS.iter().any(|x| x.name == k) => value.parse::<u64>().is_ok(),
            _ => {
                return Err(format!(
                    "unknown setting {key} (expected one of {})",
                    KEYS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
                ))
            }
        };
        if ok {
            Ok(())
        } else {
            Err(format!("invalid value for {key}: {value}"))
        }
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
