//! The node's log lines from Rust. One sink for the process: the N-API layer installs one
//! that hands every line to the JavaScript logger (pino), so Rust and TypeScript lines come
//! out of the same logger, in the same format; without one (tests, tools) lines go to
//! stderr. Lines carry a level, a component, a message and structured fields.

use std::sync::{Arc, RwLock};

use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// Receives each line at or above its level: (level, component, message, fields object).
pub type Sink = dyn Fn(Level, &str, &str, Value) + Send + Sync;

struct Installed {
    min: Level,
    sink: Arc<Sink>,
}

static SINK: RwLock<Option<Installed>> = RwLock::new(None);

/// Installs the process's sink (lines below `min` are dropped before they are built into
/// anything), or removes it (`None`: stderr again).
pub fn set_sink(sink: Option<(Level, Arc<Sink>)>) {
    let mut slot = SINK.write().unwrap_or_else(|e| e.into_inner());
    *slot = sink.map(|(min, sink)| Installed { min, sink });
}

/// Whether a line at `level` goes anywhere (to skip building costly fields).
pub fn enabled(level: Level) -> bool {
    match &*SINK.read().unwrap_or_else(|e| e.into_inner()) {
        Some(s) => level >= s.min,
        None => level >= Level::Info,
    }
}

/// Logs one line. `fields` is a JSON object (`serde_json::json!({...})`).
pub fn log(level: Level, component: &str, message: &str, fields: Value) {
    let sink = match &*SINK.read().unwrap_or_else(|e| e.into_inner()) {
        Some(s) if level < s.min => return,
        Some(s) => Some(s.sink.clone()),
        None => None,
    };
    match sink {
        Some(sink) => sink(level, component, message, fields),
        None if level >= Level::Info => eprintln!("[preconf-node] {component}: {message} {fields}"),
        None => {}
    }
}

pub fn debug(component: &str, message: &str, fields: Value) {
    log(Level::Debug, component, message, fields)
}

pub fn info(component: &str, message: &str, fields: Value) {
    log(Level::Info, component, message, fields)
}

pub fn warn(component: &str, message: &str, fields: Value) {
    log(Level::Warn, component, message, fields)
}

pub fn error(component: &str, message: &str, fields: Value) {
    log(Level::Error, component, message, fields)
}
