//! Tolerant readers for the records Herdr prints: optional fields may be absent, unknown fields
//! are ignored, and a few older/flat shapes are accepted (herdr-cli.md §6.3, behaviour doc §2.5).

use serde_json::{Map, Value};

use crate::protocol::{is_valid_agent_name, AgentState};

fn non_empty(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// What Link reads from one AgentInfo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentRecord {
    /// The Agent Name, only when present and valid (an invalid name counts as no name).
    pub name: Option<String>,
    /// The live workspace id.
    pub workspace_id: Option<String>,
    /// The live public pane id.
    pub pane_id: Option<String>,
    /// An explicit liveness flag; absent means live.
    pub live: Option<bool>,
    /// `agent_status` (or `status`) mapped onto the closed vocabulary.
    pub state: AgentState,
}

impl AgentRecord {
    /// Reads one agent object (an `agent list` entry or the inner object of `agent get`).
    pub fn from_object(obj: &Map<String, Value>) -> AgentRecord {
        let status = match obj.get("agent_status") {
            None | Some(Value::Null) => obj.get("status"),
            some => some,
        };
        AgentRecord {
            name: non_empty(obj, "name").filter(|n| is_valid_agent_name(n)),
            workspace_id: non_empty(obj, "workspace_id"),
            pane_id: non_empty(obj, "pane_id"),
            live: obj.get("live").and_then(Value::as_bool),
            state: AgentState::from_raw(status),
        }
    }

    /// Finds the agent record in an `agent get`/`agent rename` response: `result.agent`, then a
    /// top-level `agent`, then a flat `result`, then a flat top level. `None` when there is none.
    pub fn from_response(v: &Value) -> Option<AgentRecord> {
        let top = v.as_object()?;
        let result = top.get("result").and_then(Value::as_object);
        let flat = |o: &Map<String, Value>| {
            o.get("name").is_some_and(Value::is_string)
                || o.get("pane_id").is_some_and(Value::is_string)
        };
        if let Some(agent) = result
            .and_then(|r| r.get("agent"))
            .and_then(Value::as_object)
        {
            return Some(Self::from_object(agent));
        }
        if let Some(agent) = top.get("agent").and_then(Value::as_object) {
            return Some(Self::from_object(agent));
        }
        if let Some(r) = result.filter(|r| flat(r)) {
            return Some(Self::from_object(r));
        }
        flat(top).then(|| Self::from_object(top))
    }

    /// Whether Herdr did not say the agent is gone.
    pub fn is_live(&self) -> bool {
        self.live != Some(false)
    }

    /// The name usable as an address: live and valid.
    pub fn stable_name(&self) -> Option<&str> {
        self.name.as_deref().filter(|_| self.is_live())
    }
}

/// The entries of an `agent list` response (`result.agents`, else top-level `agents`).
pub fn agent_list(v: &Value) -> Vec<AgentRecord> {
    let list = v
        .get("result")
        .and_then(|r| r.get("agents"))
        .and_then(Value::as_array)
        .or_else(|| v.get("agents").and_then(Value::as_array));
    list.map(|l| {
        l.iter()
            .filter_map(Value::as_object)
            .map(AgentRecord::from_object)
            .collect()
    })
    .unwrap_or_default()
}

/// What Link reads from one PaneInfo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaneRecord {
    /// Public pane id.
    pub pane_id: Option<String>,
    /// Owning tab.
    pub tab_id: Option<String>,
    /// Owning workspace.
    pub workspace_id: Option<String>,
    /// The pane's working directory.
    pub cwd: Option<String>,
}

impl PaneRecord {
    /// Reads one pane object.
    pub fn from_object(obj: &Map<String, Value>) -> PaneRecord {
        PaneRecord {
            pane_id: non_empty(obj, "pane_id"),
            tab_id: non_empty(obj, "tab_id"),
            workspace_id: non_empty(obj, "workspace_id"),
            cwd: non_empty(obj, "cwd"),
        }
    }

    /// The pane of a `pane get`/`pane split` response: `result.pane`, else a flat `result`,
    /// else the top level.
    pub fn from_response(v: &Value) -> Option<PaneRecord> {
        let top = v.as_object()?;
        let result = top.get("result").and_then(Value::as_object);
        let obj = result
            .and_then(|r| r.get("pane"))
            .and_then(Value::as_object)
            .or(result)
            .unwrap_or(top);
        Some(Self::from_object(obj))
    }
}

