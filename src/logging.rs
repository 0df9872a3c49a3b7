//! Logging through `tracing`. Off by default. `RENNET_LOG` (an `EnvFilter` directive such as
//! `rennet_codex=debug`, read when the addon loads) writes records to stderr; `setLogger`
//! hands them to a JavaScript callback instead. The callback is fed through a bounded,
//! non-blocking queue: when JavaScript falls behind, records are dropped and counted, so a
//! slow logger never holds up a turn.
//!
//! Call sites log methods, ids, statuses and codes, never prompts, parameters, argv or
//! environment values: those can carry tokens and header values.

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{OnceLock, RwLock};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{filter, fmt, reload, EnvFilter, Registry};

/// The variable holding the stderr filter.
const ENV_FILTER: &str = "RENNET_LOG";
/// `json` switches the stderr format from text lines to one JSON object per line.
const ENV_FORMAT: &str = "RENNET_LOG_FORMAT";
/// The filter of a JavaScript logger when neither `setLogger` nor `RENNET_LOG` names one.
const DEFAULT_JS_FILTER: &str = "rennet_codex=info";
/// Records waiting for the JavaScript thread; beyond this they are dropped.
const JS_QUEUE: usize = 1024;

/// `(recordJson: string) => void`, weak: an installed logger does not keep Node alive.
type JsLogger = ThreadsafeFunction<String, (), String, Status, false, true, JS_QUEUE>;

static FILTER: OnceLock<reload::Handle<EnvFilter, Registry>> = OnceLock::new();
static JS: RwLock<Option<JsLogger>> = RwLock::new(None);
static JS_ACTIVE: AtomicBool = AtomicBool::new(false);
static DROPPED: AtomicU64 = AtomicU64::new(0);

// Runs when the addon loads (a library constructor), so `RENNET_LOG` needs no call from JS.
#[cfg(not(test))]
#[napi_derive::module_init]
fn init_from_env() {
    let configured = std::env::var(ENV_FILTER).ok().filter(|s| !s.trim().is_empty());
    let filter = match configured.as_deref().map(EnvFilter::try_new) {
        Some(Ok(filter)) => filter,
        Some(Err(e)) => {
            // Nothing can throw while the addon loads; one line says why logs stay off.
            eprintln!("@rennet/codex: {ENV_FILTER} is not a valid filter ({e}); logging is off");
            EnvFilter::new("off")
        }
        None => EnvFilter::new("off"),
    };
    install(filter);
}

fn install(filter: EnvFilter) {
    let (filter, handle) = reload::Layer::new(filter);
    let json = std::env::var(ENV_FORMAT).is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    let to_stderr = filter::filter_fn(|_| !JS_ACTIVE.load(Ordering::Relaxed));
    let stderr: Box<dyn Layer<_> + Send + Sync> = if json {
        fmt::layer().json().flatten_event(true).with_writer(std::io::stderr).with_filter(to_stderr).boxed()
    } else {
        fmt::layer().with_ansi(false).with_writer(std::io::stderr).with_filter(to_stderr).boxed()
    };
    let subscriber = Registry::default().with(filter).with(stderr).with(JsLayer);
    // Another copy of this crate in the same process may own the global subscriber; then its
    // logging applies and this one stays silent.
    if tracing::subscriber::set_global_default(subscriber).is_ok() {
        let _ = FILTER.set(handle);
    }
}

