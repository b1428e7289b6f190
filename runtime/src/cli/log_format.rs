//! How `basalt` writes its log to stderr: `--log-format text` (the default; ANSI colour only
//! when stderr is a terminal and `NO_COLOR` is unset) or `--log-format json` (one JSON object a
//! line, for log collectors).

use std::fmt;
use std::io::IsTerminal;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// `--log-format`: how log lines are written to stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (`<time> <LEVEL> <target>: <message> key=value…`); coloured only
    /// when stderr is a terminal and `NO_COLOR` is not set.
    #[default]
    Text,
    /// One JSON object a line: `{"timestamp","level","target","message", <fields>…}` (a field
    /// named like one of the four keys is prefixed `field.`).
    Json,
}

/// Whether text logs may carry ANSI colour: only on a terminal, and never with `NO_COLOR` set
/// (any non-empty value, <https://no-color.org>).
pub fn colour_wanted(stderr_is_terminal: bool, no_color: Option<&str>) -> bool {
    stderr_is_terminal && no_color.is_none_or(str::is_empty)
}

/// Starts the global subscriber: `filter` decides what is logged, `format` how, to stderr.
pub fn init(filter: tracing_subscriber::EnvFilter, format: LogFormat) {
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match format {
        LogFormat::Text => {
            let ansi = colour_wanted(std::io::stderr().is_terminal(), std::env::var("NO_COLOR").ok().as_deref());
            builder.with_ansi(ansi).init();
        }
        LogFormat::Json => builder.with_ansi(false).event_format(JsonLines).init(),
    }
}

/// The `--log-format json` event formatter: one JSON object a line.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonLines;

/// Collects an event's fields into a JSON map.
#[derive(Default)]
struct Fields(serde_json::Map<String, serde_json::Value>);

impl Fields {
    fn put(&mut self, field: &Field, v: serde_json::Value) {
        let name = field.name();
        let key = if name != "message" && matches!(name, "timestamp" | "level" | "target") {
            format!("field.{name}")
        } else {
            name.to_string()
        };
        self.0.insert(key, v);
    }
}

impl Visit for Fields {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, serde_json::Number::from_f64(value).map_or(serde_json::Value::Null, serde_json::Value::Number));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, value.into());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, value.into());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put(field, format!("{value:?}").into());
    }
}

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, _ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        let line = json_line(&k8s_openapi::jiff::Timestamp::now().to_string(), event);
        writeln!(writer, "{line}")
    }
}

/// The JSON object of one event, stamped `timestamp` (RFC 3339).
fn json_line(timestamp: &str, event: &Event<'_>) -> String {
    let mut fields = Fields::default();
    event.record(&mut fields);
    let meta = event.metadata();
    let mut m = serde_json::Map::new();
    m.insert("timestamp".into(), timestamp.into());
    m.insert("level".into(), meta.level().as_str().into());
    m.insert("target".into(), meta.target().into());
    m.insert("message".into(), fields.0.remove("message").unwrap_or_else(|| "".into()));
    m.extend(fields.0);
    serde_json::Value::Object(m).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour_wanted(true, None));
        assert!(!colour_wanted(false, None), "stderr redirected: no escape codes");
        assert!(!colour_wanted(true, Some("1")), "NO_COLOR set: no escape codes");
        assert!(colour_wanted(true, Some("")), "an empty NO_COLOR does not count");
    }

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn log_format_json_writes_one_object_a_line_with_fields() {
        let buf = Buf::default();
        let out = buf.clone();
        let sub = tracing_subscriber::fmt().with_writer(move || out.clone()).with_ansi(false).event_format(JsonLines).finish();
        tracing::subscriber::with_default(sub, || {
            tracing::warn!(pod = "ns/p", count = 3, level = "x", "bind failed");
        });
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "{text}");
        let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(v["level"], "WARN");
        assert_eq!(v["message"], "bind failed");
        assert_eq!(v["pod"], "ns/p");
        assert_eq!(v["count"], 3);
        assert_eq!(v["field.level"], "x", "a field named like a key does not overwrite it");
        assert!(v["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')), "{v}");
        assert!(!text.contains('\u{1b}'), "no escape codes");
    }
}