/// The panes of a `pane list` response (`result.panes` only).
pub fn pane_list(v: &Value) -> Vec<PaneRecord> {
    v.get("result")
        .and_then(|r| r.get("panes"))
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(Value::as_object)
                .map(PaneRecord::from_object)
                .collect()
        })
        .unwrap_or_default()
}

/// The new tab's id in a `tab create` response (`result.tab`, then top-level `tab`, then
/// `result`); the response's `root_pane` is deliberately not trusted.
pub fn created_tab_id(v: &Value) -> Option<String> {
    let result = v.get("result").and_then(Value::as_object);
    let tab = result
        .and_then(|r| r.get("tab"))
        .and_then(Value::as_object)
        .or_else(|| v.get("tab").and_then(Value::as_object))
        .or(result)?;
    non_empty(tab, "tab_id")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn agent_get_shapes() {
        let real = json!({"id":"cli:agent:get","result":{"agent":{"agent":"claude","agent_status":"idle","focused":false,"name":"reviewer","pane_id":"w1:p2","revision":14,"state_change_seq":3,"tab_id":"w1:t1","terminal_id":"term_1","workspace_id":"w1","future":{"x":1}},"type":"agent_info"}});
        let r = AgentRecord::from_response(&real).unwrap();
        assert_eq!(r.name.as_deref(), Some("reviewer"));
        assert_eq!(r.workspace_id.as_deref(), Some("w1"));
        assert_eq!(r.pane_id.as_deref(), Some("w1:p2"));
        assert_eq!(r.state, AgentState::Idle);
        assert!(r.is_live());

        let flat =
            json!({"result":{"name":"self","workspace_id":"ws","pane_id":"p","status":"working"}});
        let r = AgentRecord::from_response(&flat).unwrap();
        assert_eq!(r.stable_name(), Some("self"));
        assert_eq!(r.state, AgentState::Working);

        let unnamed = json!({"result":{"agent":{"agent_status":"idle","pane_id":"w1:p1","workspace_id":"w1"}}});
        assert_eq!(AgentRecord::from_response(&unnamed).unwrap().name, None);
        let invalid = json!({"result":{"agent":{"name":"Brain","workspace_id":"w1"}}});
        assert_eq!(AgentRecord::from_response(&invalid).unwrap().name, None);
        let dead = json!({"result":{"agent":{"name":"brain","live":false}}});
        assert_eq!(
            AgentRecord::from_response(&dead).unwrap().stable_name(),
            None
        );
        assert_eq!(AgentRecord::from_response(&json!({"result":{}})), None);
        assert_eq!(AgentRecord::from_response(&json!([1])), None);
    }

    #[test]
    fn lists_and_panes() {
        let l = json!({"result":{"agents":[{"name":"a","workspace_id":"w1"},7,{"agent_status":"done"}],"type":"agent_list"}});
        let recs = agent_list(&l);
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].state, AgentState::Done);
        assert!(agent_list(&json!({"result":{"agents":"x"}})).is_empty());
        let p = json!({"result":{"panes":[{"pane_id":"w1:p3","tab_id":"w1:t2","workspace_id":"w1","cwd":"/r"}]}});
        assert_eq!(pane_list(&p)[0].tab_id.as_deref(), Some("w1:t2"));
        let g = json!({"result":{"pane":{"pane_id":"w1:p1","cwd":"","workspace_id":"w1"},"type":"pane_info"}});
        let pr = PaneRecord::from_response(&g).unwrap();
        assert_eq!(pr.cwd, None);
        assert_eq!(pr.pane_id.as_deref(), Some("w1:p1"));
        let t = json!({"result":{"root_pane":{"pane_id":"w1:p3"},"tab":{"tab_id":"w1:t2"},"type":"tab_created"}});
        assert_eq!(created_tab_id(&t).as_deref(), Some("w1:t2"));
        assert_eq!(
            created_tab_id(&json!({"result":{"type":"tab_created"}})),
            None
        );
    }
}