/// Sends log records to `callback` (the JSON text of `{time, level, target, message, fields,
/// dropped?}`) instead of stderr, filtered by `filter` (`EnvFilter` syntax; default:
/// `RENNET_LOG`, else `rennet_codex=info`). `null` removes the callback: records go back to
/// stderr when `RENNET_LOG` is set and are off otherwise. An invalid filter throws
/// `InvalidArg` naming `options.filter`.
#[napi(
    catch_unwind,
    ts_args_type = "callback: ((recordJson: string) => void) | null, filter?: string | undefined | null"
)]
pub fn set_logger(callback: Option<Function<'_, String, ()>>, filter: Option<String>) -> Result<()> {
    let Some(handle) = FILTER.get() else {
        return Err(Error::new(
            Status::GenericFailure,
            "logging is owned by another copy of @rennet/codex in this process",
        ));
    };
    let from_env = std::env::var(ENV_FILTER).ok().filter(|s| !s.trim().is_empty());
    let (directive, is_env) = match (callback.is_some(), filter, from_env) {
        (true, Some(given), _) => (given, false),
        (_, _, Some(env)) => (env, true),
        (true, None, None) => (DEFAULT_JS_FILTER.to_string(), false),
        (false, _, None) => ("off".to_string(), false),
    };
    let new_filter = match EnvFilter::try_new(&directive) {
        Ok(parsed) => parsed,
        // A broken RENNET_LOG was already reported when the addon loaded.
        Err(_) if is_env => EnvFilter::new("off"),
        Err(e) => {
            return Err(Error::new(
                Status::InvalidArg,
                format!("options.filter {directive:?} is not a valid log filter: {e}"),
            ))
        }
    };
    let logger = match callback {
        Some(f) => Some(
            f.build_threadsafe_function()
                .weak::<true>()
                .callee_handled::<false>()
                .max_queue_size::<JS_QUEUE>()
                .build()?,
        ),
        None => None,
    };
    let mut slot = JS.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    JS_ACTIVE.store(logger.is_some(), Ordering::Relaxed);
    *slot = logger;
    drop(slot);
    DROPPED.store(0, Ordering::Relaxed);
    handle
        .reload(new_filter)
        .map_err(|e| Error::new(Status::GenericFailure, format!("the log filter could not be changed: {e}")))
}

/// Forwards each enabled event to the JavaScript logger, if one is installed, with the fields
/// of the spans it happened in (a turn's key, pid, thread and turn ids).
struct JsLayer;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for JsLayer {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            let mut fields = FieldMap::default();
            attrs.record(&mut fields);
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(fields) = span.extensions_mut().get_mut::<FieldMap>() {
                values.record(fields);
            }
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if !JS_ACTIVE.load(Ordering::Relaxed) {
            return;
        }
        let slot = JS.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        let Some(logger) = slot.as_ref() else { return };
        let carried = DROPPED.swap(0, Ordering::Relaxed);
        let mut context = Map::new();
        for span in ctx.event_scope(event).into_iter().flat_map(|scope| scope.from_root()) {
            if let Some(fields) = span.extensions().get::<FieldMap>() {
                context.extend(fields.fields.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        let record = record_json(event, context, carried);
        if logger.call(record, ThreadsafeFunctionCallMode::NonBlocking) != Status::Ok {
            // Queue full (JavaScript is behind) or closing: this record is dropped too, and the
            // count it carried goes to the next one that gets through.
            DROPPED.fetch_add(carried + 1, Ordering::Relaxed);
        }
    }
}

/// The record of `event`; `context` holds the fields of its spans, which its own override.
fn record_json(event: &Event<'_>, context: Map<String, Value>, dropped: u64) -> String {
    let meta = event.metadata();
    let mut fields = FieldMap { message: None, fields: context };
    event.record(&mut fields);
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0);
    let mut record = serde_json::json!({
        "time": time,
        "level": meta.level().as_str().to_ascii_lowercase(),
        "target": meta.target(),
        "message": fields.message.unwrap_or_default(),
        "fields": Value::Object(fields.fields),
    });
    if dropped > 0 {
        record["dropped"] = dropped.into();
    }
    record.to_string()
}

#[derive(Default)]
struct FieldMap {
    message: Option<String>,
    fields: Map<String, Value>,
}

impl FieldMap {
    fn put(&mut self, field: &Field, value: Value) {
        if field.name() == "message" {
            self.message = Some(match value {
                Value::String(s) => s,
                other => other.to_string(),
            });
        } else {
            self.fields.insert(field.name().to_string(), value);
        }
    }
}

impl Visit for FieldMap {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, Value::String(format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, Value::String(value.to_string()));
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
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, value.into());
    }
}
