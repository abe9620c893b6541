//! The names a template can read, exposed as minijinja objects over the run's live data.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use minijinja::Value;
use minijinja::value::{Enumerator, Object, ObjectRepr};

use crate::runtime::state::State;

/// Node outputs (`outputs.<node>`): what each node last produced, as JSON (persisted) and
/// as its template view (converted once).
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    map: HashMap<Arc<str>, (serde_json::Value, OnceLock<Value>)>,
}

impl Outputs {
    /// Records a node's output, replacing an earlier one.
    pub fn insert(&mut self, node: Arc<str>, value: serde_json::Value) {
        self.map.insert(node, (value, OnceLock::new()));
    }

    /// The JSON output of `node`.
    #[must_use]
    pub fn get(&self, node: &str) -> Option<&serde_json::Value> {
        self.map.get(node).map(|(value, _)| value)
    }

    /// Every output, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&Arc<str>, &serde_json::Value)> {
        self.map.iter().map(|(node, (value, _))| (node, value))
    }

    fn view(&self, node: &str) -> Option<Value> {
        let (value, view) = self.map.get(node)?;
        Some(
            view.get_or_init(|| Value::from(minijinja::value::Serde(value)))
                .clone(),
        )
    }
}

/// `run.*`.
#[derive(Clone, Debug)]
pub struct RunInfo {
    /// The run id.
    pub id: Arc<str>,
    /// The step number (1-based, as committed).
    pub step: u64,
    /// The innermost loop's iteration (1-based; 0 outside loops).
    pub iteration: u32,
}

/// Names bound only in part of the workflow (`item`, `index`, `error`, …).
pub type Locals = Arc<Vec<(Arc<str>, Value)>>;

/// Everything one render can read. Cheap to build: every part is shared.
#[derive(Clone, Debug)]
pub struct Scope {
    /// `input`, converted once per run.
    pub input: Value,
    /// `env`, the declared variables only, converted once per run.
    pub env: Value,
    /// The state.
    pub state: Arc<State>,
    /// Node outputs.
    pub outputs: Arc<Outputs>,
    /// `run`.
    pub run: RunInfo,
    /// Locals, looked up before everything else.
    pub locals: Option<Locals>,
}

impl Scope {
    /// The scope as a template context.
    #[must_use]
    pub fn into_value(self) -> Value {
        Value::from_object(self)
    }

    /// The scope, made a template value only if a template needs one.
    #[must_use]
    pub fn lazy(self) -> LazyScope {
        LazyScope::new(self)
    }
}

/// What templates are evaluated against.
pub trait ScopeSource {
    /// The scope as a template value.
    fn value(&self) -> &Value;
    /// The run's own scope, when this is one: the shortcut reads the state from it
    /// without going through template objects.
    fn run_scope(&self) -> Option<&Scope>;
}

impl ScopeSource for Value {
    fn value(&self) -> &Value {
        self
    }

    fn run_scope(&self) -> Option<&Scope> {
        self.downcast_object_ref()
    }
}

/// A run's scope, made a template value (an allocation) only when a template needs more
/// than the shortcut reads: a loop's counter and its condition need none.
#[derive(Debug)]
pub struct LazyScope {
    scope: Scope,
    value: OnceLock<Value>,
}

impl LazyScope {
    /// `scope`, not yet a template value.
    #[must_use]
    pub fn new(scope: Scope) -> Self {
        Self {
            scope,
            value: OnceLock::new(),
        }
    }
}

impl ScopeSource for LazyScope {
    fn value(&self) -> &Value {
        self.value
            .get_or_init(|| Value::from_object(self.scope.clone()))
    }

    fn run_scope(&self) -> Option<&Scope> {
        Some(&self.scope)
    }
}

impl Object for Scope {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let key = key.as_str()?;
        if let Some(locals) = &self.locals
            && let Some((_, value)) = locals.iter().find(|(name, _)| &**name == key)
        {
            return Some(value.clone());
        }
        match key {
            "input" => Some(self.input.clone()),
            "env" => Some(self.env.clone()),
            "state" => Some(Value::from_object(StateView(self.state.clone()))),
            "outputs" => Some(Value::from_object(OutputsView(self.outputs.clone()))),
            "run" => Some(Value::from_object(self.run.clone())),
            _ => None,
        }
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let mut keys: Vec<Value> = ["input", "env", "state", "outputs", "run"]
            .into_iter()
            .map(Value::from)
            .collect();
        if let Some(locals) = &self.locals {
            keys.extend(locals.iter().map(|(name, _)| Value::from(name.clone())));
        }
        Enumerator::Values(keys)
    }
}

impl Object for RunInfo {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        match key.as_str()? {
            "id" => Some(Value::from(self.id.clone())),
            "step" => Some(Value::from(self.step)),
            "iteration" => Some(Value::from(self.iteration)),
            _ => None,
        }
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Str(&["id", "step", "iteration"])
    }
}

/// `state`: fields are converted to template values on first read after a write.
#[derive(Debug)]
struct StateView(Arc<State>);

impl Object for StateView {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let idx = self.0.schema().find(key.as_str()?)?;
        self.0.view(idx)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let keys = self
            .0
            .schema()
            .fields()
            .filter(|(idx, _)| self.0.get(*idx).is_some())
            .map(|(_, spec)| Value::from(spec.name.clone()))
            .collect();
        Enumerator::Values(keys)
    }
}

/// `outputs`.
#[derive(Debug)]
struct OutputsView(Arc<Outputs>);

impl Object for OutputsView {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.0.view(key.as_str()?)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let mut keys: Vec<&Arc<str>> = self.0.map.keys().collect();
        keys.sort();
        Enumerator::Values(
            keys.into_iter()
                .map(|key| Value::from(key.clone()))
                .collect(),
        )
    }
}
