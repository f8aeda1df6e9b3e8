//! Rust's log lines into the JavaScript logger: `setLogSink` installs a threadsafe function
//! as the chain's log sink (`preconf_chain::log`), so the builder's, the store's and
//! replication's lines come out of pino with the TypeScript side's, in one format.

use std::sync::Arc;

use napi::bindgen_prelude::FnArgs;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;
use preconf_chain::log::{self, Level};

#[napi(string_enum = "lowercase")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    Debug,
    Info,
    Warn,
    Error,
}

impl From<Level> for LogLevel {
    fn from(l: Level) -> Self {
        match l {
            Level::Debug => LogLevel::Debug,
            Level::Info => LogLevel::Info,
            Level::Warn => LogLevel::Warn,
            Level::Error => LogLevel::Error,
        }
    }
}

impl From<LogLevel> for Level {
    fn from(l: LogLevel) -> Self {
        match l {
            LogLevel::Debug => Level::Debug,
            LogLevel::Info => Level::Info,
            LogLevel::Warn => Level::Warn,
            LogLevel::Error => Level::Error,
        }
    }
}

/// Called as `(level, component, message, fieldsJson)`; weak, so a queued line never keeps
/// the process alive.
#[napi]
pub type LogCallback = ThreadsafeFunction<
    FnArgs<(LogLevel, String, String, String)>,
    (),
    FnArgs<(LogLevel, String, String, String)>,
    Status,
    false,
    true,
>;

/// Sends Rust's log lines at `minLevel` and above to `callback` (set it before opening a
/// node, so start-up lines reach it too). `fieldsJson` is a JSON object.
#[napi]
pub fn set_log_sink(min_level: LogLevel, callback: LogCallback) {
    let callback = Arc::new(callback);
    log::set_sink(Some((
        min_level.into(),
        Arc::new(move |level: Level, component: &str, message: &str, fields: serde_json::Value| {
            let args = (LogLevel::from(level), component.to_string(), message.to_string(), fields.to_string());
            callback.call(args.into(), ThreadsafeFunctionCallMode::NonBlocking);
        }),
    )));
}
