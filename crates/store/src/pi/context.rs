//! What the model sees at a leaf: pi's `buildSessionContext`.
//!
//! The path from the root to the leaf is walked once by slot index; only the
//! records that end up in the context (and the last model and thinking
//! changes) are parsed.

use super::index::{Ty, NONE};
use super::SessionManager;
use crate::StoreError;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The model a context runs with: pi's `{provider, modelId}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ContextModel {
    /// The provider (`anthropic`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model id.
    #[serde(rename = "modelId", skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
}

/// The context the model would be sent at a leaf.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SessionContext {
    /// The messages, as pi's `AgentMessage` JSON: the `message` of message
    /// entries verbatim (not re-parsed), and synthetic `compactionSummary`,
    /// `branchSummary` and `custom` messages for compactions, branch
    /// summaries and custom-message entries.
    pub messages: Vec<Box<RawValue>>,
    /// The thinking level (`off` when the path never set one).
    #[serde(rename = "thinkingLevel", skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<Value>,
    /// The model, from the last model change or assistant message.
    pub model: Option<ContextModel>,
    /// oh-my-pi's model per role (`default`, …), from model changes.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub models: BTreeMap<String, String>,
    /// TTSR rules injected on the path, each once, in order.
    #[serde(rename = "injectedTtsrRules", skip_serializing_if = "Vec::is_empty")]
    pub injected_ttsr_rules: Vec<String>,
}

impl SessionContext {
    fn empty() -> SessionContext {
        SessionContext {
            thinking_level: Some(Value::String("off".into())),
            ..SessionContext::default()
        }
    }

    /// Returns the role of each message.
    pub fn roles(&self) -> Vec<String> {
        #[derive(serde::Deserialize)]
        struct Role {
            role: Option<String>,
        }
        self.messages
            .iter()
            .map(|m| {
                serde_json::from_str::<Role>(m.get())
                    .ok()
                    .and_then(|r| r.role)
                    .unwrap_or_default()
            })
            .collect()
    }

    /// Returns the messages parsed.
    pub fn message_values(&self) -> Vec<Value> {
        self.messages
            .iter()
            .map(|m| serde_json::from_str(m.get()).unwrap_or(Value::Null))
            .collect()
    }

    /// Returns the thinking level as text (`off` when unset).
    pub fn thinking_level_str(&self) -> &str {
        self.thinking_level
            .as_ref()
            .and_then(Value::as_str)
            .unwrap_or("off")
    }
}

