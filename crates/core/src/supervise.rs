//! Runs a turn's or a call's work on a task of its own, so that a defect inside it (a panic)
//! still ends with the one result its caller waits for: `INTERNAL_ERROR`, never silence. The
//! child was ended when its handle dropped while unwinding.

use crate::failure::{Code, Failure, FailureSource};
use std::future::Future;

/// `work`'s output, or the failure a panic inside it amounts to.
pub async fn catching<T: Send + 'static>(work: impl Future<Output = T> + Send + 'static) -> Result<T, Failure> {
    tokio::spawn(work).await.map_err(|e| {
        let message = if e.is_panic() { panic_text(e.into_panic()) } else { e.to_string() };
        tracing::error!("defect: {message}");
        Failure::new(FailureSource::Internal, Code::InternalError, message)
    })
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "the runner panicked".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_is_an_internal_error() {
        let failure = catching(async { panic!("boom {}", 7) }).await.unwrap_err();
        assert_eq!((failure.code, failure.message.as_str()), (Code::InternalError, "boom 7"));
        assert_eq!(catching(async { 5 }).await.unwrap(), 5);
    }
}
