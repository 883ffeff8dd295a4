//! The model-facing facts of each MCP host, one descriptor per host: the name `--host` takes,
//! the client names it sends, how it names a server's tools for its model, and whether it shows
//! the tools `notifications/tools/list_changed` announces (which decides how the model sends).
//! The binary's host registry (`cli/src/host.rs`) names these descriptors for the wiring facts.

use crate::guard::SendForm;
use crate::protocol::GATEWAY;

/// The MCP host a server talks to, as far as its tool naming goes (§4.6: the active
/// presentation declares the runtime's actual form). Each host's facts are its row of
/// [`MCP_HOSTS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpHost {
    /// Claude Code.
    Claude,
    /// Codex.
    Codex,
    /// OpenCode.
    OpenCode,
    /// AGY.
    Agy,
    /// Gemini CLI (docs/hosts-gemini-qwen.md).
    Gemini,
    /// Qwen Code (docs/hosts-gemini-qwen.md).
    Qwen,
    /// GitHub Copilot CLI (docs/hosts-more.md).
    Copilot,
    /// Factory Droid (docs/hosts-more.md).
    Droid,
    /// Cline (docs/hosts-more.md).
    Cline,
    /// Kimi Code (docs/hosts-more.md).
    Kimi,
    /// Any other or unknown host: only what holds in every host is said.
    Other,
}

/// How a host shows a server's tools to its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolNames {
    /// `<prefix><server><separator><tool>`.
    Joined {
        /// Before the server's name.
        prefix: &'static str,
        /// Between the server's name and the tool's.
        separator: &'static str,
    },
    /// Codex: a namespace `mcp__<server>` holding the tools under their canonical names.
    Namespace,
    /// AGY: its `call_mcp_tool` wrapper with `ServerName` and the canonical `ToolName`.
    CallWrapper,
    /// Not known: the canonical name is the last part of whatever the host shows.
    Unknown,
}

/// How an MCP client name (`clientInfo.name`) names a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientName {
    /// The name starts with this.
    Prefix(&'static str),
    /// The name is exactly this.
    Exact(&'static str),
}

/// One host's model-facing facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpHostForm {
    /// The host.
    pub host: McpHost,
    /// The name `herdr-link mcp --host`, `guard --host` and `setup` take (`None`: no name).
    pub name: Option<&'static str>,
    /// The client names (lower case, `-` for spaces and `_`) that identify it.
    pub client_names: &'static [ClientName],
    /// How it names the server's tools.
    pub tool_names: ToolNames,
    /// Whether it shows the tools `notifications/tools/list_changed` announces (then the
    /// Tier 1 tools appear, a turn late); `false`: the gateway's actions are the whole surface.
    pub shows_announced_tools: bool,
}

const fn joined(prefix: &'static str, separator: &'static str) -> ToolNames {
    ToolNames::Joined { prefix, separator }
}

/// Every host's model-facing facts, one row per host ([`McpHost::Other`] last).
pub const MCP_HOSTS: &[McpHostForm] = &[
    McpHostForm {
        host: McpHost::Claude,
        name: Some("claude"),
        client_names: &[ClientName::Prefix("claude")],
        tool_names: joined("mcp__", "__"),
        shows_announced_tools: true,
    },
    McpHostForm {
        host: McpHost::Codex,
        name: Some("codex"),
        client_names: &[ClientName::Prefix("codex")],
        tool_names: ToolNames::Namespace,
        shows_announced_tools: false,
    },
    McpHostForm {
        host: McpHost::OpenCode,
        name: Some("opencode"),
        client_names: &[ClientName::Prefix("opencode")],
        tool_names: joined("", "_"),
        shows_announced_tools: true,
    },
    McpHostForm {
        host: McpHost::Agy,
        name: Some("agy"),
        client_names: &[ClientName::Prefix("antigravity"), ClientName::Exact("agy")],
        tool_names: ToolNames::CallWrapper,
        shows_announced_tools: true,
    },
    // It refreshes its tools on `notifications/tools/list_changed`.
    McpHostForm {
        host: McpHost::Gemini,
        name: Some("gemini"),
        client_names: &[ClientName::Prefix("gemini-cli")],
        tool_names: joined("mcp_", "_"),
        shows_announced_tools: true,
    },
    McpHostForm {
        host: McpHost::Qwen,
        name: Some("qwen"),
        client_names: &[ClientName::Prefix("qwen")],
        tool_names: joined("mcp__", "__"),
        shows_announced_tools: false,
    },
    // It shows the announced tools at the next request.
    McpHostForm {
        host: McpHost::Copilot,
        name: Some("copilot"),
        client_names: &[],
        tool_names: joined("", "-"),
        shows_announced_tools: true,
    },
    // Its tools are deferred behind its `ToolSearch`.
    McpHostForm {
        host: McpHost::Droid,
        name: Some("droid"),
        client_names: &[],
        tool_names: joined("", "___"),
        shows_announced_tools: true,
    },
    McpHostForm {
        host: McpHost::Cline,
        name: Some("cline"),
        client_names: &[],
        tool_names: joined("", "__"),
        shows_announced_tools: false,
    },
    McpHostForm {
        host: McpHost::Kimi,
        name: Some("kimi"),
        client_names: &[],
        tool_names: joined("mcp__", "__"),
        shows_announced_tools: false,
    },
    McpHostForm {
        host: McpHost::Other,
        name: None,
        client_names: &[],
        tool_names: ToolNames::Unknown,
        shows_announced_tools: true,
    },
];