/// Returns pi's `new Date(timestamp).getTime()`: milliseconds, or null.
fn date_ms(v: Option<&Value>) -> Value {
    match v {
        Some(Value::Number(n)) => Value::Number(n.clone()),
        Some(Value::String(s)) => agentlog_model::Timestamp::Text(s.clone())
            .millis()
            .map(Value::from)
            .unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

fn push_value(out: &mut Vec<Box<RawValue>>, v: Value) {
    if let Ok(raw) = serde_json::value::to_raw_value(&v) {
        out.push(raw);
    }
}

/// JavaScript truthiness of a JSON value.
fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

fn put(m: &mut Map<String, Value>, key: &str, v: Option<&Value>) {
    if let Some(v) = v {
        m.insert(key.into(), v.clone());
    }
}

fn model_of_change(r: &Map<String, Value>) -> ContextModel {
    let s = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_string);
    if r.contains_key("provider") || r.contains_key("modelId") {
        return ContextModel {
            provider: s("provider"),
            model_id: s("modelId"),
        };
    }
    // oh-my-pi: `model` is `provider/modelId`.
    match s("model") {
        Some(m) => match m.split_once('/') {
            Some((p, id)) => ContextModel {
                provider: Some(p.to_string()),
                model_id: Some(id.to_string()),
            },
            None => ContextModel {
                provider: None,
                model_id: Some(m),
            },
        },
        None => ContextModel::default(),
    }
}

impl SessionManager {
    /// Returns the context the model sees at the current leaf.
    pub fn build_session_context(&self) -> SessionContext {
        self.context_at(self.leaf)
    }

    /// Returns the context at `leaf_id`; `None` is the position before the
    /// first entry (an empty context). An unknown id is an error.
    pub fn build_session_context_at(
        &self,
        leaf_id: Option<&str>,
    ) -> Result<SessionContext, StoreError> {
        match leaf_id {
            None => Ok(self.context_at(None)),
            Some(id) => match self.by_id.get(id) {
                Some(&i) => Ok(self.context_at(Some(i))),
                None => Err(StoreError::Invalid(format!("entry {id} not found"))),
            },
        }
    }

    /// Returns the slots from the root to `leaf`, stopping on a cycle.
    pub(super) fn path_to(&self, leaf: u32) -> Vec<u32> {
        let mut path = Vec::new();
        let mut cur = leaf;
        while cur != NONE && path.len() <= self.slots.len() {
            path.push(cur);
            cur = self.slots[cur as usize].parent;
        }
        if path.len() > self.slots.len() {
            // A cycle: keep each entry once.
            let mut seen = std::collections::HashSet::new();
            path.retain(|i| seen.insert(*i));
        }
        path.reverse();
        path
    }

    fn context_at(&self, leaf: Option<u32>) -> SessionContext {
        let Some(leaf) = leaf else {
            return SessionContext::empty();
        };
        let path = self.path_to(leaf);
        let mut ctx = SessionContext::empty();
        // Settings: only the last of each counts.
        if let Some(&i) = path
            .iter()
            .rev()
            .find(|&&i| self.slots[i as usize].ty == Ty::ThinkingLevelChange)
        {
            ctx.thinking_level = self.record(i).and_then(|r| r.get("thinkingLevel").cloned());
        }
        if let Some(&i) = path.iter().rev().find(|&&i| {
            matches!(
                self.slots[i as usize].ty,
                Ty::ModelChange | Ty::AssistantMessage
            )
        }) {
            if let Some(r) = self.record(i) {
                ctx.model = Some(match self.slots[i as usize].ty {
                    Ty::ModelChange => model_of_change(&r),
                    _ => {
                        let m = r.get("message");
                        let s = |k: &str| {
                            m.and_then(|m| m.get(k))
                                .and_then(Value::as_str)
                                .map(str::to_string)
                        };
                        ContextModel {
                            provider: s("provider"),
                            model_id: s("model"),
                        }
                    }
                });
            }
        }
        for &i in &path {
            match self.slots[i as usize].ty {
                Ty::ModelChange => {
                    if let Some(r) = self.record(i) {
                        let role = r.get("role").and_then(Value::as_str).unwrap_or("default");
                        let m = model_of_change(&r);
                        let name = match (&m.provider, &m.model_id) {
                            (Some(p), Some(id)) => format!("{p}/{id}"),
                            (None, Some(id)) => id.clone(),
                            _ => continue,
                        };
                        ctx.models.insert(role.to_string(), name);
                    }
                }
                Ty::TtsrInjection => {
                    let rules = self
                        .record(i)
                        .and_then(|r| r.get("injectedRules").cloned())
                        .and_then(|v| serde_json::from_value::<Vec<String>>(v).ok())
                        .unwrap_or_default();
                    for rule in rules {
                        if !ctx.injected_ttsr_rules.contains(&rule) {
                            ctx.injected_ttsr_rules.push(rule);
                        }
                    }
                }
                _ => {}
            }
        }
        let compaction = path
            .iter()
            .rposition(|&i| self.slots[i as usize].ty == Ty::Compaction);
        match compaction {
            Some(c) => {
                let comp = self.record(path[c]).unwrap_or_default();
                let mut m = Map::new();
                m.insert("role".into(), "compactionSummary".into());
                put(&mut m, "summary", comp.get("summary"));
                put(&mut m, "tokensBefore", comp.get("tokensBefore"));
                m.insert("timestamp".into(), date_ms(comp.get("timestamp")));
                push_value(&mut ctx.messages, Value::Object(m));
                let first_kept = comp.get("firstKeptEntryId").and_then(Value::as_str);
                let start = first_kept.and_then(|id| {
                    path[..c]
                        .iter()
                        .position(|&i| &*self.slots[i as usize].id == id)
                });
                if let Some(s) = start {
                    for &i in &path[s..c] {
                        self.emit(i, &mut ctx.messages);
                    }
                }
                for &i in &path[c + 1..] {
                    self.emit(i, &mut ctx.messages);
                }
            }
            None => {
                for &i in &path {
                    self.emit(i, &mut ctx.messages);
                }
            }
        }
        ctx
    }

    /// Adds the message an entry contributes, if any.
    fn emit(&self, i: u32, out: &mut Vec<Box<RawValue>>) {
        let ty = self.slots[i as usize].ty;
        if !matches!(
            ty,
            Ty::Message | Ty::AssistantMessage | Ty::CustomMessage | Ty::BranchSummary
        ) {
            return;
        }
        if matches!(ty, Ty::Message | Ty::AssistantMessage) {
            #[derive(serde::Deserialize)]
            struct Msg {
                message: Option<Box<RawValue>>,
            }
            match serde_json::from_slice::<Msg>(self.line(i)) {
                Ok(Msg { message: Some(m) }) => out.push(m),
                Ok(_) => {}
                Err(_) => {
                    // Duplicate keys and the like: the last `message` wins.
                    if let Some(m) = self.record(i).and_then(|mut r| r.remove("message")) {
                        push_value(out, m);
                    }
                }
            }
            return;
        }
        let Some(r) = self.record(i) else {
            return;
        };
        match ty {
            Ty::CustomMessage => {
                let mut m = Map::new();
                m.insert("role".into(), "custom".into());
                put(&mut m, "customType", r.get("customType"));
                put(&mut m, "content", r.get("content"));
                put(&mut m, "display", r.get("display"));
                put(&mut m, "details", r.get("details"));
                m.insert("timestamp".into(), date_ms(r.get("timestamp")));
                push_value(out, Value::Object(m));
            }
            _ => {
                if truthy(r.get("summary")) {
                    let mut m = Map::new();
                    m.insert("role".into(), "branchSummary".into());
                    put(&mut m, "summary", r.get("summary"));
                    put(&mut m, "fromId", r.get("fromId"));
                    m.insert("timestamp".into(), date_ms(r.get("timestamp")));
                    push_value(out, Value::Object(m));
                }
            }
        }
    }
}
