//! The frame decoder over arbitrary bytes: no panic, no endless loop, at most one error.
#![no_main]

use libfuzzer_sys::fuzz_target;

use rennet_codex::transport::{FrameReader, ReadItem};

fuzz_target!(|data: &[u8]| {
    // The first byte picks a small frame limit, so that the limit is exercised too.
    let (limit, bytes) = match data.split_first() {
        Some((&b, rest)) => (16 + b as usize * 8, rest),
        None => (16, data),
    };
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        let mut reader = FrameReader::with_limit(bytes, limit);
        for _ in 0..=bytes.len() + 1 {
            match reader.next().await {
                Ok(ReadItem::Eof) | Err(_) => return,
                Ok(_) => {}
            }
        }
        panic!("the reader did not reach the end of its input");
    });
});