impl McpHost {
    /// This host's row of [`MCP_HOSTS`].
    pub fn form(self) -> &'static McpHostForm {
        MCP_HOSTS
            .iter()
            .find(|f| f.host == self)
            .expect("every host has a row in MCP_HOSTS")
    }

    /// Parses the names `herdr-link mcp --host` and `herdr-link setup` use (the `name` of each
    /// row of [`MCP_HOSTS`]).
    pub fn parse(s: &str) -> Option<McpHost> {
        MCP_HOSTS.iter().find(|f| f.name == Some(s)).map(|f| f.host)
    }

    /// The host an MCP client name (`clientInfo.name` of `initialize` or of a request's
    /// `_meta`) names, by the `client_names` of [`MCP_HOSTS`] (Claude Code sends `claude-code`,
    /// Codex `codex-mcp-client`, Gemini CLI `gemini-cli-mcp-client`, Qwen Code
    /// `qwen-cli-mcp-client-<server>`); case, spaces and `_` do not matter; [`McpHost::Other`]
    /// for anything else.
    pub fn from_client_name(name: &str) -> McpHost {
        let name = name.trim().to_ascii_lowercase().replace([' ', '_'], "-");
        MCP_HOSTS
            .iter()
            .find(|f| {
                f.client_names.iter().any(|c| match *c {
                    ClientName::Prefix(p) => name.starts_with(p),
                    ClientName::Exact(e) => name == e,
                })
            })
            .map_or(McpHost::Other, |f| f.host)
    }

    /// How the model sends a message in this host, for the Bash guard's block reason: where it
    /// never shows the Tier 1 tools only the gateway's `send` action exists; elsewhere it shows
    /// `herdr_link_send` a turn late, so the reason names both.
    pub fn send_form(self) -> SendForm {
        if self.form().shows_announced_tools {
            SendForm::Either
        } else {
            SendForm::GatewayAction
        }
    }

    /// The name under which the model sees the canonical tool `tool` of the server registered
    /// as `server`, where the host gives it one name of its own.
    pub fn tool_name(self, server: &str, tool: &str) -> Option<String> {
        match self.form().tool_names {
            ToolNames::Joined { prefix, separator } => {
                Some(format!("{prefix}{server}{separator}{tool}"))
            }
            _ => None,
        }
    }

    /// How the model finds the gateway of the server registered as `server` in this host.
    pub fn gateway(self, server: &str) -> String {
        match self.form().tool_names {
            ToolNames::Joined { .. } => self.tool_name(server, GATEWAY).unwrap_or_default(),
            ToolNames::Namespace => format!("{GATEWAY} (in the tool namespace mcp__{server})"),
            ToolNames::CallWrapper => {
                format!("{GATEWAY} (through call_mcp_tool with ServerName \"{server}\")")
            }
            ToolNames::Unknown => format!("the {GATEWAY} gateway"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_host_and_names_parse_back() {
        for (i, f) in MCP_HOSTS.iter().enumerate() {
            assert_eq!(f.host.form(), f, "one row for {:?}", f.host);
            assert!(MCP_HOSTS[..i].iter().all(|g| g.host != f.host));
            if let Some(name) = f.name {
                assert_eq!(McpHost::parse(name), Some(f.host));
            }
        }
        assert_eq!(MCP_HOSTS.last().map(|f| f.host), Some(McpHost::Other));
    }
}
