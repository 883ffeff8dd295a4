//! Where each host keeps its config, from the environment.

use std::path::{Path, PathBuf};

/// Where the user's config lives: `HOME`, `CODEX_HOME`, `XDG_CONFIG_HOME`, `GEMINI_CLI_HOME`,
/// `QWEN_HOME`, `COPILOT_HOME`, `CLINE_DIR`, `CLINE_DATA_DIR`, `KIMI_CODE_HOME`.
pub struct Places {
    /// The home directory.
    pub home: PathBuf,
    /// Codex's home (`$CODEX_HOME`, default `~/.codex`).
    pub codex_home: PathBuf,
    /// OpenCode's global config dir (`$XDG_CONFIG_HOME/opencode`, default `~/.config/opencode`).
    pub opencode: PathBuf,
    /// Gemini CLI's user dir (`$GEMINI_CLI_HOME/.gemini`, default `~/.gemini`).
    pub gemini: PathBuf,
    /// Qwen Code's user dir (`$QWEN_HOME`, default `~/.qwen`).
    pub qwen: PathBuf,
    /// Copilot CLI's home (`$COPILOT_HOME`, default `~/.copilot`).
    pub copilot: PathBuf,
    /// Factory Droid's user dir (`~/.factory`).
    pub factory: PathBuf,
    /// Cline's dir (`$CLINE_DIR`, default `~/.cline`): its `hooks/`.
    pub cline: PathBuf,
    /// Cline's data dir (`$CLINE_DATA_DIR`, default `~/.cline/data`): its `settings/`.
    pub cline_data: PathBuf,
    /// Kimi Code's home (`$KIMI_CODE_HOME`, default `~/.kimi-code`).
    pub kimi: PathBuf,
    /// The user's data dir (`$XDG_DATA_HOME`, default `~/.local/share`): the shim lives there.
    pub data: PathBuf,
    /// The user's login shell (`$SHELL`), for the login profile Codex's commands read.
    pub shell: Option<String>,
}

impl Places {
    /// The locations from this process's environment (`HOME` must be set).
    pub fn from_env() -> Result<Places, String> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let home = var("HOME").ok_or("HOME is not set")?;
        let codex_home = var("CODEX_HOME").unwrap_or_else(|| home.join(".codex"));
        let config = var("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config"));
        let data = herdr_link::paths::data_dir(
            std::env::var_os("XDG_DATA_HOME").as_deref(),
            Some(home.as_os_str()),
        )
        .unwrap_or_else(|| home.join(".local/share"));
        let [copilot, factory, cline_data, cline, kimi] = more_places(&home, var);
        Ok(Places {
            copilot,
            factory,
            cline,
            cline_data,
            kimi,
            opencode: config.join("opencode"),
            gemini: var("GEMINI_CLI_HOME")
                .unwrap_or_else(|| home.clone())
                .join(".gemini"),
            qwen: var("QWEN_HOME").unwrap_or_else(|| home.join(".qwen")),
            data,
            shell: std::env::var("SHELL").ok().filter(|s| !s.is_empty()),
            codex_home,
            home,
        })
    }
}

/// The config locations of Copilot CLI, Droid, Cline and Kimi Code, from the environment: `$COPILOT_HOME` (default
/// `~/.copilot`), `~/.factory`, `$CLINE_DIR` (default `~/.cline`) with `$CLINE_DATA_DIR`
/// (default its `data/`), `$KIMI_CODE_HOME` (default `~/.kimi-code`).
fn more_places(home: &Path, var: impl Fn(&str) -> Option<PathBuf>) -> [PathBuf; 5] {
    let cline = var("CLINE_DIR").unwrap_or_else(|| home.join(".cline"));
    [
        var("COPILOT_HOME").unwrap_or_else(|| home.join(".copilot")),
        home.join(".factory"),
        var("CLINE_DATA_DIR").unwrap_or_else(|| cline.join("data")),
        cline,
        var("KIMI_CODE_HOME").unwrap_or_else(|| home.join(".kimi-code")),
    ]
}
