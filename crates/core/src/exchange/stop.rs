//! Why an exchange stopped before what it waited for.

use crate::failure::Failure;

#[derive(Debug)]
pub enum Stop {
    /// A request failed, timed out or was answered in a shape the protocol does not promise;
    /// or stdout stopped being the protocol.
    Failed(Failure),
    /// The server closed its stdout; `waiting`: the request whose answer never came.
    Eof { waiting: Option<&'static str> },
    /// Ended at once: an abort the owner did not answer with an interrupt, an interrupt's grace
    /// that ran out, or a kill.
    Cancelled,
    /// The owner's own end: what it was there for happened (its turn completed).
    Done,
}

impl Stop {
    /// How the child is to be ended after this.
    pub fn leaving(&self) -> crate::app_server::Leaving {
        use crate::app_server::Leaving;
        match self {
            Stop::Eof { .. } => Leaving::Eof,
            Stop::Cancelled => Leaving::Kill,
            Stop::Failed(_) | Stop::Done => Leaving::Done,
        }
    }
}
