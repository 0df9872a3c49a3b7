//! The whole turn runner fed an arbitrary server byte stream (then end of stream): it ends,
//! without panicking, with exactly one terminal event, and ends the process.
#![no_main]

use libfuzzer_sys::fuzz_target;

use rennet_codex::process::{End, ExitInfo, ServerProcess};
use rennet_codex::cancel::Cancel;
use rennet_codex::stream::EventStream;
use rennet_codex::turn::{drive, Controls};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

struct Process {
    ended: Arc<AtomicBool>,
}

impl ServerProcess for Process {
    fn pid(&self) -> u32 {
        1
    }
    async fn wait_exit(&mut self, _within: Duration) -> Option<ExitInfo> {
        Some(ExitInfo { code: Some(0), signal: None })
    }
    async fn end_tree(&mut self, _how: End) -> ExitInfo {
        self.ended.store(true, Ordering::SeqCst);
        ExitInfo { code: Some(0), signal: None }
    }
    fn stderr_tail(&self) -> Vec<String> {
        Vec::new()
    }
}

fuzz_target!(|data: &[u8]| {
    // The first byte: read-only or full access (a read-only turn has more requests), whether
    // the host aborts at once, and whether the run waits until idle (sub-agents, goals).
    let (flags, bytes) = data.split_first().map(|(&f, r)| (f, r)).unwrap_or((0, data));
    let access = if flags & 1 == 1 { "readOnly" } else { "full" };
    let until = if flags & 4 == 4 { "idle" } else { "turnCompleted" };
    let options = rennet_codex::options::parse(&format!(
        r#"{{"prompt":"p","cwd":"/w","access":"{access}","until":"{until}","requestTimeoutMs":50,"interruptGraceMs":20}}"#
    ))
    .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(async {
        let stream = EventStream::new();
        let (cancel, controls) = (Cancel::new(), Controls::new());
        if flags & 2 == 2 {
            cancel.request_abort();
        }
        let ended = Arc::new(AtomicBool::new(false));
        let process = Process { ended: ended.clone() };
        // The client's writes go nowhere; the server's bytes are all there from the start.
        let run = async {
            let terminal = tokio::time::timeout(
                Duration::from_secs(5),
                drive(bytes, tokio::io::sink(), process, &options, "/bin/codex", "t-fuzz", (&stream, &cancel, &controls)),
            )
            .await
            .expect("the runner ended");
            stream.finish(terminal);
        };
        let read = async {
            let mut events = Vec::new();
            while let Some(batch) = stream.next_batch().await {
                events.extend(rennet_codex::batch::decode(&batch).unwrap());
            }
            events
        };
        let ((), events) = tokio::join!(run, read);
        assert_eq!(events.iter().filter(|e| e["type"] == "terminal").count(), 1);
        assert_eq!(events.last().map(|e| e["type"].clone()), Some("terminal".into()));
        assert!(ended.load(Ordering::SeqCst));
    });
});
